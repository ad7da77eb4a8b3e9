"""The coverage grid: world and human axes, pairwise-covered, one block of cells per policy clause.

A task's identity is its cell plus its visit number; ``scenario_id`` hashes exactly that, so it
is the same in every process and run. Clause cells hash the clause text, never its position, so
editing one clause changes only that clause's tasks.

>>> from whileai.simulations.agent.spec import agent_spec
>>> grid = build_grid(agent_spec(tools=[{"name": "get_order"}], system_prompt="Be kind."))
>>> grid.cells[0].value("condition"), grid.cells[0].value("stance")
('success', 'ordinary')
>>> scenario_id(grid.cells[0], 0) == scenario_id(grid.cells[0], 0)
True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from whileai import _backend
from whileai.errors import ConfigError
from whileai.simulations.agent.spec import AgentSpec, policy_clauses

__all__ = [
    "AXES",
    "Cell",
    "Grid",
    "build_grid",
    "default_axes",
    "pairwise_cover",
    "scenario_id",
]

CONDITIONS = ("success", "timeout", "permission_denied", "malformed", "stale", "not_found")
STATES = ("exists", "missing", "already_handled", "duplicate", "partially_done")
HISTORIES = ("first_visit", "prior_failure", "prior_partial_action", "return_visit")
INTENTS = ("do_task", "check_status", "ask_how", "change_request", "undo", "complain")
STANCES = (
    "ordinary",
    "ambiguous",
    "adversarial",
    "hurried",
    "mistaken",
    "overreaching",
    "off_topic",
)
PERSONAS = ("first_time", "returning", "busy_professional", "expert", "non_native", "elderly")
TONES = ("neutral", "polite", "impatient", "frustrated", "curt", "friendly")
TYPING = ("standard", "lowercase", "typos", "clipped")

WORLD_AXES = ("tool", "clause", "condition", "state", "history")
HUMAN_AXES = ("intent", "stance", "persona", "tone", "typing")
AXES = WORLD_AXES + HUMAN_AXES
NO_CLAUSE = "none"
# The axes the pairwise block covers (clauses live in their own blocks).
_COVERED = tuple(a for a in AXES if a != "clause")


@dataclass(frozen=True, slots=True, kw_only=True)
class Cell:
    """One cell of the grid: a value per axis, which block made it, and the clause text."""

    values: tuple[tuple[str, str], ...]
    block: str = "pairwise"
    clause: str = ""
    seed_text: str = ""
    _lookup: dict[str, str] = field(init=False, repr=False, compare=False)
    _key: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        parts = [f"{a}={v}" for a, v in self.values if a != "clause"]
        if self.clause:
            parts.append(f"clause#{_backend.hash64(self.clause):016x}")
        if self.seed_text:
            parts.append(f"seed#{_backend.hash64(self.seed_text):016x}")
        object.__setattr__(self, "_lookup", dict(self.values))
        object.__setattr__(self, "_key", "|".join(parts))

    def value(self, axis: str) -> str:
        """Return this cell's value on ``axis`` (``""`` when the axis is absent)."""
        return self._lookup.get(axis, "")

    @property
    def key(self) -> str:
        """The canonical identity string the scenario id hashes."""
        return self._key

    @property
    def edge_level(self) -> int:
        """How many axes sit off their ordinary value (0 = the plainest ask)."""
        plain = {"condition": "success", "state": "exists", "history": "first_visit",
                 "stance": "ordinary", "typing": "standard"}
        level = sum(1 for a, v in self.values if a in plain and v != plain[a])
        return level + (1 if self.clause else 0)

    def dimensions(self) -> dict[str, str]:
        """The cell as a plain dict (for ``scenario_dimensions``)."""
        dims = dict(self.values)
        dims["block"] = self.block
        return dims


@dataclass(frozen=True, slots=True, kw_only=True)
class Grid:
    """The axes (ordered values) and the cells, ordinary asks first."""

    axes: tuple[tuple[str, tuple[str, ...]], ...]
    cells: tuple[Cell, ...]
    clauses: tuple[str, ...] = ()

    def __len__(self) -> int:
        return len(self.cells)


def scenario_id(cell: Cell, visit: int, phrasing: int = 0) -> str:
    """The stable id of one task: ``sc-`` + 10 hex digits of the cell, visit and phrasing."""
    return "sc-" + format(_backend.hash64(f"{cell.key}|v{visit}|p{phrasing}"), "016x")[:10]


def default_axes(spec: AgentSpec) -> dict[str, tuple[str, ...]]:
    """The axis values this agent's tools and policy give, before any override."""
    tools = spec.tool_names + ("unrelated",) + (("multi_tool",) if len(spec.tools) > 1 else ())
    return {
        "tool": tools,
        "clause": (NO_CLAUSE, *policy_clauses(spec.policy)),
        "condition": CONDITIONS,
        "state": STATES,
        "history": HISTORIES,
        "intent": INTENTS,
        "stance": STANCES,
        "persona": PERSONAS,
        "tone": TONES,
        "typing": TYPING,
    }


