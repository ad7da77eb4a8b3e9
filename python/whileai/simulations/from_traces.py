"""``simulate_from_traces``: ``simulate(agent, traces=...)`` for callers who hold graded
telemetry and little else; the tool surface is read off the traces when none is given.

It sits above ``simulation.py`` (which imports ``ingest``), so ``ingest`` never imports
``simulate``.
"""

from __future__ import annotations

from typing import Any

from whileai.errors import SpecError
from whileai.simulations.ingest.harness import tools_from_traces
from whileai.simulations.ingest.mining import as_trace_rows
from whileai.simulations.run.config import Mode
from whileai.simulations.simulation import simulate

__all__ = ["simulate_from_traces"]


def simulate_from_traces(
    traces: Any,
    agent: Any = None,
    tools: list[dict[str, Any]] | None = None,
    policy: str = "",
    mode: Mode = "rl",
    **kwargs: Any,
) -> Any:
    """``simulate(agent, traces=...)`` for callers who start from the traces.

    With no ``tools`` (and no ``spec=``) the tool surface is read off the traces
    (``tools_from_traces``), so graded telemetry alone is enough to start. Every other keyword
    goes to ``simulate`` unchanged (unknown ones raise ``TypeError`` there).

    Raises:
        SpecError: no tools were given and the traces contain no tool call, and no policy either.
    """
    rows = as_trace_rows(traces)
    if tools is None and "spec" not in kwargs:
        tools = tools_from_traces(rows)
        if not tools and not policy.strip():
            raise SpecError(
                "simulate_from_traces: the traces contain no tool calls and no tools= or "
                "policy= was given; pass tools=[...] (OpenAI function shape) or policy='...'"
            )
    if "system_prompt" in kwargs:
        policy = str(kwargs.pop("system_prompt") or policy)
    return simulate(
        agent, tools=tools, system_prompt=policy or None, traces=rows, mode=mode, **kwargs
    )
