"""JSONL files cut into byte spans that tasks read on their own, rows numbered as in one pass.

A span is a byte range of one file; it owns every line that *starts* inside it (the line that
crosses its end included, the one that crosses its start left to the span before). Reading the
spans in order gives the lines of the files in order, each line exactly once, so a task per
span can read and check its rows without any other task, and the driver restores the file's
order from the spans' ``order`` alone: whatever order the tasks finish in, and whatever the
cluster's block layout, row ``k`` of the report is line ``k`` (blank lines aside) of the files.

Ray Data's ``read_text`` does not give that order for a large file in Ray 2.44-2.46: its block
builder puts the rows not yet compacted (the last ~50 MiB read) before the compacted ones, so a
JSONL file over 50 MiB comes back rotated, and ``preserve_order`` cannot undo it (it orders
blocks, not rows inside the one block of a file). Rows are parsed here by the same
:class:`~whileai.rows.jsonl.JsonlReader` rules as the single-process reader (blank lines
skipped, a byte-order mark on line 1, errors naming ``path:line``).

>>> import os, pathlib, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "t.jsonl")
>>> _ = pathlib.Path(path).write_text('{"a": 1}\\n\\n{"a": 2}\\n{"a": 3}\\n')
>>> cut = spans([path], 10)
>>> [(s.start, s.end) for s in cut]
[(0, 10), (10, 20), (20, 28)]
>>> [row["a"] for s in cut for row, _ in span_rows(s)]
[1, 2, 3]
"""

from __future__ import annotations

import gzip
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import IO, Any

from whileai.errors import ConfigError, RowError
from whileai.rows.jsonl import check_input_file, read_jsonl

__all__ = ["Span", "copy_span", "is_paths", "line_number", "line_text", "numbered_rows",
           "span_bounds", "span_rows", "spans"]

_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class Span:
    """Bytes ``[start, end)`` of ``path`` (``end=-1``: to the end), the ``order``-th span."""

    path: str
    start: int
    end: int
    order: int


def is_paths(value: Any) -> bool:
    """Whether ``value`` is a path or a non-empty list/tuple of paths (not rows, not a Dataset)."""
    if isinstance(value, (str, PathLike)):
        return True
    return (isinstance(value, (list, tuple)) and bool(value)
            and all(isinstance(v, (str, PathLike)) for v in value))


def spans(paths: str | PathLike[str] | Sequence[str | PathLike[str]], size: int) -> list[Span]:
    """Cut the files into spans of about ``size`` bytes, in file order (a ``.gz`` file: one span).

    Raises:
        ConfigError: ``size`` below 1.
        InputError: a path is not a readable file.
    """
    if not isinstance(size, int) or size < 1:
        raise ConfigError(f"span_bytes= must be a positive number of bytes, got {size!r}")
    listed = [paths] if isinstance(paths, (str, PathLike)) else list(paths)
    out: list[Span] = []
    for path in listed:
        target = check_input_file(path, "JSONL file")
        name = str(target)
        if target.suffix == ".gz":
            out.append(Span(name, 0, -1, len(out)))
            continue
        total = os.path.getsize(target)
        for start in range(0, max(total, 1), size):
            out.append(Span(name, start, min(start + size, total), len(out)))
    return out


def _open(span: Span) -> IO[bytes]:
    if span.end < 0:
        return gzip.open(span.path, "rb")  # type: ignore[return-value]
    return open(span.path, "rb")


def span_bounds(span: Span) -> tuple[int, int]:
    """The bytes ``[first, last)`` the span's lines take (first == last: no line starts in it).

    >>> import os, pathlib, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "t.jsonl")
    >>> _ = pathlib.Path(path).write_text('{"a": 1}\\n{"a": 22}\\n')
    >>> span_bounds(Span(path, 0, 5, 0)), span_bounds(Span(path, 5, 19, 1))
    ((0, 9), (9, 19))
    """
    if span.end < 0:
        return 0, -1
    with open(span.path, "rb") as handle:
        total = handle.seek(0, os.SEEK_END)

        def line_start_from(offset: int) -> int:
            if offset <= 0 or offset >= total:
                return min(max(offset, 0), total)
            handle.seek(offset - 1)
            return offset - 1 + len(handle.readline())

        first = line_start_from(span.start)
        return first, max(first, line_start_from(span.end))


def copy_span(span: Span, target: str) -> None:
    """Write the span's lines (their bytes as they are) to the file ``target``."""
    first, last = span_bounds(span)
    with open(span.path, "rb") as src, open(target, "wb") as dst:
        src.seek(first)
        left = last - first
        while left > 0 and (block := src.read(min(left, 1 << 22))):
            dst.write(block)
            left -= len(block)


def span_lines(span: Span) -> Iterator[bytes]:
    """The lines (with their line ends) that start inside the span, in file order."""
    with _open(span) as handle:
        pos = span.start
        if span.start > 0:
            handle.seek(span.start - 1)
            pos += len(handle.readline()) - 1  # to the first line starting at or after start
        while span.end < 0 or pos < span.end:
            line = handle.readline()
            if not line:
                return
            pos += len(line)
            yield line


def line_number(span: Span, k: int) -> int:
    """The file line number (from 1) of the span's ``k``-th line (counted only on an error)."""
    if span.start == 0:
        return k + 1
    before, last, left = 0, b"\n", span.start
    with open(span.path, "rb") as handle:
        while left > 0 and (block := handle.read(min(left, 1 << 20))):
            before += block.count(b"\n")
            left -= len(block)
            last = block[-1:]
    # A line crossing the span's start ends (one newline more) before the span's first line.
    return before + (last != b"\n") + 1 + k


def span_rows(span: Span) -> Iterator[tuple[dict[str, Any], bytes]]:
    """Yield ``(row, line)`` for the span's rows: parsed as the single-process reader parses.

    Raises:
        RowError: a line is not UTF-8, not JSON, nested too deep or not an object; the message
            names the file and its line number.
    """
    for row, line, _ in numbered_rows(span):
        yield row, line


def numbered_rows(span: Span) -> Iterator[tuple[dict[str, Any], bytes, int]]:
    """Yield ``(row, line, k)``: as :func:`span_rows`, with the line's place ``k`` in the span
    (:func:`line_number` turns it into the file's line number).

    Raises:
        RowError: as :func:`span_rows`.
    """
    reader = read_jsonl(Path(span.path))
    for k, line in enumerate(span_lines(span)):
        # Line 1 of a file may carry a byte-order mark; no other line number matters unless bad.
        lineno = 1 if span.start == 0 and k == 0 else 2
        try:
            row = reader.parse_line(line, lineno)
        except RowError:
            reader.parse_line(line, line_number(span, k))  # raises again, naming the line
            raise
        if row is not None:
            yield row, line, k


def line_text(line: bytes) -> str:
    """A line as the row's JSON text: without its byte-order mark and line end."""
    return line.removeprefix(_BOM).rstrip(b"\r\n").decode("utf-8")
