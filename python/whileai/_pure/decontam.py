"""The pure twin of the native ``DecontamLines``: the rules over row dicts; lines deferred.

The native kernel decides the plain lines of a JSONL block itself (reads the checked fields,
applies the ``same_task``, ``verbatim`` and ``near`` rules) and *defers* any line it does not
read (docs/kernels.md, "N-grams"); the caller reads a deferred line the ordinary way and checks
it as a row. Which lines a backend defers is its own business; what the caller ends up with
(the report, the kept lines) is the same. This twin defers them all. Rows
(:meth:`DecontamLines.check_rows`) both backends decide in full, with the same answers.

>>> status, kept, kept_at, *_ = DecontamLines(["prompt"], [None], [], 0.8, 8).check(
...     b'{"prompt": "a"}\\n\\n', 5)
>>> status, kept, kept_at
(b'\\x03\\x03', b'', [0, 0])
>>> from whileai._pure.ngram import NgramIndex
>>> rules = DecontamLines(["prompt"], [NgramIndex(["where is my order"], 2)], [], 0.8, 2)
>>> status, kept, *_, drops = rules.check_rows([{"prompt": "Where is my ORDER?"}, {}], 5)
>>> status, kept, drops
(b'\\x02\\x01', [{}], [(0, 'verbatim', 0, 0, 4, 4, ['where', 'is'], '')])
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["DEFERRED", "DROPPED", "KEPT", "DecontamLines"]

KEPT, DROPPED, DEFERRED = 1, 2, 3  # status bytes (0 is a blank line)
TASK_KEYS = ("scenario_id", "task_id")

Drop = tuple[int, str, int, int, int, int, list[str], str]


class DecontamLines:
    """The decontamination rules bound to an eval set's indexes (one per field, or None)."""

    __slots__ = ("_fields", "_indexes", "_n", "_overlap", "_tasks")

    def __init__(self, fields: Sequence[str], indexes: Sequence[Any], task_ids: Iterable[str],
                 overlap: float, n: int) -> None:
        if len(fields) != len(indexes):
            raise ValueError(
                f"got {len(fields)} fields but {len(indexes)} indexes; pass one index (or "
                "None) per field"
            )
        self._fields = tuple(fields)
        self._indexes = tuple(indexes)
        ids = tuple(task_ids)
        self._tasks = tuple(frozenset(i.removeprefix(f"{k}:") for i in ids if i.startswith(f"{k}:"))
                            for k in TASK_KEYS)
        self._overlap = overlap
        self._n = n

    def check(self, block: bytes, examples: int) -> tuple[
        bytes, bytes, list[int], list[int], list[list[int]], list[int], int, list[Drop]
    ]:
        """Return (status, kept, kept_at, by_rule, by_field, missing, short_texts, drops)."""
        lines = block.count(b"\n") + (0 if block.endswith(b"\n") or not block else 1)
        fields = len(self._fields)
        return (bytes([DEFERRED]) * lines, b"", [0] * lines, [0, 0, 0],
                [[0, 0] for _ in range(fields)], [0] * fields, 0, [])

    def check_rows(self, rows: list[dict[str, Any]], examples: int) -> tuple[
        bytes, list[dict[str, Any]], list[int], list[list[int]], list[int], int, list[Drop]
    ]:
        """Return (status, kept rows, by_rule, by_field, missing, short_texts, drops): each row
        ``KEPT`` or ``DROPPED`` by the first rule that fires, the first ``examples`` drops."""
        for i, row in enumerate(rows):
            if not isinstance(row, dict):
                raise TypeError(f"rows[{i}] is a {type(row).__name__}, not a row dict")
        verdict: list[Drop | None] = [None] * len(rows)
        if any(self._tasks):
            for i, row in enumerate(rows):
                for which, key in enumerate(TASK_KEYS):
                    value = row.get(key)
                    if isinstance(value, str) and value in self._tasks[which]:
                        verdict[i] = (i, "same_task", which, -1, 0, 0, [], value)
                        break
        missing = [0] * len(self._fields)
        short = 0
        for f, (field, index) in enumerate(zip(self._fields, self._indexes, strict=True)):
            texts: list[str] = []
            where: list[int] = []
            for i, row in enumerate(rows):
                if verdict[i] is None:
                    text = row.get(field)
                    if isinstance(text, str) and text.strip():
                        texts.append(text)
                        where.append(i)
                    else:
                        missing[f] += 1
            if index is None or not texts:
                continue
            short += self._rules(f, index, texts, where, verdict)
        return self._tally(rows, verdict, missing, short, examples)

    def _rules(self, f: int, index: Any, texts: list[str], where: list[int],
               verdict: list[Drop | None]) -> int:
        """The ``verbatim`` and ``near`` rules of field ``f``; return the short texts."""
        n, short = self._n, 0
        exact, best, covered, total, shared = index.check(texts)
        for k, i in enumerate(where):
            short += total[k] < n
            if exact[k] >= 0:
                verdict[i] = (i, "verbatim", f, exact[k], covered[k], total[k], shared[k], "")
            elif total[k] >= n and best[k] >= 0 and covered[k] / total[k] >= self._overlap:
                verdict[i] = (i, "near", f, best[k], covered[k], total[k], shared[k], "")
        return short

    def _tally(self, rows: list[dict[str, Any]], verdict: list[Drop | None], missing: list[int],
               short: int, examples: int) -> tuple[
        bytes, list[dict[str, Any]], list[int], list[list[int]], list[int], int, list[Drop]
    ]:
        by_rule = [0, 0, 0]
        by_field = [[0, 0] for _ in self._fields]
        drops: list[Drop] = []
        for v in verdict:
            if v is None:
                continue
            rule = ("same_task", "verbatim", "near").index(v[1])
            by_rule[rule] += 1
            if rule:
                by_field[v[2]][rule - 1] += 1
            if len(drops) < examples:
                drops.append(v)
        status = bytes(KEPT if v is None else DROPPED for v in verdict)
        kept = [row for row, v in zip(rows, verdict, strict=True) if v is None]
        return status, kept, by_rule, by_field, missing, short, drops
