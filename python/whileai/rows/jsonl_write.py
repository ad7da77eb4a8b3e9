"""Writing JSONL: rows encoded once, files replaced atomically, appends locked and flushed.

- ``write_jsonl(path, rows)`` replaces the file atomically; ``JsonlAppender`` adds rows one at a
  time (thread-safe, flushed per row). ``write_jsonl`` is a door out of the process: every row
  passes the exit filter (``rows.outbound``: no teacher-only ``privileged`` block unless
  ``keep_privileged=True``, no ``vector``, secrets masked).

Encoding: UTF-8 without ASCII escapes; tuples and sets become lists, dataclasses (and objects
with ``to_dict``) become objects. A NaN or infinite float is refused with ``RowError`` naming the
row and field, because JSON has no such value and a silent ``null`` would read as "unjudged".
``.gz`` paths are read and written gzip-compressed.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "rows.jsonl")
>>> write_jsonl(path, [{"prompt": "hi"}, {"prompt": "über"}])
2
>>> from whileai.rows.jsonl import load_rows
>>> load_rows(path)
[{'prompt': 'hi'}, {'prompt': 'über'}]
"""

from __future__ import annotations

import contextlib
import dataclasses
import gzip
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
from whileai.rows.depth import deep_error, loads_limited
from whileai.rows.jsonl import PathLike, iter_source
from whileai.rows.outbound import outbound, outbound_check

try:  # POSIX: cross-process locks on appends
    import fcntl
except ImportError:  # pragma: no cover - Windows: appends are locked per process only
    fcntl = None  # type: ignore[assignment]

__all__ = ["EncodedLine", "JsonlAppender", "dumps_row", "remove_stale_temps", "write_jsonl"]


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
    except RecursionError:
        raise deep_error(where) from None
    except (ValueError, TypeError) as exc:
        path, what = _find_unencodable(row, "") or ("?", str(exc))
        raise RowError(
            f"{where}: cannot write field `{path}` as JSON: {what}. Use null for a missing "
            "number and plain lists/dicts/strings/numbers for everything else."
        ) from exc


class EncodedLine(bytes):
    """Rows already encoded as JSON object lines (UTF-8, each ending in a newline):
    ``write_jsonl`` writes them as they are instead of encoding a dict."""

    __slots__ = ()


def _filtered_lines(block: bytes, index: int, keep_privileged: bool,
                    clean: Callable[[str], bool]) -> bytes:
    """Encoded JSONL lines through the exit filter: returned as they are when ``clean`` says
    nothing in them could need it, else each line decoded, filtered and encoded again."""
    text = block.decode("utf-8", "surrogatepass")
    if clean(text):
        return block
    out = []
    for line in text.split("\n"):  # not splitlines: U+2028 may sit inside a JSON string
        if line.strip():
            row = outbound(loads_limited(line, where=f"rows[{index}]"),
                           keep_privileged=keep_privileged)
            out.append(dumps_row(row, where=f"rows[{index}]") + "\n")
    return "".join(out).encode("utf-8", "surrogatepass")


def write_jsonl(path: PathLike, rows: Any, *, keep_privileged: bool = False) -> int:
    """Write rows to ``path`` as JSONL, replacing it atomically; return how many were written.

    The rows go to a temporary file in the same folder, which then replaces ``path`` in one
    step, so a reader never sees half a file and a failure leaves the old file untouched.
    Missing parent folders are created. Every row passes the exit filter
    (``rows.outbound``); ``keep_privileged=True`` keeps the teacher-only block (a private
    file, such as an environment package's server-side ``info``).

    >>> import os, tempfile
    >>> write_jsonl(os.path.join(tempfile.mkdtemp(), "out", "rows.jsonl"), [{"prompt": "a"}])
    1
    """
    source = iter_source(rows)  # a wrong kind of source fails before any file is touched
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temps(target)
    temp = target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    count = 0
    # os.open with 0o666 lets the umask decide the final permissions, as a plain open would.
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as raw:
            zipped = gzip.GzipFile(fileobj=raw, mode="wb") if target.suffix == ".gz" else None
            write: Callable[[bytes], int] = raw.write if zipped is None else zipped.write
            clean = outbound_check()  # the environment's keys, read once for the whole file
            for index, row in enumerate(source):
                if isinstance(row, EncodedLine):
                    write(_filtered_lines(row, index, keep_privileged, clean))
                else:
                    text = dumps_row(row, where=f"rows[{index}]")
                    if not clean(text):
                        text = dumps_row(outbound(row, keep_privileged=keep_privileged),
                                         where=f"rows[{index}]")
                    write((text + "\n").encode("utf-8"))
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


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # another user's process, or a platform that cannot tell: keep its file
    return True


