"""JSONL in and out: one row (a JSON object) per line. The only module here that touches files.

- ``read_jsonl(path, strict=True)`` streams rows; strict stops at the first bad line with
  ``path:line``, lenient skips it and counts it (``reader.skipped``, ``reader.problems``).
- ``load_rows(source)`` takes a path or rows already in memory and returns a list.
- ``write_jsonl(path, rows)`` replaces the file atomically; ``JsonlAppender`` adds rows one at a
  time (thread-safe, flushed per row).

Encoding: UTF-8 without ASCII escapes; tuples and sets become lists, dataclasses (and objects
with ``to_dict``) become objects. A NaN or infinite float is refused with ``RowError`` naming the
row and field, because JSON has no such value and a silent ``null`` would read as "unjudged".
``.gz`` paths are read and written gzip-compressed.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "rows.jsonl")
>>> write_jsonl(path, [{"prompt": "hi"}, {"prompt": "über"}])
2
>>> load_rows(path)
[{'prompt': 'hi'}, {'prompt': 'über'}]
"""

from __future__ import annotations

import dataclasses
import gzip
import io
import json
import math
import os
import secrets
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from whileai.errors import RowError

__all__ = [
    "JsonlAppender",
    "JsonlReader",
    "LoadedRows",
    "dumps_row",
    "load_rows",
    "read_jsonl",
    "write_jsonl",
]

PathLike = str | os.PathLike[str]
_MAX_PROBLEMS = 100  # problems kept verbatim; the count (`skipped`) is always exact


def _default(value: Any) -> Any:
    if isinstance(value, (set, frozenset)):
        try:
            return sorted(value)
        except TypeError:
            return list(value)
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        return to_dict()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    if isinstance(value, Path):
        return str(value)
    item = getattr(value, "item", None)  # numpy scalars
    if callable(item) and hasattr(value, "dtype"):
        return item()
    raise TypeError(f"a {type(value).__name__} is not JSON")


def _find_unencodable(value: Any, path: str) -> tuple[str, str] | None:
    """(field path, what is wrong) for the first NaN/inf float or non-JSON object in ``value``."""
    if isinstance(value, float):
        return None if math.isfinite(value) else (path, f"{value} is not a JSON number")
    if isinstance(value, Mapping):
        for k, v in value.items():
            found = _find_unencodable(v, f"{path}.{k}" if path else str(k))
            if found:
                return found
        return None
    if isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            found = _find_unencodable(v, f"{path}[{i}]")
            if found:
                return found
        return None
    if value is None or isinstance(value, (str, int)):
        return None
    try:
        converted = _default(value)
    except TypeError:
        return path, f"JSON cannot hold a {type(value).__name__}"
    return _find_unencodable(converted, path)


def dumps_row(row: Any, *, where: str = "row") -> str:
    """Encode one row as a single JSON line (no trailing newline).

    Raises ``RowError`` naming ``where`` and the field when the row is not a dict, holds a NaN
    or infinite float, or holds an object JSON cannot represent.

    >>> dumps_row({"seeded": ("skip_check",), "reward": 1.0})
    '{"seeded": ["skip_check"], "reward": 1.0}'
    """
    if not isinstance(row, Mapping):
        raise RowError(f"{where}: a row must be a dict (JSON object), got {type(row).__name__}")
    try:
        return json.dumps(row, ensure_ascii=False, allow_nan=False, default=_default)
    except (ValueError, TypeError) as exc:
        path, what = _find_unencodable(row, "") or ("?", str(exc))
        raise RowError(
            f"{where}: cannot write field `{path}` as JSON: {what}. Use null for a missing "
            "number and plain lists/dicts/strings/numbers for everything else."
        ) from exc


