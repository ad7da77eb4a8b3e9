"""Train rows for decontamination in batches; a JSONL file is read ahead on a background thread.

Reading and parsing a JSONL file (Python, holding the GIL) overlaps with checking the previous
batch (the n-gram kernel, which releases it) and with writing the kept rows. Each row read from a
file keeps its line, so kept rows are written back as they were read (:func:`passthrough`), a
batch at a time, instead of being encoded again.

>>> batches = list(row_batches([{"prompt": "a"}, {"prompt": "b"}, "c"], 2))
>>> [(len(rows), lines) for rows, lines in batches]
[(2, None), (1, None)]
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Iterator
from itertools import islice
from os import PathLike
from typing import Any

from whileai.simulations.clean.decontam_index import iter_source_rows
from whileai.simulations.io import EncodedLine, read_jsonl

__all__ = ["passthrough", "read_ahead", "row_batches"]

Batch = tuple[list[dict[str, Any]], list[bytes] | None]
_BOM = b"\xef\xbb\xbf"


def row_batches(rows: Any, size: int, *, depth: int = 2) -> Iterator[Batch]:
    """Yield ``(rows, lines)`` batches of at most ``size`` rows; ``lines`` only for JSONL files.

    A JSONL path is read by a background thread up to ``depth`` batches ahead; its errors (a bad
    line, a missing file) are raised here, in the caller's thread.
    """
    size = max(1, size)
    if isinstance(rows, (str, PathLike)):
        yield from read_ahead(_file_batches(rows, size), depth)
        return
    stream = iter(iter_source_rows(rows, "rows"))
    while chunk := list(islice(stream, size)):
        yield chunk, None


def _file_batches(path: str | PathLike[str], size: int) -> Iterator[Batch]:
    rows: list[dict[str, Any]] = []
    lines: list[bytes] = []
    for row, line in read_jsonl(path).iter_lines():
        rows.append(row)
        lines.append(line)
        if len(rows) == size:
            yield rows, lines
            rows, lines = [], []
    if rows:
        yield rows, lines


def passthrough(rows: list[dict[str, Any]], lines: list[bytes]) -> list[Any]:
    """What to write for kept rows: their lines as read, or a row where it must be re-encoded.

    The common case (every line plain: ends in one newline, no carriage return, no byte-order
    mark, no ``NaN`` or ``Infinity`` anywhere) is one :class:`EncodedLine` for the whole batch.
    Otherwise each line is checked on its own: a line with ``NaN`` or ``Infinity`` (which
    Python's JSON reader accepts but JSON does not) goes back as its row, so writing it fails
    with the usual error naming the field.

    >>> passthrough([{"a": 1}, {"b": 2}], [b'{"a":1}\\n', b'{"b": 2}\\n'])
    [b'{"a":1}\\n{"b": 2}\\n']
    >>> passthrough([{"a": 1}, {"a": float("nan")}], [b'{"a":1}\\r\\n', b'{"a": NaN}'])
    [b'{"a":1}\\n', {'a': nan}]
    """
    blob = b"".join(lines)
    plain = not (b"NaN" in blob or b"Infinity" in blob or b"\r" in blob or _BOM in blob)
    if plain and blob.count(b"\n") == len(lines) and blob.endswith(b"\n"):
        return [EncodedLine(blob)] if blob else []
    out: list[Any] = []
    for row, line in zip(rows, lines, strict=True):
        if b"NaN" in line or b"Infinity" in line:
            out.append(row)
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