def remove_stale_temps(target: PathLike) -> int:
    """Delete ``.NAME.PID.HEX.tmp`` files beside ``target`` left by writers that are dead.

    ``write_jsonl`` (and the other atomic writers) write to such a temp file and rename it over
    ``target``; a writer killed mid-way leaves it behind. Files of live processes are kept.
    Returns how many files were removed.

    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> open(os.path.join(folder, ".rows.jsonl.999999999.ab12cd34.tmp"), "w").close()
    >>> remove_stale_temps(os.path.join(folder, "rows.jsonl"))
    1
    """
    target = Path(target)
    prefix = f".{target.name}."
    removed = 0
    try:
        names = os.listdir(target.parent)
    except OSError:
        return 0
    for name in names:
        if not (name.startswith(prefix) and name.endswith(".tmp")):
            continue
        parts = name[len(prefix):-len(".tmp")].split(".")
        if len(parts) != 2 or not parts[0].isdigit():
            continue
        if not _pid_alive(int(parts[0])):
            with contextlib.suppress(OSError):
                (target.parent / name).unlink()
                removed += 1
    return removed


class JsonlAppender:
    """Append rows to a JSONL file one at a time; each row is one flushed line.

    Rows are added after whatever the file holds; ``truncate=True`` empties it first. The file
    is never rewritten: each write holds an exclusive ``fcntl`` lock on it (on POSIX), so
    several threads or processes may append to one file without losing or mixing lines. A torn
    last line (a writer killed mid-line) is cut back to the last newline before the next row
    goes in, and ``cut_bytes`` counts what was cut.

    A row that cannot be encoded raises ``RowError`` before anything is written.

    >>> import os, tempfile
    >>> from whileai.rows.jsonl import load_rows
    >>> path = os.path.join(tempfile.mkdtemp(), "live.jsonl")
    >>> with JsonlAppender(path) as out:
    ...     out.append({"prompt": "a"})
    >>> out.count, load_rows(path)
    (1, [{'prompt': 'a'}])
    """

    def __init__(self, path: PathLike, *, truncate: bool = False) -> None:
        self.path = Path(path)
        self.count = 0
        self.cut_bytes = 0
        self._lock = threading.Lock()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._zipped = self.path.suffix == ".gz"
        self._raw: IO[bytes] | None = open(self.path, "a+b")  # noqa: SIM115 - closed in close()
        self._gz: gzip.GzipFile | None = None
        if truncate:  # start a fresh file instead of adding to an earlier run's rows
            with _locked(self._raw):
                self._raw.truncate(0)
        if self._zipped:
            self._gz = gzip.GzipFile(fileobj=self._raw, mode="ab")

    def _cut_torn_tail(self, raw: IO[bytes]) -> None:
        """Under the lock: drop a last line that has no newline (its writer died mid-line)."""
        fd = raw.fileno()
        size = os.fstat(fd).st_size
        if not size or os.pread(fd, 1, size - 1) == b"\n":
            return
        start = max(0, size - 65536)
        while True:
            chunk = os.pread(fd, size - start, start)
            cut = chunk.rfind(b"\n")
            if cut >= 0:
                keep = start + cut + 1
                break
            if start == 0:
                keep = 0
                break
            start = max(0, start - 65536)
        os.ftruncate(fd, keep)
        self.cut_bytes += size - keep

    def _write(self, data: bytes, rows: int) -> None:
        with self._lock:
            raw = self._raw
            if raw is None:
                raise RowError(f"{self.path}: the appender is closed; open a new JsonlAppender.")
            with _locked(raw):
                if self._gz is not None:
                    self._gz.write(data)
                    self._gz.flush()
                else:
                    self._cut_torn_tail(raw)
                    raw.write(data)
                raw.flush()
            self.count += rows

    def append(self, row: Mapping[str, Any]) -> None:
        """Write one row and flush it."""
        self._write((dumps_row(row, where=f"{self.path} row {self.count}") + "\n")
                    .encode("utf-8"), 1)

    def extend(self, rows: Iterable[Mapping[str, Any]]) -> int:
        """Write several rows in one locked write (all encoded first); return how many."""
        return self.extend_lines([dumps_row(row, where=f"{self.path} row {self.count + i}")
                                  for i, row in enumerate(rows)])

    def extend_lines(self, lines: list[str]) -> int:
        """Write rows already encoded by ``dumps_row`` (one JSON object each, no newline)."""
        if lines:
            self._write("".join(line + "\n" for line in lines).encode("utf-8"), len(lines))
        return len(lines)

    def close(self) -> None:
        """Close the file; further appends raise ``RowError``."""
        with self._lock:
            if self._gz is not None:
                self._gz.close()
                self._gz = None
            if self._raw is not None:
                self._raw.close()
                self._raw = None

    def __enter__(self) -> JsonlAppender:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


@contextlib.contextmanager
def _locked(handle: IO[bytes]) -> Iterator[None]:
    """Hold an exclusive advisory lock on ``handle`` (a no-op where ``fcntl`` is missing)."""
    if fcntl is None:
        yield
        return
    fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
    try:
        yield
    finally:
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
