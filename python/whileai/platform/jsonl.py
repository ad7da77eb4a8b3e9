"""Fast JSONL blocks for uploads and downloads: split at newlines, parse each line as one object.

A block is decoded to text once and every line goes to ``json.loads`` as a ``str`` (twice as
fast as handing it bytes, which re-detects the encoding per line). Lines nesting deeper than
``MAX_DEPTH`` are refused as ``loads_limited`` refuses them; a bad line is named ``where:line``.

>>> parse_block(b'{"a": 1}\\n\\n{"b": 2}', "x.jsonl", 0)
[{'a': 1}, {'b': 2}]
>>> parse_block(b'{"a": 1}\\n[2]', "x.jsonl", 0)
Traceback (most recent call last):
...
whileai.errors.RowError: x.jsonl:2: expected a JSON object (one row per line), got list
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from whileai.errors import RowError

__all__ = ["check_block", "iter_block", "parse_block", "parse_chunks", "split_complete"]


def _too_deep(where: str) -> RowError:
    from whileai.rows.depth import deep_error
    return deep_error(where)


def _loads(line: str, where: str, offset: int, limit: int) -> dict[str, Any]:
    """One line as a row; ``where:offset`` names it in the error messages."""
    try:
        row = json.loads(line)
    except RecursionError:
        raise _too_deep(f"{where}:{offset}") from None
    except ValueError as exc:
        raise RowError(f"{where}:{offset}: not valid JSON ({exc}); fix or delete that "
                       "line") from None
    if type(row) is not dict:
        raise RowError(f"{where}:{offset}: expected a JSON object (one row per line), got "
                       f"{type(row).__name__}")
    if line.count("[") + line.count("{") > limit:
        from whileai.rows.depth import too_deep
        if too_deep(row, limit):
            raise _too_deep(f"{where}:{offset}")
    return row


def iter_block(block: bytes, where: str, before: int) -> Iterator[dict[str, Any]]:
    """The rows of complete JSONL lines, one at a time (blank lines skipped); ``before`` lines
    came earlier in the stream.

    Raises:
        RowError: a line is not UTF-8, not JSON, not an object, or nests too deep
            (``where:line`` names it).
    """
    from whileai.rows.depth import MAX_DEPTH
    try:
        text = block.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError as exc:
        offset = before + 1 + block.count(b"\n", 0, exc.start)
        raise RowError(f"{where}:{offset}: not UTF-8 ({exc.reason})") from None
    loads = json.loads
    for offset, line in enumerate(text.split("\n"), start=before + 1):
        try:  # the usual line, inline; anything odd goes the slow way, which names it
            row = loads(line)
        except (ValueError, RecursionError):
            row = None
        if type(row) is dict and line.count("[") + line.count("{") <= MAX_DEPTH:
            yield row
        elif line and not line.isspace():
            yield _loads(line, where, offset, MAX_DEPTH)


def parse_block(block: bytes, where: str, before: int) -> list[dict[str, Any]]:
    """The rows of complete JSONL lines as a list (see ``iter_block``)."""
    return list(iter_block(block, where, before))


def check_block(block: bytes, where: str, before: int) -> None:
    """Check every line of ``block`` as ``iter_block`` does, keeping no row."""
    for _row in iter_block(block, where, before):
        pass


def split_complete(carry: bytes, chunk: bytes) -> tuple[bytes, bytes]:
    """``(complete lines, rest)`` of ``carry + chunk``: the first ends before the last newline.

    >>> split_complete(b'{"a"', b': 1}\\n{"b"')
    (b'{"a": 1}', b'{"b"')
    """
    end = chunk.rfind(b"\n")
    if end < 0:
        return b"", carry + chunk
    return carry + chunk[:end], chunk[end + 1:]


def parse_chunks(chunks: Iterable[bytes], where: str) -> Iterator[dict[str, Any]]:
    """Rows from a stream of byte chunks cut anywhere (lines may span chunks).

    >>> list(parse_chunks([b'{"a"', b': 1}\\n{"b": 2}'], "x"))
    [{'a': 1}, {'b': 2}]
    """
    carry = b""
    before = 0
    for chunk in chunks:
        block, carry = split_complete(carry, chunk)
        if block or chunk.rfind(b"\n") >= 0:
            yield from iter_block(block, where, before)
            before += block.count(b"\n") + 1
    if carry.strip():
        yield from iter_block(carry, where, before)
