"""The leakage gate ``simulate(traces=...)`` applies when it starts from traces
(``simulations.simulation.simulate_from_traces`` is the traces-first call on top of it).

Source traces shape the grid and never enter the generated rows: a generated row whose prompt is
an exact copy of a source prompt, or sits at hash-embedding cosine >= 0.9 from one, is dropped
and counted (``clean.leakage``, the same check ``leakage_report`` runs afterwards).

>>> kept, report = exclude_sources([{"prompt": "where is my order 4412"},
...     {"prompt": "cancel my plan please"}], [{"prompt": "Where is my order 4412?"}])
>>> [r["prompt"] for r in kept], report["dropped"]
(['cancel my plan please'], 1)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from whileai.simulations.clean.leakage import drop_leaky_rows, leakage_report
from whileai.simulations.ingest.mining import as_trace_rows

__all__ = ["LEAKAGE_THRESHOLD", "SourceCopyCheck", "exclude_sources", "gate_run"]

LEAKAGE_THRESHOLD = 0.9


class SourceCopyCheck:
    """Is a candidate ask a copy of a source trace's prompt? ``"exact"``, ``"near"`` or None.

    The same test as the final gate (``clean.leakage.leakage_report``: normalised exact match,
    or hash-embedding cosine >= ``threshold``), asked before a situation is played so the run
    replaces the copy and its budget stays full. ``many`` screens a batch in one pass.

    >>> check = SourceCopyCheck([{"prompt": "where is my order 4412"}])
    >>> check("Where is my order 4412?"), check("cancel my subscription")
    ('exact', None)
    """

    def __init__(self, sources: Any, threshold: float = LEAKAGE_THRESHOLD) -> None:
        self.sources = [r for r in as_trace_rows(sources) if isinstance(r.get("prompt"), str)]
        self.threshold = threshold

    def many(self, texts: Sequence[str]) -> list[str | None]:
        """One verdict per text."""

        verdicts: list[str | None] = [None] * len(texts)
        if not self.sources or not texts:
            return verdicts
        report = leakage_report([{"prompt": t} for t in texts], self.sources,
                                threshold=self.threshold, examples=None)
        for hit in report["leaky"]:
            verdicts[hit["index"]] = "exact" if hit["exact"] else "near"
        return verdicts

    def __call__(self, text: str) -> str | None:
        return self.many([text])[0]


def exclude_sources(
    rows: Sequence[dict[str, Any]], sources: Any, threshold: float = LEAKAGE_THRESHOLD
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Drop generated rows that copy or near-copy a source trace's prompt; count them.

    Returns ``(kept, report)`` with ``dropped``, ``n_exact``, ``n_near``, ``threshold`` and
    ``n_sources``. An empty ``sources`` keeps every row.
    """

    source_rows = as_trace_rows(sources)
    if not source_rows or not rows:
        return list(rows), {"dropped": 0, "n_exact": 0, "n_near": 0,
                            "threshold": threshold, "n_sources": len(source_rows)}
    kept, leak = drop_leaky_rows(list(rows), source_rows, threshold=threshold)
    exact = int(leak.get("n_exact", 0))
    return kept, {
        "dropped": int(leak["dropped"]),
        "n_exact": exact,
        "n_near": int(leak["dropped"]) - exact,
        "threshold": threshold,
        "n_sources": len(source_rows),
    }


def gate_run(
    trajectories: Sequence[dict[str, Any]],
    search: dict[str, Any],
    traces: Any,
    output: Any = None,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The leakage gate of ``simulate(traces=...)``: drop source copies, say so in ``search``.

    ``search["traces"]`` gets ``n_traces`` and the ``leakage`` counts: ``rejected_before_play``
    (copies the situation picker refused, so never played) plus what this final safety net
    ``dropped`` (normally 0); ``n_exact``/``n_near`` count both. When rows were dropped and the
    run streamed to ``output``, the rows stay in that append-only file and a warning says so.
    """
    kept, leakage = exclude_sources(trajectories, traces)
    # copies the run already refused before playing them (play/source.py) count here too
    rejected = {kind: int(search.get(f"trace_copies_{kind}", 0)) for kind in ("exact", "near")}
    search = {k: v for k, v in search.items()
              if k not in ("trace_copies_exact", "trace_copies_near")}
    leakage["rejected_before_play"] = rejected["exact"] + rejected["near"]
    leakage["n_exact"] += rejected["exact"]
    leakage["n_near"] += rejected["near"]
    search = {**search, "traces": {"n_traces": leakage.pop("n_sources"), "leakage": leakage}}
    if leakage["dropped"]:
        search["rows"] = len(kept)
        if output is not None:  # the file is append-only: say what it still holds
            search["traces"]["leakage"]["left_in_output"] = leakage["dropped"]
            search.setdefault("warnings", []).append(
                f"{leakage['dropped']} row(s) that copy a source trace were dropped from the run"
                f" but stay in {output} (the output file is never rewritten); drop them with "
                "ingest.from_traces.exclude_sources before training")
    return kept, search
