"""Decontaminate a JSONL file by blocks of lines, the rules applied natively where they can be.

The file is read in blocks of whole lines on a background thread; each block goes to
``_backend.DecontamLines`` (the GIL released, lines split across threads), which reads the
checked fields of every plain line, applies the ``same_task``, ``verbatim`` and ``near`` rules
and hands back the kept lines as one ``bytes``, the counts and the first few drops. A line it
defers (not plain JSON, ``NaN``, a carriage return, ...; the pure backend defers every line) is
read here the ordinary way (:meth:`~whileai.rows.jsonl.JsonlReader.parse_line`, so a bad
line fails with ``path:line`` as before) and checked as a one-row chunk. Only the drops that
become report examples are parsed in Python.

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "train.jsonl"
>>> _ = path.write_text('{"prompt": "a"}\\n\\n{"prompt": "b"}')
>>> [len(block) for block in _blocks(read_jsonl(path), 4)]
[16, 1, 15]
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from os import PathLike
from typing import Any

from whileai import _backend
from whileai.rows.jsonl import JsonlReader, read_jsonl
from whileai.rows.jsonl_write import EncodedLine
from whileai.simulations.clean.decontam_index import EvalIndex
from whileai.simulations.clean.decontam_stream import passthrough, read_ahead

__all__ = ["check_jsonl"]

_KEPT, _DROPPED, _DEFERRED = 1, 2, 3
BLOCK_BYTES = 1 << 22  # ~7,000 lines of a few hundred bytes: plenty to split across threads
_TASK_KEYS = ("scenario_id", "task_id")

CheckRows = Callable[[list[dict[str, Any]], int], list[dict[str, Any] | None]]
NoteDrop = Callable[[dict[str, Any], int, dict[str, Any]], None]


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


def _verdict(drop: tuple[Any, ...], index: EvalIndex, fields: tuple[str, ...]) -> dict[str, Any]:
    """The offence dict of a drop the kernel reported (the same dict the row path builds)."""
    _, rule, f, eval_id, covered, total, shared, matched = drop
    if rule == "same_task":
        return {"rule": rule, "field": _TASK_KEYS[f], "match": matched}
    field = fields[f]
    origin = index.origin_for(field)
    if rule == "verbatim":
        return {"rule": rule, "field": field, "eval": origin[eval_id]}
    return {"rule": rule, "field": field, "eval": origin[eval_id],
            "overlap": round(covered / total, 4), "ngram": " ".join(shared)}


def check_jsonl(
    path: str | PathLike[str],
    index: EvalIndex,
    fields: tuple[str, ...],
    overlap: float,
    report: dict[str, Any],
    counter: dict[str, int],
    check_rows: CheckRows,
    note_drop: NoteDrop,
    *,
    examples: int = 5,
    block_size: int | None = None,
    on_block: Callable[[int], None] | None = None,
) -> Iterator[Any]:
    """Yield what to write for the kept rows of a JSONL file, in file order.

    ``report`` gets the counts; ``counter["rows"]`` counts rows read. ``check_rows(rows, start)``
    checks a deferred row the ordinary way (updating the report itself); ``note_drop(row,
    index, verdict)`` records a drop the kernel decided as an example; ``on_block(bytes)`` is
    called after each block (progress).
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
        for rule, count in zip(("same_task", "verbatim", "near"), by_rule, strict=True):
            report["by_rule"][rule] += count
        for field, (verbatim, near), gone in zip(fields, by_field, missing, strict=True):
            report["by_field"][field]["verbatim"] += verbatim
            report["by_field"][field]["near"] += near
            report["missing"][field] += gone
        report["short_texts"] += short
        report["kept"] += status.count(_KEPT)
        if drops or _DEFERRED in status:
            yield from _line_by_line(block, status, kept, kept_at, drops, lineno, reader,
                                     report, counter, check_rows, note_drop, index, fields)
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
    check_rows: CheckRows,
    note_drop: NoteDrop, index: EvalIndex, fields: tuple[str, ...],
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
            note_drop(json.loads(raw), counter["rows"], _verdict(drop_at[i], index, fields))
            counter["rows"] += 1
            continue
        upto = next(pending)
        if upto > written:
            yield EncodedLine(kept[written:upto])
            written = upto
        row = reader.parse_line(raw, lineno + i + 1)
        if row is None:
            continue
        verdict = check_rows([row], counter["rows"])
        counter["rows"] += 1
        if verdict[0] is None:
            report["kept"] += 1
            yield from passthrough([row], [raw], reader.path, [lineno + i + 1])
    counter["rows"] += status.count(_KEPT, done) + status.count(_DROPPED, done)
    if written < len(kept):
        yield EncodedLine(kept[written:])
