"""Train rows for decontamination in batches; a JSONL file is read ahead on a background thread.

Reading and parsing a JSONL file (Python, holding the GIL) overlaps with checking the previous
batch (the n-gram kernel, which releases it) and with writing the kept rows. Each row read from a
file keeps its line, so kept rows are written back as they were read (:func:`passthrough`), a
batch at a time, instead of being encoded again.

>>> batches = list(row_batches([{"prompt": "a"}, {"prompt": "b"}, "c"], 2))
>>> [(len(rows), lines, linenos) for rows, lines, linenos in batches]
[(2, None, None), (1, None, None)]
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Iterator
from itertools import islice
from os import PathLike
from typing import Any

from whileai.rows.jsonl import read_jsonl
from whileai.rows.jsonl_write import EncodedLine, dumps_row
from whileai.simulations.clean.decontam_index import iter_source_rows

__all__ = ["passthrough", "read_ahead", "row_batches"]

# (rows, their lines as read, their line numbers from 1); the last two only for JSONL files.
Batch = tuple[list[dict[str, Any]], list[bytes] | None, list[int] | None]
_BOM = b"\xef\xbb\xbf"


def row_batches(rows: Any, size: int, *, depth: int = 2) -> Iterator[Batch]:
    """Yield ``(rows, lines, linenos)`` batches of at most ``size`` rows; ``lines`` (as read) and
    ``linenos`` (from 1) only for JSONL files.

    A JSONL path is read by a background thread up to ``depth`` batches ahead; its errors (a bad
    line, a missing file) are raised here, in the caller's thread.
    """
    size = max(1, size)
    if isinstance(rows, (str, PathLike)):
        yield from read_ahead(_file_batches(rows, size), depth)
        return
    stream = iter(iter_source_rows(rows, "rows"))
    while chunk := list(islice(stream, size)):
        yield chunk, None, None


def _file_batches(path: str | PathLike[str], size: int) -> Iterator[Batch]:
    rows: list[dict[str, Any]] = []
    lines: list[bytes] = []
    linenos: list[int] = []
    for lineno, row, line in read_jsonl(path).iter_lines():
        rows.append(row)
        lines.append(line)
        linenos.append(lineno)
        if len(rows) == size:
            yield rows, lines, linenos
            rows, lines, linenos = [], [], []
    if rows:
        yield rows, lines, linenos


def passthrough(
    rows: list[dict[str, Any]], lines: list[bytes], path: Any = None, linenos: Any = None
) -> list[Any]:
    """What to write for kept rows: their lines as read, or encoded again where they must be.

    The common case (every line plain: ends in one newline, no carriage return, no byte-order
    mark, no ``NaN`` or ``Infinity`` anywhere) is one :class:`EncodedLine` for the whole batch.
    Otherwise each line is checked on its own: a line with ``NaN`` or ``Infinity`` (which
    Python's JSON reader accepts but JSON does not) is encoded again from its row, so one that
    really holds such a number fails here with the usual error naming the field and the row: as
    ``path:line`` with the file's ``path`` and the rows' ``linenos``, else as ``rows[i]``.

    >>> passthrough([{"a": 1}, {"b": 2}], [b'{"a":1}\\n', b'{"b": 2}\\n'])
    [b'{"a":1}\\n{"b": 2}\\n']
    >>> passthrough([{"a": 1}, {"a": "NaN"}], [b'{"a":1}\\r\\n', b'{"a": "NaN"}'])
    [b'{"a":1}\\n', b'{"a": "NaN"}\\n']
    >>> passthrough([{"a": float("nan")}], [b'{"a": NaN}\\n'], "in.jsonl", [7])
    Traceback (most recent call last):
    whileai.errors.RowError: in.jsonl:7: cannot write field `a` as JSON: nan is not a JSON number...
    """
    blob = b"".join(lines)
    plain = not (b"NaN" in blob or b"Infinity" in blob or b"\r" in blob or _BOM in blob)
    if plain and blob.count(b"\n") == len(lines) and blob.endswith(b"\n"):
        return [EncodedLine(blob)] if blob else []
    out: list[Any] = []
    for i, (row, line) in enumerate(zip(rows, lines, strict=True)):
        if b"NaN" in line or b"Infinity" in line:
            place = f"rows[{i}]" if linenos is None else f"{path}:{linenos[i]}"
            out.append(EncodedLine((dumps_row(row, where=place) + "\n").encode("utf-8")))
        else:
            out.append(EncodedLine(line.removeprefix(_BOM).rstrip(b"\r\n") + b"\n"))
    return out


def read_ahead(items: Iterator[Any], depth: int) -> Iterator[Any]:
    """Iterate ``items`` on a background thread, at most ``depth`` items ahead of the caller.

    An exception raised while producing is re-raised in the caller's thread; a caller that stops
    early stops the thread too.

    >>> list(read_ahead(iter(range(5)), 2))
    [0, 1, 2, 3, 4]
    """
    slots: queue.Queue[tuple[str, Any]] = queue.Queue(maxsize=max(1, depth))
    stop = threading.Event()

    def put(kind: str, item: Any) -> bool:
        while not stop.is_set():
            with contextlib.suppress(queue.Full):
                slots.put((kind, item), timeout=0.05)
                return True
        return False

    def produce() -> None:
        try:
            for item in items:
                if not put("item", item):
                    return
            put("end", None)
        except BaseException as exc:  # handed to the caller, who raises it
            put("error", exc)
        finally:
            close = getattr(items, "close", None)
            if close is not None:
                close()  # a generator stopped early closes its file here, in its own thread

    worker = threading.Thread(target=produce, name="whileai-read-ahead", daemon=True)
    worker.start()
    try:
        while True:
            kind, item = slots.get()
            if kind == "end":
                return
            if kind == "error":
                raise item
            yield item
    finally:
        stop.set()
        worker.join()
