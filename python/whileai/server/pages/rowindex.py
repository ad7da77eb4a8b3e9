"""A row index for the viewer: facets as bitsets, search text, sort orders, and the row fetch.

Built in one streaming pass over a source's lines (``rowsource``), it keeps per row only what
the row list needs (a short ask, the facet values, a lower-cased haystack) and where the full
row lives (a byte offset in a plain file, or the line itself for gzip, Parquet and server
parts). Each facet value is a Python ``int`` used as a bitset over row positions (tasks, one
per few rows, are position lists instead), so a filter is a few ``&``/``|`` of big integers,
a count is ``int.bit_count``, and the count of every facet value under the other facets'
filters (what a user sees next to each checkbox) costs one ``&`` per value: 100,000 rows
filter and page in tens of milliseconds (``benches/bench_viewer.py``).

>>> index = build_index([b'{"prompt": "hi", "reward": 1, "steps": [{"tool": "get"}]}',
...                      b'{"prompt": "bye", "reward": 0, "judge_status": "ok"}'])
>>> found = index.query(Query(facets={"outcome": ("pass",)}))
>>> found.total, found.counts["outcome"]["fail"], index.row(found.page[0])["prompt"]
(1, 1, 'hi')
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from whileai._gc import paused_gc
from whileai.errors import RowError
from whileai.rows.outbound import outbound, outbound_check

__all__ = ["FACETS", "SORTS", "Found", "Query", "RowIndex", "bitset", "build_index",
           "facet_values",
           "outcome", "typed"]

# The facets, in the order the row list shows them, with their label.
FACETS: dict[str, str] = {
    "outcome": "pass / fail", "judge_status": "judge status", "fault": "fault kind",
    "seeded": "seeded mistake", "tool": "tool called", "stance": "stance",
    "persona": "persona", "intent": "intent", "marker": "marker", "split": "split",
    "label": "your label", "task": "task",
}
SORTS = ("position", "reward", "task", "tool_calls", "length")
_MANY_SHOWN = 50
_TEXT_LIMIT = 4000
_ASK_LIMIT = 160


def outcome(reward: Any, threshold: float = 0.5) -> str:
    """``pass`` / ``fail`` by the reward, ``unjudged`` without a number.

    >>> outcome(1.0), outcome(0), outcome(None), outcome("x")
    ('pass', 'fail', 'unjudged', 'unjudged')
    """
    if isinstance(reward, bool) or not isinstance(reward, (int, float)) or reward != reward:
        return "unjudged"
    return "pass" if reward >= threshold else "fail"


def typed(row: Mapping[str, Any], key: str, kind: type[Any]) -> Any:
    """``row[key]`` when it is a ``kind`` (a dict or a list), else an empty one.

    >>> typed({"steps": None}, "steps", list), typed({"m": {"a": 1}}, "m", dict)
    ([], {'a': 1})
    """
    value = row.get(key)
    return value if isinstance(value, kind) else kind()


def _strings(value: Any) -> list[str]:
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value if v is not None]
    return [] if value is None else [str(value)]


def facet_values(row: Mapping[str, Any], split: str = "") -> dict[str, list[str]]:
    """The facet values of one row (a row may have several values of a facet: two tools).

    >>> facet_values({"faults": [{"kind": "timeout"}], "seeded": ["hedging"]})["fault"]
    ['timeout']
    """
    dims = typed(row, "scenario_dimensions", dict)
    steps = typed(row, "steps", list)
    faults = typed(row, "faults", list)
    markers = typed(row, "markers", dict)
    tools = sorted({str(s.get("tool")) for s in steps if isinstance(s, dict) and s.get("tool")})
    marks = sorted(f"{k} {'high' if v >= 0.5 else 'low'}" for k, v in markers.items()
                   if isinstance(v, (int, float)) and not isinstance(v, bool))
    task = row.get("scenario_id") or row.get("task_id") or row.get("prompt") or ""
    return {
        "outcome": [outcome(row.get("reward"))],
        "judge_status": [str(row.get("judge_status") or "ungraded")],
        "fault": sorted({str(f.get("kind")) for f in faults if isinstance(f, dict)
                         and f.get("kind")}) or ["none"],
        "seeded": sorted(set(_strings(row.get("seeded")))) or ["none"],
        "tool": tools or ["none"],
        "stance": _strings(dims.get("stance")) or ["-"],
        "persona": _strings(dims.get("persona")) or ["-"],
        "intent": _strings(dims.get("intent")) or ["-"],
        "marker": marks or ["none"],
        "split": [str(row.get("split") or split or "-")],
        "task": [str(task)],
    }


def _haystack(row: Mapping[str, Any]) -> str:
    parts = [str(row.get("prompt") or ""), str(row.get("final_text") or "")]
    parts.extend(m["content"] for m in typed(row, "messages", list) if isinstance(m, dict)
                 and m.get("role") in ("user", "assistant") and isinstance(m.get("content"), str))
    return "\n".join(parts).lower()[:_TEXT_LIMIT]


@dataclass(frozen=True, slots=True, kw_only=True)
class Query:
    """What the row list asks for: facet values (any of a facet's, all facets), text, order."""

    facets: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    text: str = ""
    sort: str = "position"
    descending: bool = False
    page: int = 0
    size: int = 50


@dataclass(frozen=True, slots=True, kw_only=True)
class Found:
    """One page of the row list: positions in order, the total, counts per facet value."""

    page: tuple[int, ...]
    total: int
    counts: dict[str, dict[str, int]]


class Summary(NamedTuple):
    """What the list shows of one row without reading it again (a tuple: 100,000 are made)."""

    task: str
    rollout: int | None
    ask: str
    reward: float | None
    status: str
    faults: tuple[str, ...]
    seeded: tuple[str, ...]
    tool_calls: int
    length: int


@dataclass(frozen=True, slots=True, kw_only=True)
class RowIndex:
    """The index of one source (see the module docstring); ``row(i)`` reads row ``i`` again."""

    summaries: tuple[Summary, ...]
    bits: dict[str, dict[str, int]]
    texts: tuple[str, ...]
    all_tasks: dict[str, int]
    orders: dict[str, tuple[int, ...]]
    by_task: dict[str, tuple[int, ...]]
    fetch: Callable[[int], bytes]

    def __len__(self) -> int:
        return len(self.summaries)

    def row(self, position: int, *, keep_privileged: bool = False) -> dict[str, Any]:
        """Row ``position`` as a dict (read again from its source), through the exit filter
        (``rows.outbound``); ``keep_privileged`` for ``whileai view --show-privileged``."""
        if not 0 <= position < len(self.summaries):
            raise RowError(f"row {position} is out of range: the source has "
                           f"{len(self.summaries)} rows (0 to {len(self.summaries) - 1})")
        line = self.fetch(position)
        value: dict[str, Any] = json.loads(line)
        if outbound_check()(line):
            return value
        return outbound(value, keep_privileged=keep_privileged)

    def siblings(self, position: int) -> tuple[int, ...]:
        """The positions of the other rollouts of the same task (``position`` left out)."""
        task = self.summaries[position].task
        return tuple(p for p in self.by_task.get(task, ()) if p != position)

    def _mask(self, facets: Mapping[str, tuple[str, ...]], bits: Mapping[str, dict[str, int]],
              skip: str = "") -> int:
        mask = (1 << len(self.summaries)) - 1
        for name, wanted in facets.items():
            if name == skip or not wanted or (name not in bits and name != "task"):
                continue
            if name == "task":  # no bitset per task: one per few rows would cost N^2/8 bytes
                mask &= bitset([p for v in wanted for p in self.by_task.get(v, ())],
                                len(self.summaries))
                continue
            values = bits[name]
            union = 0
            for value in wanted:
                union |= values.get(value, 0)
            mask &= union
        return mask

    def _text_mask(self, text: str) -> int:
        needle = text.lower().strip()
        if not needle:
            return (1 << len(self.summaries)) - 1
        return bitset([i for i, hay in enumerate(self.texts) if needle in hay],
                       len(self.summaries))

    def _task_counts(self, mask: int) -> dict[str, int]:
        """Tasks over the rows in ``mask``, most common first, the first ``_MANY_SHOWN`` (a
        tally over the matching rows: tasks have no bitsets)."""
        if mask == (1 << len(self.summaries)) - 1:
            return self.all_tasks
        flags = mask.to_bytes((len(self.summaries) + 8) // 8, "little")
        tally = Counter(s.task for i, s in enumerate(self.summaries)
                        if flags[i >> 3] >> (i & 7) & 1)
        return dict(tally.most_common(_MANY_SHOWN))

    def query(self, query: Query, extra: Mapping[str, dict[str, int]] | None = None) -> Found:
        """The page ``query`` asks for, its total, and each facet value's count under the
        other facets' filters and the text (so a count says what ticking it would leave).

        ``extra`` adds facets known only at query time (the hand labels given so far), as
        ``{facet: {value: bitset}}``."""
        bits = {**self.bits, **(extra or {})}
        if query.sort not in self.orders:
            raise RowError(f"unknown sort {query.sort!r}; sort by one of {list(self.orders)}")
        text = self._text_mask(query.text)
        mask = self._mask(query.facets, bits) & text
        counts: dict[str, dict[str, int]] = {}
        flags = mask.to_bytes((len(self.summaries) + 8) // 8, "little")
        for name in FACETS:
            if name not in bits and name != "task":
                continue
            others = (self._mask(query.facets, bits, skip=name) & text) \
                if query.facets.get(name) else mask
            if name == "task":
                counts[name] = self._task_counts(others)
            else:
                counts[name] = {v: (b & others).bit_count() for v, b in bits[name].items()}
        total = mask.bit_count()
        order = self.orders[query.sort]
        start, stop = query.page * query.size, (query.page + 1) * query.size
        page: list[int] = []
        seen = 0
        for i in (reversed(order) if query.descending else order):
            if flags[i >> 3] >> (i & 7) & 1:
                if seen >= start:
                    page.append(i)
                    if len(page) >= stop - start:
                        break
                seen += 1
        return Found(page=tuple(page), total=total, counts=counts)


def _reward(value: Any) -> float | None:
    return float(value) if outcome(value) != "unjudged" else None


def bitset(positions: Iterable[int], size: int) -> int:
    """The bitset of ``positions`` among ``size`` rows.

    >>> bin(bitset([0, 2], 3))
    '0b101'
    """
    flags = bytearray((size + 7) // 8)
    for i in positions:
        flags[i >> 3] |= 1 << (i & 7)
    return int.from_bytes(flags, "little")


def build_index(lines: Iterable[bytes | tuple[bytes, str, str]], *,
                fetch: Callable[[int], bytes] | None = None) -> RowIndex:
    """Index ``lines`` (one JSON row each) in one pass, the cyclic collector paused (it would
    rescan the summaries kept so far at every few hundred rows, freeing nothing).

    Args:
        lines: the rows' JSON lines in order, each alone or as ``(line, split, where)``: the
            split it came from (a Hugging Face folder's file) and where it is, for errors
            (``rows.jsonl: line 3``); blank lines are not rows.
        fetch: reads row ``i``'s line again (blank lines not counted); without it the lines
            are kept in memory.

    Raises:
        RowError: a line is not a JSON object (where it is is named).
    """
    with paused_gc():
        return _build(lines, fetch)


def _build(lines: Iterable[bytes | tuple[bytes, str, str]],
           fetch: Callable[[int], bytes] | None) -> RowIndex:
    kept: list[bytes] = []
    summaries: list[Summary] = []
    texts: list[str] = []
    members: dict[str, dict[str, list[int]]] = {name: {} for name in FACETS if name != "task"}
    by_task: dict[str, list[int]] = {}
    clean = outbound_check()
    for number, item in enumerate(lines, start=1):
        line, split, where = item if isinstance(item, tuple) else (item, "", f"line {number}")
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise RowError(f"{where}: not valid JSON ({exc}); fix or drop the line") from exc
        if not isinstance(row, dict):
            raise RowError(f"{where}: a {type(row).__name__}, not a row object")
        if not clean(line):  # summaries and search text from the row as it may be shown
            row = outbound(row)
        position = len(summaries)
        if fetch is None:
            kept.append(bytes(line))
        values = facet_values(row, split)
        task = values.pop("task")[0]
        for name, found in values.items():
            table = members[name]
            for value in found:
                table.setdefault(value, []).append(position)
        by_task.setdefault(task, []).append(position)
        steps = typed(row, "steps", list)
        rollout = row.get("rollout_index")
        summaries.append(Summary(
            task, rollout if isinstance(rollout, int) else None,
            str(row.get("prompt") or "")[:_ASK_LIMIT], _reward(row.get("reward")),
            values["judge_status"][0], tuple(v for v in values["fault"] if v != "none"),
            tuple(v for v in values["seeded"] if v != "none"), len(steps),
            len(str(row.get("final_text") or ""))))
        texts.append(_haystack(row))
    positions = range(len(summaries))
    bits = {name: {value: bitset(found, len(summaries)) for value, found in sorted(table.items())}
            for name, table in members.items()}
    orders = {
        "position": tuple(positions),
        "reward": tuple(sorted(positions, key=lambda i: (summaries[i].reward is None,
                                                         summaries[i].reward or 0.0))),
        "task": tuple(sorted(positions, key=lambda i: (summaries[i].task,
                                                       summaries[i].rollout or 0))),
        "tool_calls": tuple(sorted(positions, key=lambda i: summaries[i].tool_calls)),
        "length": tuple(sorted(positions, key=lambda i: summaries[i].length)),
    }
    tasks = Counter({task: len(found) for task, found in by_task.items()})
    return RowIndex(summaries=tuple(summaries), bits=bits, texts=tuple(texts),
                    all_tasks=dict(tasks.most_common(_MANY_SHOWN)), orders=orders,
                    by_task={k: tuple(v) for k, v in by_task.items()},
                    fetch=fetch if fetch is not None else kept.__getitem__)
