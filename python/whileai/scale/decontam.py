"""Decontaminate on a Ray cluster: the eval index built once, shipped once, applied where rows are.

Two inputs, one answer: the report equals the one
:func:`whileai.simulations.decontaminate` makes in one pass over the same rows in the same
order (example row numbers included), and the kept rows are the same.

- JSONL paths: the files are cut into byte spans (:mod:`whileai.scale.spans`); one Ray task per
  span reads its lines, checks them batch by batch and writes its kept lines (Parquet) or hands
  them back. Each span's report is keyed by the span's place in the files, so the merge follows
  the files' order whatever order the tasks finish in; a task holds one span, never the file.
- A Ray Dataset: ``map_batches`` tasks check its batches; each batch's report rides on its
  first row and the reports are read back in dataset order (``preserve_order`` on for that one
  execution, then put back). Row numbers follow the dataset's order, which for
  ``ray.data.read_text`` of a file over 50 MiB is not the file's (see :mod:`whileai.scale.spans`):
  pass the path instead.

In both, the index goes into the object store once and the reports merge by
:func:`~whileai.simulations.clean.decontam.merge_decontamination`.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterable
from os import PathLike
from typing import Any

from whileai.errors import ConfigError, RowError
from whileai.rows.jsonl_write import dumps_row
from whileai.rows.progress import Progress
from whileai.scale._ray import is_dataset, ordered, require_ray
from whileai.scale.rows import (
    batch_rows,
    kept_rows,
    leaving_row,
    raise_problem,
    unwritable,
)
from whileai.scale.spans import (
    Span,
    copy_span,
    is_paths,
    line_number,
    line_text,
    numbered_rows,
    spans,
)
from whileai.simulations.clean.decontam import (
    decontaminate,
    merge_decontamination,
    resolve_against,
)
from whileai.simulations.clean.decontam_index import EvalIndex

__all__ = ["decontaminate_dataset"]

_KEPT = "__whileai_kept"
_REPORT = "__whileai_report"
_SIZE = "__whileai_batch_rows"  # beside a batch's report: its rows, blank texts included
_PROBLEMS = "__whileai_problems"
_BOM = b"\xef\xbb\xbf"
_ERROR = "error"  # a span's bad line, in place of its report
_SPAN_ENV = {"env_vars": {"MALLOC_ARENA_MAX": "2"}}


# The eval index a worker process loaded last, by object id: loaded once per worker, not once
# per task or batch (a 10,000-row index is ~20 MiB to fetch and rebuild).
_LOADED: dict[str, EvalIndex] = {}


def _load_index(index: Any) -> EvalIndex:
    """The index behind ``[ref]`` (an object-store reference in a list), cached per worker."""
    ray = require_ray()
    ref = index[0] if isinstance(index, list) else index
    if not isinstance(ref, ray.ObjectRef):
        return ref  # type: ignore[no-any-return]
    key = ref.hex()
    if key not in _LOADED:
        _LOADED.clear()
        _LOADED[key] = ray.get(ref)
    return _LOADED[key]


def _check(table: Any, index: Any, column: str | None, knobs: dict[str, Any]) -> Any:
    """Check one batch: the kept flag per row, and the batch's report on its first row.

    The report also carries the batch's size and its first bad row (:mod:`whileai.scale.rows`),
    which the driver raises. Rows read from JSON text are lines: a kept one holding ``NaN`` or
    ``Infinity`` is refused as ``decontaminate(path, output=...)`` refuses to write it.
    """
    import pyarrow as pa

    eval_index = _load_index(index)
    rows, at, problems = batch_rows(table, column)
    kept, report = decontaminate(rows, eval_index, **knobs)
    position = {id(row): pos for pos, row in zip(at, rows, strict=True)}
    flags = [False] * table.num_rows
    configured = column is not None and not any(p.get("config") for p in problems)
    texts = table.column(column).to_pylist() if configured else None
    for row in kept:
        pos = position[id(row)]
        flags[pos] = True
        why = None if texts is None else unwritable(row, texts[pos])
        if why is not None:  # before any problem: rows stop at the first bad text
            problems = [p for p in problems if p.get("unless_first")]
            problems.append({"at": pos, "message": why})
            break
    reports: list[str | None] = [None] * table.num_rows
    if table.num_rows:
        reports[0] = json.dumps({**report, _SIZE: table.num_rows, _PROBLEMS: problems})
    table = table.append_column(_KEPT, pa.array(flags, pa.bool_()))
    return table.append_column(_REPORT, pa.array(reports, pa.string()))


def _check_span(span: Span, shared: Any, knobs: dict[str, Any], batch_size: int,
                out: str | None) -> tuple[str, Any]:
    """Read and check one span: its report (JSON) and its kept lines (a table; None once written).

    The span's lines are copied to a file of their own and go through the single-process
    file-to-file path (blocks of lines, the rules applied natively), so a task holds one block
    and the span's kept lines, whatever the input's size. Where that file would read otherwise
    than the span (a byte-order mark opening a span that is not the file's first) or a line is
    bad, the span is read line by line instead: the same rows, errors naming the real file.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    index = _load_index(shared)
    with tempfile.TemporaryDirectory(prefix="whileai-span-") as tmp:
        kept_path = os.path.join(tmp, "kept.jsonl")
        source = span.path
        if span.end >= 0:
            source = os.path.join(tmp, "span.jsonl")
            copy_span(span, source)
            with open(source, "rb") as head:
                if span.start > 0 and head.read(3) == _BOM:
                    source = ""
        try:
            if not source:
                raise RowError("a byte-order mark inside the file")
            report = decontaminate(source, index, **{**knobs, "output": kept_path})[1]
            with open(kept_path, "rb") as f:
                texts = [line_text(line) for line in f]
        except RowError:  # named after the copy: read again, line by line, for the real name
            try:
                report, texts = _check_lines(span, index, knobs, batch_size)
            except RowError as exc:  # handed back as data: the driver raises the first in order
                return json.dumps({_ERROR: str(exc)}), None
    report["output"] = None
    table = pa.table({"text": pa.array(texts, pa.string())})
    if out is None:
        return json.dumps(report), table
    pq.write_table(table, _part_path(out, span.order))
    return json.dumps(report), None


def _check_lines(span: Span, index: EvalIndex, knobs: dict[str, Any],
                 batch_size: int) -> tuple[dict[str, Any], list[str]]:
    """Check a span read line by line (``batch_size`` rows at a time): its report, kept lines.

    Raises:
        RowError: the span's first bad line, named by file and line number: one that is not a
            JSON object, or a kept one that cannot be written back (``NaN``, ``Infinity``), as
            ``decontaminate(path, output=...)`` refuses it.
    """
    reports: list[dict[str, Any]] = []
    texts: list[str] = []
    rows: list[dict[str, Any]] = []
    lines: list[tuple[bytes, int]] = []

    def check() -> None:
        kept, report = decontaminate(rows, index, **knobs)
        line_of = {id(row): line for row, line in zip(rows, lines, strict=True)}
        for row in kept:
            line, k = line_of[id(row)]
            if b"NaN" in line or b"Infinity" in line:
                dumps_row(row, where=f"{span.path}:{line_number(span, k)}")
            texts.append(line_text(line))
        reports.append(report)
        rows.clear()
        lines.clear()

    try:
        for row, line, k in numbered_rows(span):
            rows.append(row)
            lines.append((line, k))
            if len(rows) == batch_size:
                check()
    except RowError:
        check()  # a kept row before the bad line fails first, as in one pass over the file
        raise
    if rows or not reports:
        check()
    return merge_decontamination(reports, index), texts


def _block_reports(table: Any) -> list[str]:
    """The batch reports a block of the checked dataset carries, in row order."""
    return [t for t in table.column(_REPORT).to_pylist() if t is not None]


def decontaminate_dataset(
    rows: Any,
    against: Any,
    *,
    n: int = 8,
    fields: Iterable[str] = ("prompt",),
    overlap: float = 0.8,
    embedder: Any = None,
    similarity: float = 0.85,
    column: str | None = None,
    output: str | PathLike[str] | None = None,
    batch_size: int = 4096,
    span_bytes: int = 32 << 20,
    progress: bool = True,
) -> tuple[Any, dict[str, Any]]:
    """Return ``(kept, report)`` for JSONL files or a Ray Dataset: what one process returns.

    Args:
        rows: JSONL paths (one path or a list, read in that order; ``.gz`` too), read on the
            cluster span by span; or a ``ray.data.Dataset`` of train rows (one column per
            field, or JSON text in ``column``).
        against: eval rows, JSONL paths, platform dataset ids (``"ds_..."``, pulled) or a
            prebuilt ``EvalIndex`` (built once, on the driver).
        n: n-gram length in words (as :func:`whileai.simulations.decontaminate`).
        fields: row keys to check.
        overlap: share of a text's words one eval text must cover.
        embedder: the optional semantic rule's embedder (``"hash"`` or a picklable callable).
        similarity: the semantic rule's threshold.
        column: for a Dataset, the column holding each row as JSON text
            (``ray.data.read_text`` gives ``"text"``); None: the dataset's columns are the row.
        output: a directory to write the kept rows to as Parquet (the returned Dataset is
            then the written rows read back lazily); None: return them as a Dataset.
        batch_size: rows checked at a time (a span is checked by blocks of lines, natively,
            and by ``batch_size`` rows where it is read line by line).
        span_bytes: for JSONL paths, the bytes of file one task reads (a ``.gz`` file is one
            span): what bounds a task's memory.
        progress: a ``decontaminate (ray)`` line on stderr (rows and drops as the work
            finishes) and, for a Dataset, Ray Data's own bars; False silences both.

    Returns:
        ``(kept, report)``: a Dataset of the kept rows (a Dataset's columns as given; for paths,
        each row's JSON line in a ``text`` column) and the report of
        :func:`whileai.simulations.decontaminate` over all the rows, in order.

    Raises:
        ConfigError: ``rows`` is neither paths nor a Ray Dataset, ``column`` given with paths
            or naming none of the Dataset's columns, or a knob is out of range.
        InputError: a path is not a readable file.
        RowError: a line is not a JSON object, or a kept one holds ``NaN`` or ``Infinity``
            (kept rows are JSON lines: refused as ``decontaminate(path, output=...)`` refuses
            to write them); named by file and line (paths) or by ``rows[k] (dataset order)``
            (a Dataset's ``column``). The first such row in order is the one raised; with
            ``output=``, the Parquet parts already written are removed.
        ImportError: Ray is not installed (``pip install 'whileai[ray]'``).

    >>> decontaminate_dataset.__name__  # a Ray cluster example is in docs/scale.md
    'decontaminate_dataset'
    """
    ray = require_ray()
    if not (is_dataset(rows) or is_paths(rows)):
        raise ConfigError("rows must be JSONL paths or a ray.data.Dataset, "
                          f"got {type(rows).__name__}")
    if column is not None and not is_dataset(rows):
        raise ConfigError(f"column={column!r} is for a Dataset; JSONL paths are read as rows")
    if not isinstance(batch_size, int) or batch_size < 1:
        raise ConfigError(f"batch_size= must be a positive number of rows, got {batch_size!r}")
    index = resolve_against(against, n)  # platform ids pulled, files read: here, once
    knobs = {"n": n, "fields": tuple(fields), "overlap": overlap, "embedder": embedder,
             "similarity": similarity, "chunk_size": batch_size, "progress": False}
    empty = decontaminate([], index, **knobs)[1]  # the knobs' errors, raised before any work
    out = None if output is None else str(output)
    with Progress("decontaminate (ray)", None, enabled=progress) as line:
        if is_dataset(rows):
            line.stage("checking batches on the cluster")
            kept, parts = _on_dataset(ray, rows, index, column, knobs, batch_size, progress)
        else:
            cut = spans(rows, span_bytes)
            line.stage(f"checking {len(cut)} spans on the cluster", unit="rows")
            line.estimate(0.0)
            kept, parts = _on_spans(ray, cut, index, knobs, batch_size, out, line)
        report = merge_decontamination(parts, index) if parts else empty
        line.stage("merged", unit="rows")
        line.update(int(report["rows"]), dropped=int(report["rows"]) - int(report["kept"]))
    if out is not None:
        if kept is not None:  # a Dataset's kept rows (the spans' tasks wrote theirs already)
            kept.write_parquet(out)
        kept = ray.data.read_parquet(out)
        report["output"] = out
    return kept, report


def _on_dataset(ray: Any, rows: Any, index: EvalIndex, column: str | None,
                knobs: dict[str, Any], batch_size: int, progress: bool,
                ) -> tuple[Any, list[dict[str, Any]]]:
    """Check a Dataset's batches in ``map_batches`` tasks; the batch reports in dataset order."""
    mapped = rows.map_batches(_check, batch_format="pyarrow", batch_size=batch_size,
                              fn_args=([ray.put(index)], column, knobs))
    with ordered(mapped, progress):  # Ray Data's bars follow progress= too
        checked = mapped.materialize()
    # The reports ride on the blocks, read where they live (in dataset order, no CPU held).
    reader = ray.remote(num_cpus=0)(_block_reports)
    per_block = ray.get([reader.remote(ref) for ref in checked.to_arrow_refs()])
    parts = [json.loads(t) for texts in per_block for t in texts]
    seen = 0
    for part in parts:  # in dataset order: the first bad row is the one one process meets
        raise_problem(part.pop(_PROBLEMS), seen)
        seen += part.pop(_SIZE)
    kept = checked.map_batches(kept_rows, batch_format="pyarrow",
                               fn_args=(column, _KEPT, (_KEPT, _REPORT)))
    # rows of dicts: a nested block (a tool result's) is found row by row, as one process does
    return (kept if column is not None else kept.map(leaving_row)), parts


def _stop(ray: Any, waiting: list[Any], out: str | None, spans_made: int) -> None:
    """End the call after a bad line: cancel the spans still running, wait for them, and remove
    the Parquet parts the call wrote (as one process leaves no ``output=`` file behind)."""
    for ref in waiting:
        ray.cancel(ref)
    if waiting:
        ray.wait(waiting, num_returns=len(waiting), timeout=60)
    if out is not None:
        for k in range(spans_made):
            with contextlib.suppress(FileNotFoundError):
                os.remove(_part_path(out, k))


def _span_env(ray: Any) -> dict[str, Any] | None:
    """The span tasks' ``runtime_env``: two malloc arenas, unless the job already sets them.

    glibc gives each new thread an arena of its own and arenas do not give memory back, so a
    Ray worker grew by ~25 MiB per span; two arenas keep it flat (docs/scale.md, "Costs"). A job
    that sets the variable in ``ray.init(runtime_env=...)`` runs every worker that way already.
    """
    job = ray.get_runtime_context().runtime_env or {}
    return None if "MALLOC_ARENA_MAX" in (job.get("env_vars") or {}) else _SPAN_ENV


def _part_path(out: str, order: int) -> str:
    return os.path.join(out, f"part-{order:06d}.parquet")


def _on_spans(ray: Any, cut: list[Span], index: EvalIndex, knobs: dict[str, Any],
              batch_size: int, out: str | None, line: Progress,
              ) -> tuple[Any, list[dict[str, Any]]]:
    """One task per span; the span reports in file order, however the tasks finish."""
    if out is not None:
        os.makedirs(out, exist_ok=True)
    task = ray.remote(num_returns=2, runtime_env=_span_env(ray))(_check_span)
    shared = ray.put(index)
    # in a list, so Ray hands the task the reference (loaded once per worker), not the index
    refs = [task.remote(span, [shared], knobs, batch_size, out) for span in cut]
    order = {report.hex(): k for k, (report, _) in enumerate(refs)}
    parts: list[dict[str, Any] | None] = [None] * len(refs)
    waiting = [report for report, _ in refs]
    done_rows = dropped = 0
    total = sum(os.path.getsize(s.path) if s.end < 0 else s.end - s.start for s in cut)
    read = 0
    errors: dict[int, str] = {}
    while waiting:
        ready, waiting = ray.wait(waiting, num_returns=1)
        for ref in ready:
            part = json.loads(ray.get(ref))
            span = cut[order[ref.hex()]]
            if _ERROR in part:
                errors[span.order] = part[_ERROR]
                continue
            parts[span.order] = part  # the span's place in the files, not the task's
            read += os.path.getsize(span.path) if span.end < 0 else span.end - span.start
            done_rows += int(part["rows"])
            dropped += int(part["rows"]) - int(part["kept"])
        if total:
            line.estimate(read / total)
        line.update(done_rows, dropped=dropped)
        if errors and all(p is not None for p in parts[:min(errors)]):
            _stop(ray, waiting, out, len(cut))
            raise RowError(errors[min(errors)])  # every span before it read clean: one pass's
    tables: list[Any] = [None] * len(refs)
    for span, (_, table) in zip(cut, refs, strict=True):
        tables[span.order] = table  # the kept rows in file order too
    kept = None if out is not None else ray.data.from_arrow_refs(tables)
    return kept, [p for p in parts if p is not None]
