"""Count and check the JSONL lines of an upload as it streams, chunk by chunk.

The client has already parsed every row; the server checks the framing (each non-blank line
is one JSON object: it starts with ``{`` and ends with ``}``), counts rows, and stops an
upload as soon as it passes the row quota, without parsing JSON on the hot path.

>>> lines = LineCounter(max_rows=10)
>>> lines.feed(b'{"a": 1}\\n{"b"'); lines.feed(b': 2}'); lines.close()
b'\\n'
>>> lines.rows
2
"""

from __future__ import annotations

from whileai.server.errors import ApiError

__all__ = ["LineCounter"]

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
        if text[:1] != b"{" or text[-1:] != b"}":
            raise ApiError("bad_request", f"upload line {self.lines}: not a JSON object "
                           "(one row per line)")
        self.rows += 1
        if self.rows > self.max_rows:
            raise ApiError("quota_exceeded", f"a dataset may hold at most {self.max_rows} rows "
                           "on this server; split the set or raise --max-rows-per-dataset")

    def feed(self, chunk: bytes) -> None:
        """Check every line the chunk completes."""
        end = chunk.rfind(b"\n")
        if end < 0:
            self._carry += chunk
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