def pairwise_cover(axes: Sequence[tuple[str, Sequence[str]]]) -> list[tuple[str, ...]]:
    """Rows covering every pair of values of every two axes (greedy, deterministic).

    >>> rows = pairwise_cover([("a", "xy"), ("b", "xy"), ("c", "xy")])
    >>> len(rows) <= 6 and {(r[0], r[1]) for r in rows} == {("x", "x"), ("x", "y"),
    ...     ("y", "x"), ("y", "y")}
    True
    """
    sizes = [len(values) for _, values in axes]
    n = len(axes)
    if n == 0 or 0 in sizes:
        return []
    uncovered: set[tuple[int, int, int, int]] = {
        (i, a, j, b)
        for i in range(n)
        for j in range(i + 1, n)
        for a in range(sizes[i])
        for b in range(sizes[j])
    }
    rows: list[tuple[int, ...]] = []
    if n == 1:
        rows = [(a,) for a in range(sizes[0])]
    while uncovered:
        i, a, j, b = min(uncovered)
        chosen: dict[int, int] = {i: a, j: b}
        for axis in range(n):
            if axis in chosen:
                continue
            best, best_gain = 0, -1
            for value in range(sizes[axis]):
                gain = sum(
                    1
                    for other, ov in chosen.items()
                    if (min(axis, other), value if axis < other else ov, max(axis, other),
                        ov if axis < other else value) in uncovered
                )
                if gain > best_gain:
                    best, best_gain = value, gain
            chosen[axis] = best
        row = tuple(chosen[k] for k in range(n))
        for x in range(n):
            for y in range(x + 1, n):
                uncovered.discard((x, row[x], y, row[y]))
        rows.append(row)
    return [tuple(axes[k][1][v] for k, v in enumerate(row)) for row in rows]


def _clause_tools(clause: str, tools: Sequence[str], descriptions: Mapping[str, str]) -> list[str]:
    words = set(_backend.tokenize(clause))
    scored = []
    for t in tools:
        tool_words = set(_backend.tokenize(t.replace("_", " ") + " " + descriptions.get(t, "")))
        overlap = len(words & tool_words - _STOP)
        if overlap:
            scored.append((-overlap, t))
    return [t for _, t in sorted(scored)[:2]] or list(tools[:1])


_STOP = frozenset(
    ["a", "an", "the", "to", "of", "and", "or", "for", "in", "on", "by", "with", "is", "be",
     "are", "you", "your", "it", "this", "that"]
)


def build_grid(
    spec: AgentSpec, dimensions: Mapping[str, Sequence[str]] | None = None
) -> Grid:
    """Build the coverage grid for ``spec``; ``dimensions`` overrides axis values (ordered).

    Raises:
        ConfigError: ``dimensions`` names an unknown axis or gives an axis no values.
    """
    axes = default_axes(spec)
    for axis, values in (dimensions or {}).items():
        if axis not in axes:
            raise ConfigError(
                f"dimensions: unknown axis {axis!r}; valid axes are {', '.join(AXES)}"
            )
        vals = tuple(dict.fromkeys(str(v) for v in values))
        if not vals:
            raise ConfigError(f"dimensions[{axis!r}] is empty: give at least one value")
        axes[axis] = vals
    covered = [(a, axes[a]) for a in _COVERED]
    cells: list[Cell] = []

    def make(
        values: Mapping[str, str], block: str, clause: str = "", seed_text: str = ""
    ) -> Cell:
        clause_value = clause[:80] if clause else NO_CLAUSE
        ordered = tuple(
            (a, clause_value if a == "clause" else values.get(a, axes[a][0])) for a in AXES
        )
        return Cell(values=ordered, block=block, clause=clause, seed_text=seed_text)

    for i, text in enumerate(spec.situations):
        cells.append(make({"tool": axes["tool"][0]}, "seed", seed_text=text + f"#{i}"))
    real_tools = [t for t in axes["tool"] if t not in ("unrelated", "multi_tool")] or [
        axes["tool"][0]
    ]
    plain = {"condition": axes["condition"][0], "state": axes["state"][0],
             "history": axes["history"][0], "stance": axes["stance"][0],
             "typing": axes["typing"][0]}
    for t_index, tool in enumerate(real_tools):
        for j in range(2):
            k = t_index * 2 + j
            cells.append(make({**plain, "tool": tool,
                               "intent": axes["intent"][k % 2 % len(axes["intent"])],
                               "persona": axes["persona"][k % len(axes["persona"])],
                               "tone": axes["tone"][k % len(axes["tone"])]}, "ordinary"))
    cells.extend(
        make(dict(zip(_COVERED, row, strict=True)), "pairwise") for row in pairwise_cover(covered)
    )
    descriptions = {t.name: t.description for t in spec.tools}
    clause_values = [c for c in axes["clause"] if c != NO_CLAUSE]
    for clause in clause_values:
        base = _backend.hash64(clause)
        for j, tool in enumerate(_clause_tools(clause, real_tools, descriptions)):
            picks: dict[str, str] = {"tool": tool}
            for n_axis, axis in enumerate(a for a in _COVERED if a != "tool"):
                options = axes[axis]
                picks[axis] = options[(base >> (5 * n_axis + j)) % len(options)]
            cells.append(make(picks, "clause", clause=clause))
    by_key: dict[str, Cell] = {}
    for cell in cells:
        by_key.setdefault(cell.key, cell)
    unique = list(by_key.values())
    unique.sort(key=lambda c: (c.block != "seed", c.edge_level))
    return Grid(
        axes=tuple((a, axes[a]) for a in AXES),
        cells=tuple(unique),
        clauses=tuple(clause_values),
    )
