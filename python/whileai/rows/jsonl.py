"""Reading JSONL: one row (a JSON object) per line, from files, blocks and streamed chunks.

- ``read_jsonl(path, strict=True)`` streams rows; strict stops at the first bad line with
  ``path:line``, lenient skips it and counts it (``reader.skipped``, ``reader.problems``).
- ``load_rows(source)`` takes a path or rows already in memory and returns a list.
- ``parse_block`` / ``iter_block`` / ``parse_chunks`` read the JSONL blocks the platform client
  uploads and downloads (decoded once; an odd line goes through ``parse_row_text``, the rule every
  reader shares, and is named ``where:line``). ``.gz`` paths are read gzip-compressed.

Writing (``write_jsonl``, ``JsonlAppender``, ``dumps_row``) is :mod:`whileai.rows.jsonl_write`.

>>> parse_block(b'{"a": 1}\\n\\n{"b": 2}', "x.jsonl", 0)
[{'a': 1}, {'b': 2}]
>>> parse_block(b'{"a": 1}\\n[2]', "x.jsonl", 0)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
whileai.errors.RowError: x.jsonl:2: expected a JSON object (one row per line), got list; ...
"""

from __future__ import annotations

import gzip
import json
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any

from whileai.errors import InputError, RowError
from whileai.rows.depth import MAX_DEPTH, loads_limited

__all__ = [
    "JsonlReader",
    "LoadedRows",
    "PathLike",
    "check_block",
    "check_input_file",
    "iter_block",
    "iter_source",
    "load_rows",
    "parse_block",
    "parse_chunks",
    "parse_row_text",
    "read_jsonl",
    "split_complete",
]

PathLike = str | os.PathLike[str]
_MAX_PROBLEMS = 100  # problems kept verbatim; the count (`skipped`) is always exact


class JsonlReader:
    """Iterate the rows of a JSONL file; after iterating, ``skipped``/``problems`` say what was bad.

    Blank lines are not rows and are counted in ``blank_lines``. Iterating again re-reads the file
    and resets the counts.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "mixed.jsonl")
    >>> _ = Path(path).write_text('{"prompt": "a"}\\nnot json\\n[1]\\n')
    >>> reader = read_jsonl(path, strict=False)
    >>> [row["prompt"] for row in reader], reader.skipped
    (['a'], 2)
    """

    def __init__(self, path: PathLike, *, strict: bool = True) -> None:
        self.path = Path(path)
        check_input_file(self.path, "JSONL file")
        self.strict = strict
        self.rows_read = 0
        self.skipped = 0
        self.blank_lines = 0
        self.problems: list[str] = []

    def _bad(self, message: str) -> None:
        if self.strict:
            raise RowError(message + "; fix or delete that line, or read with strict=False.")
        self.skipped += 1
        if len(self.problems) < _MAX_PROBLEMS:
            self.problems.append(message)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for _, row, _ in self.iter_lines():
            yield row

    def iter_lines(self) -> Iterator[tuple[int, dict[str, Any], bytes]]:
        """Like iterating, but yield ``(line number from 1, row, the line's bytes as read)``."""
        self.rows_read = self.skipped = self.blank_lines = 0
        self.problems = []
        with self.open() as handle:
            for lineno, raw in enumerate(handle, start=1):
                row = self.parse_line(raw, lineno)
                if row is not None:
                    yield lineno, row, raw

    def open(self) -> IO[bytes]:
        """The file opened for reading bytes (``.gz`` decompressed)."""
        if self.path.suffix == ".gz":
            return gzip.open(self.path, "rb")  # type: ignore[return-value]
        return open(self.path, "rb")

    def parse_line(self, raw: bytes, lineno: int) -> dict[str, Any] | None:
        """The row of line ``lineno`` (from 1), or None for a blank line or (lenient) a bad one.

        Raises:
            RowError: strict reading and the line is not UTF-8, not JSON, nested too deep, or
                not an object; the message names ``path:line``.
        """
        where = f"{self.path}:{lineno}"
        try:
            text = raw.decode("utf-8-sig" if lineno == 1 else "utf-8")
        except UnicodeDecodeError as exc:
            self._bad(f"{where}: not UTF-8 text ({exc.reason} at byte {exc.start})")
            return None
        if not text or text.isspace():
            self.blank_lines += 1
            return None
        try:
            row = parse_row_text(text, where=where)
        except RowError as exc:
            self._bad(str(exc))
            return None
        self.rows_read += 1
        return row

    def __repr__(self) -> str:
        return (f"JsonlReader({str(self.path)!r}, strict={self.strict}, rows_read="
                f"{self.rows_read}, skipped={self.skipped})")


