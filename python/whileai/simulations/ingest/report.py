"""Read this before spending a budget: what the traces hold and what they will aim the grid at.

>>> report = trace_report([{"prompt": "where is 4412", "steps": [{"tool": "get_order",
...     "arguments": {"order_id": "4412"}, "result": {"error": "timeout"}}], "reward": 0}],
...     tools=[{"name": "get_order"}, {"name": "refund"}])
>>> report["n_rows"], report["faults_observed"], report["emphasis"]["condition"]
(1, {'timeout': 1}, ['timeout'])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from whileai.simulations.agent.spec import agent_spec
from whileai.simulations.generate.grid import default_axes
from whileai.simulations.ingest.dimensions import aim_axes
from whileai.simulations.ingest.harness import tools_from_traces
from whileai.simulations.ingest.mining import mine_traces, opening_share
from whileai.simulations.ingest.otel import is_otel_source, read_otel
from whileai.simulations.ingest.traces import normalize_traces
from whileai.simulations.ingest.unbuilt import REASONS, explain

__all__ = ["format_trace_report", "trace_report"]


def trace_report(
    traces: Any, tools: Sequence[Any] | None = None, policy: str = ""
) -> dict[str, Any]:
    """What ``traces`` contain and which grid values they move forward (a JSON-able dict).

    ``traces`` may also be OpenTelemetry spans (an OTLP/JSON export or the SDK's console JSON,
    a file or a dict): their rows are reported, and ``unbuilt`` counts the conversations that
    gave none by reason (``without_content``, ``not_genai``, ``merged``), with what to turn on
    among the ``warnings``.

    Counts: traces in, rows kept, rows dropped (and why), unreadable JSONL lines, rewards that
    were not a clean 0/1, graded / ungraded / advisory-only labels, tool calls and faults
    observed, calls that never got a result. With ``tools`` (and optionally ``policy``) the
    ``emphasis`` is computed against that tool surface; without, against the tools the traces
    show (``tools_source`` says which).

    Raises:
        RowError: ``traces`` is neither a JSONL path nor an iterable of rows.
    """
    unbuilt: dict[str, int] = {}
    if is_otel_source(traces):  # spans: rows first, and what gave none, by reason
        otel = read_otel(traces)
        unbuilt = {k: otel.counts[k] for k in REASONS if otel.counts.get(k)}
        traces = list(otel.rows)
    load = normalize_traces(traces)
    rows = list(load.rows)
    mined = mine_traces(rows)
    source = "given" if tools else "traces"
    surface = list(tools) if tools else tools_from_traces(rows)
    aiming: dict[str, Any] = {"emphasis": {}, "dropped_tools": [], "unknown_tools": [],
                              "unmapped_faults": list(mined["faults"])}
    if surface or policy.strip():
        base = default_axes(agent_spec(tools=surface, system_prompt=policy))
        _, aiming = aim_axes(base, mined)
    counts = load.counts()
    warnings: list[str] = []
    if unbuilt:
        warnings.append(explain(unbuilt))
    if load.skipped_lines:
        warnings.append(f"{load.skipped_lines} unreadable JSONL line(s) skipped")
    if load.rewards_rejected:
        warnings.append(
            f"{load.rewards_rejected} reward(s) were not a clean 0/1 and were set aside "
            "(kept as raw_reward)"
        )
    if mined["advisory_labels"]:
        warnings.append(
            f"{mined['advisory_labels']} row(s) carry only an advisory qwen_reward; "
            "those labels steer the mining"
        )
    if counts["steps"]["unpaired_calls"] or mined["unanswered_calls"]:
        warnings.append(
            f"{mined['unanswered_calls']} tool call(s) have no result in the trace"
        )
    if aiming["unknown_tools"]:
        warnings.append(
            "tools in the traces but not in tools=: " + ", ".join(aiming["unknown_tools"])
        )
    if rows and not mined["n_flaw_rows"]:
        warnings.append("no faults and no 0 labels: the traces cannot aim at a failure")
    return {
        "n_in": load.n_in,
        "n_rows": len(rows),
        "dropped": load.dropped,
        "drop_reasons": counts["drop_reasons"],
        "skipped_lines": load.skipped_lines,
        "problems": counts["problems"],
        "rewards_rejected": load.rewards_rejected,
        "graded": mined["graded"],
        "ungraded": mined["ungraded"],
        "advisory_labels": mined["advisory_labels"],
        "passed": mined["passed"],
        "failed": mined["failed"],
        "tools_observed": mined["tool_calls"],
        "faults_observed": mined["faults"],
        "fault_sites": mined["fault_sites"],
        "failing_tools": mined["failing_tools"],
        "n_flaw_rows": mined["n_flaw_rows"],
        "unanswered_calls": mined["unanswered_calls"],
        "steps": counts["steps"],
        "opening_share": opening_share(rows),
        "tools_source": source,
        "emphasis": aiming["emphasis"],
        "dropped_tools": aiming["dropped_tools"],
        "unknown_tools": aiming["unknown_tools"],
        "unmapped_faults": aiming["unmapped_faults"],
        "unbuilt": unbuilt,
        "warnings": warnings,
    }


def _listing(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} x{v}" for k, v in counts.items()) or "none"


def format_trace_report(report: dict[str, Any]) -> str:
    """The trace report as a short text block, with the aiming said in plain words.

    >>> print(format_trace_report(trace_report([{"prompt": "hi"}])).splitlines()[0])
    traces: 1 in, 1 kept, 0 dropped
    """
    lines = [
        f"traces: {report['n_in']} in, {report['n_rows']} kept, {report['dropped']} dropped"
        + (f" ({_listing(report['drop_reasons'])})" if report.get("drop_reasons") else ""),
        f"labels: {report['graded']} graded, {report['advisory_labels']} advisory only, "
        f"{report['ungraded']} ungraded; {report['passed']} pass, {report['failed']} fail",
        f"tools observed: {_listing(report['tools_observed'])}",
        f"faults observed: {_listing(report['faults_observed'])}",
        f"flaw rows (fault or 0 label): {report['n_flaw_rows']}",
    ]
    emphasis = report.get("emphasis") or {}
    if emphasis:
        moved = "; ".join(f"{axis} -> {', '.join(vals)}" for axis, vals in emphasis.items())
        against = "the given tools" if report["tools_source"] == "given" else (
            "the tools read off the traces")
        lines.append(f"aim (against {against}): moves forward {moved}")
    else:
        lines.append("aim: nothing moves forward; the grid stays as it is without traces")
    if report.get("dropped_tools"):
        lines.append("not simulated (broaden=False): " + ", ".join(report["dropped_tools"]))
    if report.get("unmapped_faults"):
        lines.append("faults with no grid value: " + ", ".join(report["unmapped_faults"]))
    lines.extend(f"warning: {w}" for w in report.get("warnings", []))
    return "\n".join(lines)
