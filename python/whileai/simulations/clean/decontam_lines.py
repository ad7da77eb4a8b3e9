"""Train rows from files for decontamination: blocks of lines checked natively, batches of rows.

A JSONL file written to a JSONL file goes by blocks of whole lines, read on a background thread
(:func:`check_jsonl`); each block goes to ``_backend.DecontamLines`` (the GIL released, lines
split across threads), which reads the checked fields of every plain line, applies the
``same_task``, ``verbatim`` and ``near`` rules and hands back the kept lines as one ``bytes``,
the counts and the first few drops. A line it defers (not plain JSON, ``NaN``, a carriage
return, ...; the pure backend defers every line) is read here the ordinary way
(:meth:`~whileai.rows.jsonl.JsonlReader.parse_line`, so a bad line fails with
``path:line`` as before) and checked as a one-row chunk. Only the drops that become report
examples are parsed in Python.

Anything else comes in batches of rows (:func:`row_batches`): a JSONL file is read ahead on a
background thread (:func:`read_ahead`) while the previous batch is checked, each row keeping
its line, so kept rows are written back as they were read (:func:`passthrough`).

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "train.jsonl"
>>> _ = path.write_text('{"prompt": "a"}\\n\\n{"prompt": "b"}')
>>> [len(block) for block in _blocks(read_jsonl(path), 4)]
[16, 1, 15]
>>> batches = list(row_batches([{"prompt": "a"}, {"prompt": "b"}, "c"], 2))
>>> [(len(rows), lines, linenos) for rows, lines, linenos in batches]
[(2, None, None), (1, None, None)]
"""

from __future__ import annotations

import contextlib
import json
import queue
import threading
from collections.abc import Callable, Iterator
from itertools import islice
from os import PathLike
from typing import Any

from whileai import _backend
from whileai.rows.jsonl import JsonlReader, read_jsonl
from whileai.rows.jsonl_write import EncodedLine, dumps_row
from whileai.simulations.clean.decontam_check import (
    ChunkCheck,
    add_counts,
    note_example,
    verdict_of,
)
from whileai.simulations.clean.decontam_index import EvalIndex, iter_source_rows

__all__ = ["check_jsonl", "passthrough", "read_ahead", "row_batches"]

_KEPT, _DROPPED, _DEFERRED = 1, 2, 3
BLOCK_BYTES = 1 << 22  # ~7,000 lines of a few hundred bytes: plenty to split across threads
_BOM = b"\xef\xbb\xbf"
# (rows, their lines as read, their line numbers from 1); the last two only for JSONL files.
Batch = tuple[list[dict[str, Any]], list[bytes] | None, list[int] | None]


def _blocks(reader: JsonlReader, size: int) -> Iterator[bytes]:
    """The file in blocks of about ``size`` bytes, each ending at a line end (but the last)."""
    with reader.open() as handle:
        rest: list[bytes] = []
        while chunk := handle.read(size):
            cut = chunk.rfind(b"\n") + 1
            if not cut:
                rest.append(chunk)
                continue
            yield b"".join([*rest, chunk[:cut]])
            rest = [chunk[cut:]] if cut < len(chunk) else []
        if rest:
            yield b"".join(rest)


def check_jsonl(
    path: str | PathLike[str],
    index: EvalIndex,
    fields: tuple[str, ...],
    overlap: float,
    report: dict[str, Any],
    counter: dict[str, int],
    check: ChunkCheck,
    *,
    examples: int = 5,
    block_size: int | None = None,
    on_block: Callable[[int], None] | None = None,
) -> Iterator[Any]:
    """Yield what to write for the kept rows of a JSONL file, in file order.

    ``report`` gets the counts; ``counter["rows"]`` counts rows read. ``check(rows, start,
    report)`` checks a deferred row the ordinary way (updating the report itself);
    ``on_block(bytes)`` is called after each block (progress).
    """
    reader = read_jsonl(path)
    rules = _backend.DecontamLines(
        list(fields), [index.index_for(f) if index.size(f) else None for f in fields],
        sorted(index.task_ids), float(overlap), index.n,
    )
    lineno = 0
    for block in read_ahead(_blocks(reader, block_size or BLOCK_BYTES), 2):
        wanted = max(0, examples - len(report["examples"]))
        status, kept, kept_at, by_rule, by_field, missing, short, drops = rules.check(block, wanted)
        add_counts(report, fields, by_rule, by_field, missing, short)
        report["kept"] += status.count(_KEPT)
        if drops or _DEFERRED in status:
            yield from _line_by_line(block, status, kept, kept_at, drops, lineno, reader,
                                     report, counter, check, index, fields)
        else:
            counter["rows"] += status.count(_KEPT) + status.count(_DROPPED)
            if kept:
                yield EncodedLine(kept)
        lineno += len(status)
        if on_block is not None:
            on_block(len(block))


def _line_by_line(
    block: bytes, status: bytes, kept: bytes, kept_at: list[int], drops: list[Any],
    lineno: int, reader: JsonlReader, report: dict[str, Any], counter: dict[str, int],
    check: ChunkCheck, index: EvalIndex, fields: tuple[str, ...],
) -> Iterator[Any]:
    """A block with deferred lines or example drops: handle those in line order."""
    lines = block.split(b"\n")
    drop_at = {drop[0]: drop for drop in drops}
    deferred = [i for i, s in enumerate(status) if s == _DEFERRED]
    done = written = 0
    pending = iter(kept_at)
    for i in sorted({*deferred, *drop_at}):
        counter["rows"] += status.count(_KEPT, done, i) + status.count(_DROPPED, done, i)
        done = i + 1
        raw = lines[i] + b"\n" if i + 1 < len(lines) else lines[i]
        if status[i] == _DROPPED:
            note_example(report, json.loads(raw), counter["rows"],
                         verdict_of(drop_at[i], index, fields))
            counter["rows"] += 1
            continue
        upto = next(pending)
        if upto > written:
            yield EncodedLine(kept[written:upto])
            written = upto
        row = reader.parse_line(raw, lineno + i + 1)
        if row is None:
            continue
        kept_row = check([row], counter["rows"], report)
        counter["rows"] += 1
        if kept_row:
            yield from passthrough(kept_row, [raw], reader.path, [lineno + i + 1])
    counter["rows"] += status.count(_KEPT, done) + status.count(_DROPPED, done)
    if written < len(kept):
        yield EncodedLine(kept[written:])


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