def parse_row_text(text: str, *, where: str) -> dict[str, Any]:
    """The row one JSONL line's text holds (not blank), by the reader's rules.

    Shared with the cluster adapters (:mod:`whileai.scale`), which read rows from JSON text
    held elsewhere and must refuse exactly the lines the reader refuses.

    Raises:
        RowError: the text is not JSON, nested too deep or not an object; the message names
            ``where`` and has no advice appended (the caller adds its own).

    >>> parse_row_text('[1]', where="f.jsonl:3")
    Traceback (most recent call last):
    ...
    whileai.errors.RowError: f.jsonl:3: expected a JSON object (one row per line), got list
    """
    try:
        row = loads_limited(text, where=where)
    except json.JSONDecodeError as exc:
        raise RowError(f"{where}: not valid JSON ({exc.msg} at column {exc.colno})") from None
    except RowError as exc:  # nested too deep
        raise RowError(str(exc).rsplit(";", 1)[0]) from None
    if not isinstance(row, dict):
        raise RowError(
            f"{where}: expected a JSON object (one row per line), got {type(row).__name__}"
        )
    return row


def check_input_file(path: PathLike, what: str = "file") -> Path:
    """Return ``path`` as a ``Path`` when it names a readable regular file, else raise.

    Raises:
        InputError: the path does not exist, or is a folder (or another non-file).

    >>> check_input_file("/no/such.jsonl", "JSONL file")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    whileai.errors.InputError: /no/such.jsonl: no such JSONL file (working folder ...
    """
    target = Path(path)
    if target.is_file():
        return target
    if target.is_dir():
        raise InputError(f"{target}: is a folder, not a {what}; pass the file inside it")
    if target.exists():
        raise InputError(f"{target}: is not a regular file; pass a {what}")
    if re.fullmatch(r"ds_[0-9A-Za-z_-]+", str(path)):  # a platform id where a file was expected
        raise InputError(f"{path}: no such {what}, and this call reads files, not platform "
                         f"datasets: pull it first (rows = zps.pull({str(path)!r}))")
    raise InputError(f"{target}: no such {what} (working folder {Path.cwd()}); check the path")


def read_jsonl(path: PathLike, *, strict: bool = True) -> JsonlReader:
    """Stream the rows of a JSONL file (``.gz`` too); see ``JsonlReader``.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "bad.jsonl")
    >>> _ = Path(path).write_text('{"prompt": "a"}\\n{oops\\n')
    >>> list(read_jsonl(path))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    whileai.errors.RowError: ...bad.jsonl:2: not valid JSON (...
    """
    return JsonlReader(path, strict=strict)


class LoadedRows(list[dict[str, Any]]):
    """A plain list of rows that also says what was skipped while loading (lenient mode)."""

    def __init__(self, rows: Iterable[dict[str, Any]] = (), *, skipped: int = 0,
                 problems: Iterable[str] = ()) -> None:
        super().__init__(rows)
        self.skipped = skipped
        self.problems = list(problems)


def iter_source(source: Any) -> Iterable[Any]:
    """Rows in memory: an iterable, or an object with ``rows`` (a list, or a method)."""
    if isinstance(source, Mapping):
        raise RowError(
            "got one dict where rows were expected; pass a list of rows (e.g. [row]) or a path "
            "to a JSONL file."
        )
    rows = getattr(source, "rows", None)
    if rows is not None and not isinstance(source, (list, tuple)):
        return rows if isinstance(rows, Iterable) else rows()
    if isinstance(source, (str, bytes)) or not isinstance(source, Iterable):
        raise RowError(
            f"cannot read rows from a {type(source).__name__}; pass a path or a list of dicts."
        )
    return source


def load_rows(source: Any, *, strict: bool = True) -> LoadedRows:
    """Rows from a JSONL path (``str`` or ``Path``) or from rows in memory, as a list of dicts.

    In-memory rows are returned as they are (not copied). A non-dict item raises ``RowError``
    naming its index; with ``strict=False`` it is skipped and counted in ``.skipped``.

    >>> load_rows([{"prompt": "a"}, "oops"], strict=False).skipped
    1
    """
    if isinstance(source, (str, os.PathLike)):
        reader = read_jsonl(source, strict=strict)
        rows = list(reader)
        return LoadedRows(rows, skipped=reader.skipped, problems=reader.problems)
    out = LoadedRows()
    for index, row in enumerate(iter_source(source)):
        if isinstance(row, dict):
            out.append(row)
            continue
        message = f"rows[{index}]: expected a dict (one row), got {type(row).__name__}"
        if strict:
            raise RowError(message + "; pass only row dicts, or strict=False to skip them.")
        out.skipped += 1
        if len(out.problems) < _MAX_PROBLEMS:
            out.problems.append(message)
    return out


def _block_line(line: str, where: str, offset: int) -> dict[str, Any]:
    """One odd line of a block, by the reader's rules; ``where:offset`` names it."""
    try:
        return parse_row_text(line, where=f"{where}:{offset}")
    except RowError as exc:
        raise RowError(f"{exc}; fix or delete that line") from None


def iter_block(block: bytes, where: str, before: int) -> Iterator[dict[str, Any]]:
    """The rows of complete JSONL lines, one at a time (blank lines skipped); ``before`` lines
    came earlier in the stream.

    Raises:
        RowError: a line is not UTF-8, not JSON, not an object, or nests too deep
            (``where:line`` names it).
    """
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
            yield _block_line(line, where, offset)


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
