"""Decontaminate a Ray Dataset: the eval index built once, shipped once, applied batch by batch.

The index goes into the object store once (one copy per node, read zero-copy); each
``map_batches`` task loads it and runs the single-process
:func:`whileai.simulations.decontaminate` on its batch. Each
batch's report rides on its first row; after the pass the batch reports are read back in dataset
order and merged by :func:`~whileai.simulations.clean.decontam.merge_decontamination`, so the
report equals the one a single process makes over the same rows in the same order (row numbers
of the examples included). Kept rows come back as a Dataset with their columns unchanged, or are
written as Parquet files.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from os import PathLike
from typing import Any

from whileai.errors import ConfigError
from whileai.scale._ray import in_order, is_dataset, require_ray, rows_of_table
from whileai.simulations.clean.decontam import (
    build_eval_index,
    decontaminate,
    merge_decontamination,
)
from whileai.simulations.clean.decontam_index import EvalIndex
from whileai.simulations.progress import Progress

__all__ = ["decontaminate_dataset"]

_KEPT = "__whileai_kept"
_REPORT = "__whileai_report"
_POS = "__whileai_pos"


def _check(table: Any, index: Any, column: str | None, knobs: dict[str, Any]) -> Any:
    """Check one batch: the kept flag per row, and the batch's report on its first row."""
    import pyarrow as pa

    ray = require_ray()
    eval_index: EvalIndex = ray.get(index) if isinstance(index, ray.ObjectRef) else index
    rows = rows_of_table(table, column)
    for pos, row in enumerate(rows):
        row[_POS] = pos  # a key no rule reads: tells which rows were kept
    kept, report = decontaminate(rows, eval_index, **knobs)
    flags = [False] * len(rows)
    for row in kept:
        flags[row[_POS]] = True
    reports: list[str | None] = [None] * len(rows)
    if rows:
        reports[0] = json.dumps(report)
    table = table.append_column(_KEPT, pa.array(flags, pa.bool_()))
    return table.append_column(_REPORT, pa.array(reports, pa.string()))


def _block_reports(table: Any) -> list[str]:
    """The batch reports a block of the checked dataset carries, in row order."""
    return [t for t in table.column(_REPORT).to_pylist() if t is not None]


def _kept(table: Any) -> Any:
    return table.filter(table.column(_KEPT)).drop_columns([_KEPT, _REPORT])


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
    progress: bool = True,
) -> tuple[Any, dict[str, Any]]:
    """Return ``(kept, report)`` for a Ray Dataset: the same rows and report as one process.

    Args:
        rows: a ``ray.data.Dataset`` of train rows (one column per field, or JSON text in
            ``column``).
        against: eval rows, JSONL paths or a prebuilt ``EvalIndex`` (built once, on the driver).
        n: n-gram length in words (as :func:`whileai.simulations.decontaminate`).
        fields: row keys to check.
        overlap: share of a text's words one eval text must cover.
        embedder: the optional semantic rule's embedder (``"hash"`` or a picklable callable).
        similarity: the semantic rule's threshold.
        column: the column holding each row as JSON text (``ray.data.read_text`` gives
            ``"text"``); None: the dataset's columns are the row.
        output: a directory to write the kept rows to as Parquet (the returned Dataset is
            then the written rows read back lazily); None: return them as a Dataset.
        batch_size: rows per batch.
        progress: a ``decontaminate (ray)`` line on stderr (the check, then rows and drops)
            and Ray Data's own per-operator bars; False silences both.

    Returns:
        ``(kept, report)``: a Dataset of the kept rows (columns as given) and the report of
        :func:`whileai.simulations.decontaminate` over the whole dataset.

    Raises:
        ConfigError: ``rows`` is not a Ray Dataset, or a knob is out of range.
        ImportError: Ray is not installed (``pip install 'whileai[ray]'``).

    >>> decontaminate_dataset.__name__  # a Ray cluster example is in docs/scale.md
    'decontaminate_dataset'
    """
    ray = require_ray()
    if not is_dataset(rows):
        raise ConfigError(f"rows must be a ray.data.Dataset, got {type(rows).__name__}")
    index = against if isinstance(against, EvalIndex) else build_eval_index(against, n=n)
    knobs = {"n": n, "fields": tuple(fields), "overlap": overlap, "embedder": embedder,
             "similarity": similarity, "chunk_size": batch_size, "progress": False}
    decontaminate([], index, **knobs)  # the knobs' errors, raised here before any work
    mapped = in_order(rows.map_batches(
        _check, batch_format="pyarrow", batch_size=batch_size,
        fn_args=(ray.put(index), column, knobs),
    ))
    mapped.context.enable_progress_bars = progress  # Ray Data's bars follow progress= too
    with Progress("decontaminate (ray)", None, enabled=progress) as line:
        line.stage("checking batches on the cluster")
        checked = mapped.materialize()
        # The reports ride on the blocks, read where they live (in dataset order, no CPU held).
        reader = ray.remote(num_cpus=0)(_block_reports)
        per_block = ray.get([reader.remote(ref) for ref in checked.to_arrow_refs()])
        parts = [json.loads(t) for texts in per_block for t in texts]
        report = (merge_decontamination(parts, index) if parts
                  else decontaminate([], index, **knobs)[1])
        line.stage("merged", unit="rows")
        line.update(int(report.get("rows", 0)),
                    dropped=int(report.get("rows", 0)) - int(report.get("kept", 0)))
    kept = checked.map_batches(_kept, batch_format="pyarrow")
    if output is not None:
        path = str(output)
        kept.write_parquet(path)
        kept = ray.data.read_parquet(path)
        report["output"] = path
    return kept, report
