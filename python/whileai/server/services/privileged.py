"""Teacher-only rows on the server: find the lines of an upload or a stored set that hold a
``privileged`` block, so a push can refuse them and a publish can name them.

The client drops the block on the way out (``rows.outbound``); this is the second lock: a raw
push (``curl``, an old client) holding it is refused unless it asks to keep it for a private
store (``keep_privileged=true``), and a set holding it is never published. A line is parsed only
when its bytes contain ``privileged``; the answer is the core's ``holds_privileged``.

>>> check = PrivilegedLines()
>>> check.feed(b'{"prompt": "a"}\\n{"prompt": "b", "privi'); check.feed(b'leged": {}}\\n')
>>> check.close()
[2]
>>> refusal([2, 5], "this upload").message  # doctest: +ELLIPSIS
'lines 2, 5 of this upload hold a teacher-only `privileged` block; ...'
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from whileai.rows.outbound import holds_privileged
from whileai.server.services.problems import Conflict, Invalid, ServiceError

__all__ = ["SHOWN", "PrivilegedLines", "lines_in_files", "part_holds", "refusal"]

SHOWN = 10  # line numbers a message names before it says how many more
_NEEDLE = b"privileged"


def _holds(line: bytes) -> bool:
    try:
        row = json.loads(line)
    except (ValueError, RecursionError):  # the framing check names lines that are not JSON
        return False
    return holds_privileged(row)


class PrivilegedLines:
    """Feed it a JSONL stream's chunks in order; ``close`` returns the 1-based line numbers
    whose row holds a ``privileged`` key (at any depth, JSON texts included)."""

    def __init__(self) -> None:
        self.found: list[int] = []
        self._lines = 0
        self._carry = b""

    def _block(self, block: bytes) -> None:
        if _NEEDLE not in block:
            self._lines += block.count(b"\n") + 1
            return
        for line in block.split(b"\n"):
            self._lines += 1
            if _NEEDLE in line and _holds(line):
                self.found.append(self._lines)

    def feed(self, chunk: bytes) -> None:
        """Check every line the chunk completes."""
        end = chunk.rfind(b"\n")
        if end < 0:
            self._carry += chunk
            return
        block, self._carry = self._carry + chunk[:end], chunk[end + 1:]
        self._block(block)

    def close(self) -> list[int]:
        """Check the last line; return the numbers of the lines that hold the block."""
        if self._carry.strip():
            self._block(self._carry)
            self._carry = b""
        return self.found


def lines_in_files(paths: Iterable[Path]) -> list[int]:
    """The 1-based row lines, across ``paths`` read in order, that hold a ``privileged`` block.

    Lines are counted as rows of the whole set (blank lines are not rows).
    """
    found: list[int] = []
    row = 0
    for path in paths:
        with open(path, "rb") as handle:
            for line in handle:
                if not line.strip():
                    continue
                row += 1
                if _NEEDLE in line and _holds(line):
                    found.append(row)
    return found


def part_holds(path: Path, chunk: int = 4 << 20) -> bool:
    """True when a stored part holds a ``privileged`` block: its bytes are searched in chunks
    (at C speed) and only a part that contains the word is read line by line."""
    tail = b""
    with open(path, "rb") as handle:
        while block := handle.read(chunk):
            if _NEEDLE in tail + block[:len(_NEEDLE)] or _NEEDLE in block:
                return bool(lines_in_files([path]))
            tail = block[-len(_NEEDLE):]
    return False


def refusal(lines: list[int], where: str, *, publishing: bool = False) -> ServiceError:
    """The error that names the lines holding the block and says what to do."""
    named = ", ".join(str(n) for n in lines[:SHOWN])
    more = f" and {len(lines) - SHOWN} more" if len(lines) > SHOWN else ""
    plural = "lines" if len(lines) > 1 else "line"
    if publishing:
        return Conflict(f"{plural} {named}{more} of {where} hold a teacher-only "
                        "`privileged` block, which a public set may never carry; push the rows "
                        "again without keep_privileged (the client drops the block) and publish "
                        "that set")
    return Invalid(f"{plural} {named}{more} of {where} hold a teacher-only "
                   "`privileged` block; push through the whileai client (it drops the block), "
                   "remove it, or pass keep_privileged=true for a private store")
