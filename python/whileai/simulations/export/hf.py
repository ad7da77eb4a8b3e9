"""Hugging Face dataset folders: the rows as a split file plus a README card with counts.

Parquet when ``pyarrow`` is installed (``engine="auto"``), else JSONL; either way
``datasets.load_dataset(path)`` reads the folder. Rows are scrubbed first (``export_row``).

>>> import tempfile, os
>>> report = to_hf_folder([{"prompt": "hi"}], os.path.join(tempfile.mkdtemp(), "ds"),
...                       engine="jsonl")
>>> report["files"], report["rows"]
({'train': 'data/train.jsonl'}, {'train': 1})
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from os import PathLike
from pathlib import Path
from typing import Any, Literal, get_args

from whileai.simulations.export.wire import check_choice
from whileai.simulations.io import write_jsonl
from whileai.simulations.kwcheck import valid_kwargs
from whileai.simulations.rows import export_row
from whileai.simulations.rowsource import as_rows

__all__ = ["format_hf_report", "to_hf_folder"]

Engine = Literal["auto", "parquet", "jsonl"]
_ENGINES: tuple[str, ...] = get_args(Engine)


def _has_pyarrow() -> bool:
    try:
        import pyarrow  # type: ignore[import-untyped,import-not-found,unused-ignore]  # noqa: F401
    except ImportError:
        return False
    return True


def _write_parquet(path: Path, rows: list[dict[str, Any]]) -> None:
    import pyarrow as pa  # type: ignore[import-not-found,import-untyped,unused-ignore]
    import pyarrow.parquet as pq  # type: ignore[import-not-found,import-untyped,unused-ignore]

    path.parent.mkdir(parents=True, exist_ok=True)
    # Nested row fields (steps, world_state) vary in shape between rows; a JSON text column
    # keeps every value exactly instead of forcing one Arrow struct type on all of them.
    columns = sorted({k for row in rows for k in row})
    table: dict[str, list[Any]] = {}
    for key in columns:
        values = [row.get(key) for row in rows]
        if any(isinstance(v, (dict, list)) for v in values):
            values = [None if v is None else json.dumps(v, ensure_ascii=False) for v in values]
        elif {type(v) for v in values if v is not None} == {int, float}:
            values = [None if v is None else float(v) for v in values]
        elif len({type(v) for v in values if v is not None}) > 1:
            values = [None if v is None else str(v) for v in values]
        table[key] = values
    pq.write_table(pa.table(table), path)


def _card(name: str, report: dict[str, Any]) -> str:
    configs = "\n".join(f"  - split: {s}\n    path: {f}" for s, f in report["files"].items())
    counts = "\n".join(f"| {s} | {n} |" for s, n in report["rows"].items())
    nested = (f"\nNested fields are stored as JSON text in Parquet: "
              f"{', '.join(report['json_columns'])}.\n" if report.get("json_columns") else "")
    return (f"---\nconfigs:\n- config_name: default\n  data_files:\n{configs}\n---\n\n"
            f"# {name}\n\nRows exported by whileai (row schema v1, privileged fields removed).\n\n"
            f"| split | rows |\n|---|---|\n{counts}\n{nested}")


@valid_kwargs
def to_hf_folder(
    rows: Any,
    path: str | PathLike[str],
    *,
    split: str = "train",
    engine: Engine = "auto",
    name: str | None = None,
) -> dict[str, Any]:
    """Write ``rows`` as a Hugging Face dataset folder; return the report.

    Args:
        rows: rows, a run, or a JSONL path; or a dict ``{split: rows}`` for several splits.
        path: the folder (created).
        split: the split name for a single row set (default ``"train"``).
        engine: ``"auto"`` (Parquet when pyarrow is installed), ``"parquet"`` or ``"jsonl"``.
        name: the dataset title in the card (default the folder name).

    Returns:
        ``{"path", "format", "files": {split: file}, "rows": {split: n}, "json_columns"}``.

    Raises:
        TypeError: an unknown keyword (the valid ones are listed).
        ValueError: ``engine`` is not one of its values.
        ImportError: ``engine="parquet"`` without pyarrow.
    """
    chosen = check_choice("to_hf_folder", "engine", engine, _ENGINES)
    if chosen == "auto":
        chosen = "parquet" if _has_pyarrow() else "jsonl"
    if chosen == "parquet" and not _has_pyarrow():
        raise ImportError("to_hf_folder(engine='parquet') needs pyarrow: pip install 'whileai[trl]'"
                          " (or pass engine='jsonl')")
    splits = dict(rows) if isinstance(rows, Mapping) and not {"prompt", "steps"} & set(rows) \
        else {str(split): rows}
    target = Path(path)
    report: dict[str, Any] = {"path": str(target), "format": chosen, "files": {}, "rows": {},
                              "json_columns": []}
    for part, source in splits.items():
        clean = [export_row(r) for r in as_rows(source)]
        relative = f"data/{part}.{'parquet' if chosen == 'parquet' else 'jsonl'}"
        if chosen == "parquet":
            _write_parquet(target / relative, clean)
            nested = {k for r in clean for k, v in r.items() if isinstance(v, (dict, list))}
            report["json_columns"] = sorted(set(report["json_columns"]) | nested)
        else:
            write_jsonl(target / relative, clean)
        report["files"][part] = relative
        report["rows"][part] = len(clean)
    (target / "README.md").write_text(_card(str(name or target.name), report))
    return report


def format_hf_report(report: Mapping[str, Any]) -> str:
    """One line per split.

    >>> print(format_hf_report({"path": "ds", "format": "jsonl",
    ...     "files": {"train": "data/train.jsonl"}, "rows": {"train": 3}}))
    hf folder ds (jsonl): train 3 rows -> data/train.jsonl
    """
    parts = ", ".join(f"{s} {report['rows'][s]} rows -> {f}" for s, f in report["files"].items())
    return f"hf folder {report['path']} ({report['format']}): {parts}"
