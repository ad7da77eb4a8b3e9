"""Count and check the JSONL lines of an upload as it streams, chunk by chunk.

Every non-blank line must be one JSON object, read strictly (``strict_json.loads``: UTF-8, no
NUL, one value, bounded nesting and numbers) whose fields have the types row schema v1 gives
them (``row_types``): what is stored is what every reader of the set can read back. Rows are
counted, and the upload stops as soon as it passes the row quota.

>>> lines = LineCounter(max_rows=10)
>>> lines.feed(b'{"a": 1}\\n{"b"'); lines.feed(b': 2}'); lines.close()
b'\\n'
>>> lines.rows
2
"""

from __future__ import annotations

from whileai.server.services.problems import Invalid, QuotaExceeded, TooLarge
from whileai.server.services.row_types import type_problem
from whileai.server.services.strict_json import loads

__all__ = ["MAX_LINE_BYTES", "LineCounter"]

MAX_LINE_BYTES = 64 * 1024 * 1024  # one row; a line is held whole while it streams in

_WS = b" \t\r"


class LineCounter:
    """Feed it the upload's chunks in order; ``close`` returns bytes to append (a final newline)."""

    def __init__(self, *, max_rows: int) -> None:
        self.max_rows = max_rows
        self.rows = 0
        self.lines = 0
        self._carry = b""

    def _check(self, line: bytes) -> None:
        self.lines += 1
        text = line.strip(_WS)
        if not text:
            return
        where = f"upload line {self.lines}"
        row = loads(text, where=where)
        if not isinstance(row, dict):
            raise Invalid(f"{where}: not a JSON object (one row per line)")
        problem = type_problem(row)
        if problem:
            raise Invalid(f"{where}: {problem} (row schema v1; docs/rows.md)")
        self.rows += 1
        if self.rows > self.max_rows:
            raise QuotaExceeded(f"a dataset may hold at most {self.max_rows} rows "
                                "on this server; split the set or raise --max-rows-per-dataset")

    def feed(self, chunk: bytes) -> None:
        """Check every line the chunk completes."""
        end = chunk.rfind(b"\n")
        if end < 0:
            self._carry += chunk
            if len(self._carry) > MAX_LINE_BYTES:
                raise TooLarge(f"upload line {self.lines + 1}: longer than "
                               f"{MAX_LINE_BYTES} bytes, the most one row may hold")
            return
        block = self._carry + chunk[:end]
        self._carry = chunk[end + 1:]
        for line in block.split(b"\n"):
            self._check(line)

    def close(self) -> bytes:
        """Check the last line; return ``b"\\n"`` when the upload did not end with one."""
        if self._carry.strip(_WS):
            self._check(self._carry)
            self._carry = b""
            return b"\n"
        return b""
