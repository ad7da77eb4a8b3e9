"""The pure twin of the native ``DecontamLines``: it defers every line to the caller.

The native kernel decides the plain lines of a JSONL block itself (reads the checked fields,
applies the ``same_task``, ``verbatim`` and ``near`` rules) and *defers* any line it does not
read (docs/kernels.md, "N-grams"); the caller reads a deferred line the ordinary way and checks
it with :class:`~whileai._pure.ngram.NgramIndex`. Which lines a backend defers is its own
business; what the caller ends up with (the report, the kept lines) is the same. This twin
defers them all, so the pure backend takes the ordinary path for every line.

>>> status, kept, kept_at, *_ = DecontamLines(["prompt"], [None], [], 0.8, 8).check(
...     b'{"prompt": "a"}\\n\\n', 5)
>>> status, kept, kept_at
(b'\\x03\\x03', b'', [0, 0])
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["DEFERRED", "DecontamLines"]

DEFERRED = 3  # the status byte of a deferred line (0 blank, 1 kept, 2 dropped)

Drop = tuple[int, str, int, int, int, int, list[str], str]


class DecontamLines:
    """The decontamination rules over blocks of JSONL lines; this twin decides none."""

    __slots__ = ("_fields",)

    def __init__(self, fields: Sequence[str], indexes: Sequence[Any], task_ids: Iterable[str],
                 overlap: float, n: int) -> None:
        if len(fields) != len(indexes):
            raise ValueError(
                f"got {len(fields)} fields but {len(indexes)} indexes; pass one index (or "
                "None) per field"
            )
        self._fields = len(fields)

    def check(self, block: bytes, examples: int) -> tuple[
        bytes, bytes, list[int], list[int], list[list[int]], list[int], int, list[Drop]
    ]:
        """Return (status, kept, kept_at, by_rule, by_field, missing, short_texts, drops)."""
        lines = block.count(b"\n") + (0 if block.endswith(b"\n") or not block else 1)
        return (bytes([DEFERRED]) * lines, b"", [0] * lines, [0, 0, 0],
                [[0, 0] for _ in range(self._fields)], [0] * self._fields, 0, [])
