"""Decontamination: drop training rows that copy (or share a task with) an evaluation set.

Rules, in order; a row stops at the first that fires:

1. ``same_task``: its ``scenario_id`` or ``task_id`` is also an eval task.
2. ``verbatim``: a checked field equals an eval text after normalisation (the shared tokeniser,
   so case, punctuation and spacing do not matter, and any script works). Texts shorter than
   ``n`` words are checked by this rule only.
3. ``near``: one eval text's shared n-grams cover at least ``overlap`` of the field's words
   (``overlap=0`` means any shared n-gram).
4. ``semantic`` (only with ``embedder=``): cosine similarity at or above ``similarity``.

Prompts are checked against eval prompts; any other field (a reply) against eval answers and
references, never eval replies. This module is the edge: ``against=`` is resolved here
(platform dataset ids pulled, JSONL paths read) into one :class:`EvalIndex`
(:func:`resolve_against`), and train files are read and written here; the stage itself
(:mod:`~whileai.simulations.clean.decontam_check`) sees rows only. A list of rows goes to the
backend a chunk at a time (the texts read out of the dicts natively, the kept rows handed back);
a JSONL file larger than memory works with ``output=``: it is read ahead on a background thread
while the previous block is checked, and a kept row is written back as the line it was read
from (:mod:`~whileai.simulations.clean.decontam_lines`).

>>> clean, report = decontaminate(
...     [{"prompt": "Where is my order 4412?"}, {"prompt": "Refund my blender please"}],
...     against=[{"prompt": "where is my order 4412"}])
>>> [r["prompt"] for r in clean], report["by_rule"]["verbatim"]
(['Refund my blender please'], 1)
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from os import PathLike
from typing import Any

from whileai._gc import paused_gc
from whileai.errors import ConfigError
from whileai.rows.jsonl_write import write_jsonl
from whileai.rows.progress import Progress
from whileai.simulations.clean.decontam_check import (
    MAX_FIELDS,
    RULES,
    chunk_checker,
    finish_report,
    merge_decontamination,
    new_report,
    semantic_fn,
)
from whileai.simulations.clean.decontam_index import (
    EvalIndex,
    build_eval_index,
    iter_source_rows,
)
from whileai.simulations.clean.decontam_lines import check_jsonl, passthrough, row_batches

__all__ = [
    "RULES",
    "build_eval_index",
    "decontaminate",
    "format_decontamination",
    "merge_decontamination",
]


def resolve_against(against: Any, n: int) -> EvalIndex:
    """The eval index of ``against``: the edge where platform dataset ids (``"ds_..."``) are
    pulled and JSONL paths read, before the stage runs on rows.

    >>> resolve_against(["where is my order"], 8).size("prompt")
    1
    """
    if isinstance(against, EvalIndex):
        if against.n != n:
            raise ConfigError(
                f"the eval index was built with n={against.n} but decontaminate got n={n}; "
                "pass the same n or rebuild the index"
            )
        return against
    from whileai.platform.resolve import resolve_ids

    return build_eval_index(resolve_ids(against), n=n)


def decontaminate(
    rows: Any,
    against: Any,
    *,
    n: int = 8,
    fields: Iterable[str] = ("prompt",),
    overlap: float = 0.8,
    embedder: Any = None,
    similarity: float = 0.85,
    output: str | PathLike[str] | None = None,
    chunk_size: int = 4096,
    progress: bool = True,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Return ``(clean_rows, report)``: the rows no eval source contaminates, and why others went.

    Args:
        rows: train rows: a list, any iterator, a run, or a JSONL path (streamed in chunks).
        against: eval rows, JSONL paths, runs, platform dataset ids (``"ds_..."``, pulled), or
            a prebuilt :class:`EvalIndex`.
        n: n-gram length in words. fields: row keys to check. overlap: share of a text's words
            one eval text must cover (0 = any shared n-gram). embedder / similarity: the
            optional semantic rule. output: write clean rows here as JSONL instead of
            returning them (the returned list is then empty). chunk_size: rows per chunk (a
            JSONL file written to ``output`` goes by blocks of lines instead, natively).
        progress: rows checked and dropped so far on stderr (a self-updating line on a
            terminal, a line every few seconds elsewhere) and a summary; False silences it.

    Raises:
        ConfigError: ``overlap`` or ``similarity`` outside [0, 1], no fields, or an index built
            with another ``n``.
    """
    fields = tuple(fields)
    if not fields or not all(isinstance(f, str) for f in fields):
        raise ConfigError(f"fields= must name at least one row key, got {fields!r}")
    if len(fields) > MAX_FIELDS:
        raise ConfigError(f"fields= names {len(fields)} keys; check at most {MAX_FIELDS} at once")
    for name, value in (("overlap", overlap), ("similarity", similarity)):
        if not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
            raise ConfigError(f"{name}= must be a number in [0, 1], got {value!r}")
    index = resolve_against(against, n)
    semantic = None if embedder is None else (semantic_fn(embedder), float(similarity))
    report = new_report(
        index, fields, n=n, overlap=overlap, similarity=similarity if embedder else None,
        embedder=None if embedder is None else (embedder if isinstance(embedder, str) else
                                                getattr(embedder, "__name__", "callable")),
        output=None if output is None else str(output),
    )
    check = chunk_checker(index, fields, overlap, semantic)
    counter = {"rows": 0, "bytes": 0}
    line = Progress("decontaminate", len(rows) if isinstance(rows, (list, tuple)) else None,
                    enabled=progress)
    size = _plain_file_size(rows) if line.enabled else 0

    def on_block(read: int) -> None:
        if size:  # a plain JSONL file: the bytes read give an ETA
            counter["bytes"] += read
            line.estimate(counter["bytes"] / size)
        line.update(counter["rows"], dropped=counter["rows"] - report["kept"])

    def clean_stream() -> Iterator[Any]:
        for chunk, lines, linenos in row_batches(rows, chunk_size):
            kept = check(chunk, counter["rows"], report)
            counter["rows"] += len(chunk)
            on_block(sum(map(len, lines)) if lines is not None else 0)
            if lines is None or output is None:
                yield from kept
            else:
                at = {id(row): k for k, row in enumerate(chunk)}
                keep = [at[id(row)] for row in kept]
                yield from passthrough(kept, [lines[k] for k in keep], rows,
                                       [linenos[k] for k in keep] if linenos else None)

    def in_memory() -> Iterator[Any]:
        """A list of row dicts: one backend call per chunk, no walk over the rows here."""
        todo: list[Any] = rows
        size = max(1, chunk_size)
        for start in range(0, len(todo), size):
            chunk = todo[start:start + size]
            try:
                kept = check(chunk, start, report)
            except TypeError:  # not only row dicts (eval strings, say): read them as rows
                todo = list(iter_source_rows(rows, "rows"))  # raises for what is not a row
                chunk = todo[start:start + size]
                kept = check(chunk, start, report)
            counter["rows"] = start + len(chunk)
            on_block(0)
            yield from kept

    if output is not None and semantic is None and isinstance(rows, (str, PathLike)):
        # A JSONL file to a JSONL file: blocks of lines through the native rules.
        source: Iterator[Any] = check_jsonl(rows, index, fields, overlap, report, counter,
                                            check, on_block=on_block)
    elif isinstance(rows, list) and semantic is None:
        source = in_memory()
    else:
        source = clean_stream()
    clean: list[dict[str, Any]] = []
    with paused_gc(), line:  # millions of short-lived acyclic rows: nothing for the collector
        if output is None:
            clean = list(source)
        else:
            write_jsonl(output, source)
    finish_report(report, counter["rows"], index, semantic is not None)
    return clean, report


