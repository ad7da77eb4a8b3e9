"""Coverage axes aimed at what the traces show: failing tools and observed faults move forward.

The axes start from the grid's own defaults for this agent (``generate.grid.default_axes``), so
every value is one the writer and the mock world understand; traces only reorder them. On the
``tool`` axis the tools with observed failures come first, then the other tools the traces
touched; ``broaden=False`` drops the tools they never touched (the specials such as
``unrelated`` stay). An observed fault chip moves the axis value that reproduces it to the front
of its axis (``FAULT_TO_AXIS``); fault and world axes always keep their clean value, right after
the moved values, because contrast needs passing rows too.

>>> tools = [{"name": "get_order"}, {"name": "refund"}]
>>> rows = [{"prompt": "where is 4412", "final_text": "", "steps": [{"tool": "get_order",
...     "arguments": {"order_id": "4412"}, "result": {"error": "timeout"}}]}]
>>> dims = dimensions_from_traces(rows, tools)
>>> dims["tool"][0], dims["condition"][:2]
('get_order', ['timeout', 'success'])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from whileai.errors import ConfigError
from whileai.simulations.agent.spec import agent_spec
from whileai.simulations.generate.grid import default_axes
from whileai.simulations.ingest.harness import tools_from_traces
from whileai.simulations.ingest.mining import as_trace_rows, mine_traces

__all__ = [
    "CLEAN_VALUES",
    "FAULT_TO_AXIS",
    "SPECIAL_TOOLS",
    "aim_axes",
    "dimensions_from_traces",
]

# An observed fault chip -> (axis, value) that reproduces it in the grid.
FAULT_TO_AXIS: Mapping[str, tuple[str, str]] = {
    "timeout": ("condition", "timeout"),
    "permission_denied": ("condition", "permission_denied"),
    "deny": ("condition", "permission_denied"),
    "denied": ("condition", "permission_denied"),
    "forbidden": ("condition", "permission_denied"),
    "malformed": ("condition", "malformed"),
    "junk": ("condition", "malformed"),
    "stale": ("condition", "stale"),
    "not_found": ("condition", "not_found"),
    "missing": ("state", "missing"),
    "already_handled": ("state", "already_handled"),
    "duplicate": ("state", "duplicate"),
    "partially_done": ("state", "partially_done"),
}
# The value of each fault/world axis that means "nothing went wrong".
CLEAN_VALUES: Mapping[str, str] = {
    "condition": "success",
    "state": "exists",
    "history": "first_visit",
}
SPECIAL_TOOLS = ("unrelated", "multi_tool")


def _front(values: Sequence[str], moved: Sequence[str], clean: str | None) -> list[str]:
    head = [v for v in moved if v in values]
    if clean is not None and clean in values and clean not in head:
        head.append(clean)
    return head + [v for v in values if v not in head]


def aim_axes(
    base: Mapping[str, Sequence[str]],
    mined: Mapping[str, Any],
    *,
    broaden: bool = True,
    fault_to_axis: Mapping[str, tuple[str, str]] | None = None,
) -> tuple[dict[str, list[str]], dict[str, Any]]:
    """Reorder ``base`` axes by ``mined`` (``mine_traces`` output); return ``(axes, aiming)``.

    ``aiming`` says exactly what moved: ``emphasis`` (axis -> values moved to the front),
    ``dropped_tools`` (``broaden=False``), ``unknown_tools`` (in the traces, not in the tools)
    and ``unmapped_faults`` (chips with no axis value to reproduce them).

    >>> axes, aiming = aim_axes({"tool": ["a", "b", "unrelated"], "condition": ["success",
    ...     "timeout"]}, {"failing_tools": ["b"], "touched_tools": ["b"], "faults": {}},
    ...     broaden=False)
    >>> axes["tool"], aiming["emphasis"], aiming["dropped_tools"]
    (['b', 'unrelated'], {'tool': ['b']}, ['a'])
    """
    mapping = FAULT_TO_AXIS if fault_to_axis is None else fault_to_axis
    axes = {name: list(values) for name, values in base.items()}
    emphasis: dict[str, list[str]] = {}
    tools = axes.get("tool", [])
    known = [t for t in tools if t not in SPECIAL_TOOLS]
    failing = [t for t in mined.get("failing_tools", []) if t in known]
    touched = [t for t in mined.get("touched_tools", []) if t in known and t not in failing]
    unknown = sorted(
        {*mined.get("failing_tools", []), *mined.get("touched_tools", [])} - set(tools)
    )
    dropped: list[str] = []
    if "tool" in axes:
        rest = [t for t in known if t not in failing and t not in touched]
        if not broaden and (failing or touched):
            dropped = rest
            rest = []
        axes["tool"] = failing + touched + rest + [t for t in tools if t in SPECIAL_TOOLS]
        if failing or touched:
            emphasis["tool"] = failing + touched
    moved: dict[str, list[str]] = {}
    unmapped: list[str] = []
    for chip in mined.get("faults", {}):
        target = mapping.get(chip)
        if target is None or target[0] not in axes or target[1] not in axes[target[0]]:
            unmapped.append(chip)
            continue
        axis, value = target
        if value not in moved.setdefault(axis, []):
            moved[axis].append(value)
    for axis, values in moved.items():
        axes[axis] = _front(axes[axis], values, CLEAN_VALUES.get(axis))
        emphasis[axis] = values
    aiming = {
        "emphasis": emphasis,
        "dropped_tools": dropped,
        "unknown_tools": unknown,
        "unmapped_faults": unmapped,
    }
    return axes, aiming


def dimensions_from_traces(
    rows: Any,
    tools: Sequence[Any] | None,
    policy: str = "",
    broaden: bool = True,
    fault_to_axis: Mapping[str, tuple[str, str]] | None = None,
) -> dict[str, list[str]]:
    """Coverage axes (axis -> ordered values) aimed at the behaviours seen in ``rows``.

    Pass the result as ``dimensions=`` to the grid; ``simulate(traces=...)`` does this for you.
    With no ``tools`` the tool surface is read off the traces (``tools_from_traces``).

    Raises:
        ConfigError: ``fault_to_axis`` is not a mapping of chip -> (axis, value).
    """
    if fault_to_axis is not None and not all(
        isinstance(v, tuple | list) and len(v) == 2 for v in dict(fault_to_axis).values()
    ):
        raise ConfigError(
            "fault_to_axis: expected a mapping of fault chip -> (axis, value), for example "
            "{'timeout': ('condition', 'timeout')}"
        )
    data = as_trace_rows(rows)
    mined = mine_traces(data)
    if not tools:
        tools = tools_from_traces(data)
    base = default_axes(agent_spec(tools=list(tools), system_prompt=policy))
    axes, _ = aim_axes(
        base,
        mined,
        broaden=broaden,
        fault_to_axis=None if fault_to_axis is None else {
            k: (str(v[0]), str(v[1])) for k, v in fault_to_axis.items()
        },
    )
    return axes