def _open_text(path: Path, mode: str) -> IO[str]:
    if path.suffix == ".gz":
        return io.TextIOWrapper(gzip.GzipFile(path, mode + "b"), encoding="utf-8", newline="\n")
    return open(path, mode, encoding="utf-8", newline="\n")


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
        if not self.path.is_file():
            raise FileNotFoundError(
                f"{self.path}: no such JSONL file (working folder {Path.cwd()}); check the path"
            )
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
        self.rows_read = self.skipped = self.blank_lines = 0
        self.problems = []
        opener = gzip.open if self.path.suffix == ".gz" else open
        with opener(self.path, "rb") as handle:
            for lineno, raw in enumerate(handle, start=1):
                where = f"{self.path}:{lineno}"
                try:
                    text = raw.decode("utf-8-sig" if lineno == 1 else "utf-8")
                except UnicodeDecodeError as exc:
                    self._bad(f"{where}: not UTF-8 text ({exc.reason} at byte {exc.start})")
                    continue
                if not text.strip():
                    self.blank_lines += 1
                    continue
                try:
                    row = json.loads(text)
                except json.JSONDecodeError as exc:
                    self._bad(f"{where}: not valid JSON ({exc.msg} at column {exc.colno})")
                    continue
                if not isinstance(row, dict):
                    self._bad(
                        f"{where}: expected a JSON object (one row per line), got "
                        f"{type(row).__name__}"
                    )
                    continue
                self.rows_read += 1
                yield row

    def __repr__(self) -> str:
        return (f"JsonlReader({str(self.path)!r}, strict={self.strict}, rows_read="
                f"{self.rows_read}, skipped={self.skipped})")


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


def _iter_source(source: Any) -> Iterable[Any]:
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
    for index, row in enumerate(_iter_source(source)):
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


def write_jsonl(path: PathLike, rows: Any) -> int:
    """Write rows to ``path`` as JSONL, replacing it atomically; return how many were written.

    The rows go to a temporary file in the same folder, which then replaces ``path`` in one
    step, so a reader never sees half a file and a failure leaves the old file untouched.
    Missing parent folders are created.

    >>> import os, tempfile
    >>> write_jsonl(os.path.join(tempfile.mkdtemp(), "out", "rows.jsonl"), [{"prompt": "a"}])
    1
    """
    source = _iter_source(rows)  # a wrong kind of source fails before any file is touched
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    temp = target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    count = 0
    # os.open with 0o666 lets the umask decide the final permissions, as a plain open would.
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as raw:
            zipped = gzip.GzipFile(fileobj=raw, mode="wb") if target.suffix == ".gz" else None
            write: Callable[[bytes], int] = raw.write if zipped is None else zipped.write
            for index, row in enumerate(source):
                write((dumps_row(row, where=f"rows[{index}]") + "\n").encode("utf-8"))
                count += 1
            if zipped is not None:
                zipped.close()
            raw.flush()
            os.fsync(raw.fileno())
        os.replace(temp, target)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    return count


class JsonlAppender:
    """Append rows to a JSONL file one at a time; each row is one flushed line.

    Rows are added after whatever the file holds; ``truncate=True`` empties it first.

    Safe to share between threads (a lock guards each write). A row that cannot be encoded
    raises ``RowError`` before anything is written. If the file ends in a partial line (a crash
    mid-write), a newline is added first so the next row starts on its own line.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "live.jsonl")
    >>> with JsonlAppender(path) as out:
    ...     out.append({"prompt": "a"})
    >>> out.count, load_rows(path)
    (1, [{'prompt': 'a'}])
    """

    def __init__(self, path: PathLike, *, truncate: bool = False) -> None:
        self.path = Path(path)
        self.count = 0
        self._lock = threading.Lock()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if truncate:  # start a fresh file instead of adding to an earlier run's rows
            self.path.write_bytes(b"")
        needs_newline = False
        if self.path.suffix != ".gz" and self.path.exists() and self.path.stat().st_size:
            with open(self.path, "rb") as handle:
                handle.seek(-1, os.SEEK_END)
                needs_newline = handle.read(1) != b"\n"
        self._handle: IO[str] | None = _open_text(self.path, "a")
        if needs_newline:
            self._handle.write("\n")
            self._handle.flush()

    def append(self, row: Mapping[str, Any]) -> None:
        """Write one row and flush it."""
        line = dumps_row(row, where=f"{self.path} row {self.count}") + "\n"
        with self._lock:
            if self._handle is None:
                raise RowError(f"{self.path}: the appender is closed; open a new JsonlAppender.")
            self._handle.write(line)
            self._handle.flush()
            self.count += 1

    def close(self) -> None:
        """Close the file; further appends raise ``RowError``."""
        with self._lock:
            if self._handle is not None:
                self._handle.close()
                self._handle = None

    def __enter__(self) -> JsonlAppender:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