def _plain_file_size(rows: Any) -> int:
    """The size of an uncompressed JSONL ``rows`` path (0 for anything else)."""
    if not isinstance(rows, (str, PathLike)) or str(rows).endswith(".gz"):
        return 0
    try:
        return os.path.getsize(rows)
    except OSError:
        return 0  # reading it raises the proper error


def format_decontamination(report: dict[str, Any]) -> str:
    """Render a :func:`decontaminate` report as a few lines of text.

    >>> print(format_decontamination(decontaminate([{"prompt": "hi"}], against=["hi"])[1]))
    ... # doctest: +ELLIPSIS
    decontaminate: 1 rows, 1 dropped (100.0%), 0 kept | n=8 overlap=0.8
    ...
    """
    head = (
        f"decontaminate: {report['rows']} rows, {report['dropped']} dropped "
        f"({100 * report['rate']:.1f}%), {report['kept']} kept | n={report['n']} "
        f"overlap={report['overlap']}"
    )
    rules = ", ".join(f"{k} {v}" for k, v in report["by_rule"].items())
    lines = [head, f"  by rule: {rules}"]
    for ex in report["examples"]:
        extra = ex.get("overlap", ex.get("similarity", ex.get("match", "")))
        lines.append(
            f"  row {ex['index']} {ex['rule']} ({ex['field']}) {extra} <- {ex.get('eval', '')}: "
            f"{ex['text']!r}"
        )
    lines.extend(f"  note: {note}" for note in report["notes"])
    return "\n".join(lines)
