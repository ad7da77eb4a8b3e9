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
import re
from collections.abc import Mapping
from os import PathLike
from pathlib import Path
from typing import Any, Literal, get_args

from whileai.errors import ConfigError, RowError
from whileai.rows.depth import deep_error
from whileai.rows.jsonl_write import dumps_row, write_jsonl
from whileai.rows.keywords import valid_kwargs
from whileai.rows.outbound import export_row
from whileai.rows.progress import Progress
from whileai.rows.schema import row_problems
from whileai.rows.source import as_rows
from whileai.simulations.export.wire import check_choice

__all__ = ["check_split_name", "format_hf_report", "to_hf_folder"]

_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")

Engine = Literal["auto", "parquet", "jsonl"]
_ENGINES: tuple[str, ...] = get_args(Engine)


def _has_pyarrow() -> bool:
    try:
        import pyarrow  # type: ignore[import-untyped,import-not-found,unused-ignore]  # noqa: F401
    except ImportError:
        return False
    return True


def _write_parquet(path: Path, rows: list[dict[str, Any]], split: str) -> list[str]:
    import pyarrow as pa  # type: ignore[import-not-found,import-untyped,unused-ignore]
    import pyarrow.parquet as pq  # type: ignore[import-not-found,import-untyped,unused-ignore]

    path.parent.mkdir(parents=True, exist_ok=True)
    # Nested row fields (steps, world_state) vary in shape between rows; a JSON text column
    # keeps every value exactly instead of forcing one Arrow struct type on all of them.
    # A column of mixed scalar types is JSON text too (1 and "1" stay apart), unless it is a
    # schema field: a row with a string reward is refused, as the schema check refuses it.
    columns = sorted({k for row in rows for k in row})
    table: dict[str, list[Any]] = {}
    as_json: list[str] = []
    for key in columns:
        values = [row.get(key) for row in rows]
        kinds = {type(v) for v in values if v is not None}
        if kinds == {int, float}:
            values = [None if v is None else float(v) for v in values]
        elif any(isinstance(v, (dict, list)) for v in values) or len(kinds) > 1:
            if len(kinds) > 1:
                _refuse_schema_type(rows, key, split)
            values = [None if v is None else json.dumps(v, ensure_ascii=False) for v in values]
            as_json.append(key)
        table[key] = values
    pq.write_table(pa.table(table), path)
    return as_json


def _refuse_schema_type(rows: list[dict[str, Any]], key: str, split: str) -> None:
    """Raise ``RowError`` for the first row whose ``key`` breaks the row schema's type."""
    for index, row in enumerate(rows):
        wrong = [p for p in row_problems(row) if p.startswith(f"field `{key}`")]
        if wrong:
            raise RowError(f"{split} row {index}: {wrong[0]}; fix the row (whileai rows check "
                           "lists every problem) before exporting")


def check_split_name(split: Any) -> str:
    """Return ``split`` when it is a safe split (and file) name, else raise ``ConfigError``.

    A split name becomes a file name and a line of the card's YAML, so it may hold letters,
    digits, ``_``, ``-`` and ``.`` only, must start with a letter or digit, and is never ``..``.

    >>> check_split_name("train")
    'train'
    >>> check_split_name("../evil")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    whileai.errors.ConfigError: split name '../evil' is not allowed...
    """
    if not isinstance(split, str) or not _SAFE_NAME.fullmatch(split) or ".." in split:
        raise ConfigError(
            f"split name {split!r} is not allowed: use letters, digits, '_', '-' and '.', "
            "starting with a letter or digit (no path separators, '..' or control characters)"
        )
    return split


def _user_turn(row: dict[str, Any]) -> bool:
    prompt = row.get("prompt")
    if isinstance(prompt, str) and prompt.strip():
        return True
    messages = row.get("messages")
    return isinstance(messages, list) and any(
        isinstance(m, Mapping) and m.get("role") == "user" for m in messages)


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
    progress: bool = True,
) -> dict[str, Any]:
    """Write ``rows`` as a Hugging Face dataset folder; return the report.

    Args:
        rows: rows, a run, or a JSONL path; or a dict ``{split: rows}`` for several splits.
        path: the folder (created).
        split: the split name for a single row set (default ``"train"``).
        engine: ``"auto"`` (Parquet when pyarrow is installed), ``"parquet"`` or ``"jsonl"``.
        name: the dataset title in the card (default the folder name).
        progress: rows checked, then written, per split on stderr (and a summary); False
            silences it.

    Returns:
        ``{"path", "format", "files": {split: file}, "rows": {split: n}, "json_columns",
        "skipped": {"no_user_turn": n}}``.

    Raises:
        TypeError: an unknown keyword (the valid ones are listed).
        ConfigError: ``engine`` is not one of its values.
        ImportError: ``engine="parquet"`` without pyarrow.
        ConfigError: a split name with a path separator, ``..`` or a control character.
        RowError: a row with a NaN or infinite number, a value JSON cannot hold, nesting past
            200 levels, or (Parquet) a schema field of the wrong type such as ``reward: "1"``.
    """
    chosen = check_choice("to_hf_folder", "engine", engine, _ENGINES)
    if chosen == "auto":
        chosen = "parquet" if _has_pyarrow() else "jsonl"
    if chosen == "parquet" and not _has_pyarrow():
        raise ImportError("to_hf_folder(engine='parquet') needs pyarrow: pip install 'whileai[trl]'"
                          " (or pass engine='jsonl')")
    splits = dict(rows) if isinstance(rows, Mapping) and not {"prompt", "steps"} & set(rows) \
        else {split: rows}
    for part in splits:
        check_split_name(part)
    target = Path(path)
    title = " ".join(str(name or target.name).split())  # one line in the card
    report: dict[str, Any] = {"path": str(target), "format": chosen, "files": {}, "rows": {},
                              "json_columns": [], "skipped": {"no_user_turn": 0}}
    with Progress("hf export", enabled=progress) as line:
        written = sum(_write_split(target, part, source, chosen, report, line)
                      for part, source in splits.items())
        line.finish(written)
    (target / "README.md").write_text(_card(title, report), encoding="utf-8")
    return report


def _write_split(target: Path, part: str, source: Any, chosen: str, report: dict[str, Any],
                 line: Progress) -> int:
    """Check and write one split; update the report; return how many rows were written."""
    line.stage(f"{part}: checking")
    clean: list[dict[str, Any]] = []
    for index, raw in enumerate(line.counted(as_rows(source))):
        where = f"{part} row {index}"
        try:
            row = export_row(raw)
        except RecursionError:
            raise deep_error(where) from None
        dumps_row(row, where=where)  # NaN, infinity and non-JSON values: as write_jsonl
        if not _user_turn(row):
            report["skipped"]["no_user_turn"] += 1  # nothing asked: not a dataset example
            continue
        clean.append(row)
    relative = f"data/{part}.{'parquet' if chosen == 'parquet' else 'jsonl'}"
    line.stage(f"{part}: writing", len(clean))
    if chosen == "parquet":
        as_json = _write_parquet(target / relative, clean, part)
        report["json_columns"] = sorted(set(report["json_columns"]) | set(as_json))
    else:
        write_jsonl(target / relative, line.counted(clean))
    report["files"][part] = relative
    report["rows"][part] = len(clean)
    return len(clean)


def format_hf_report(report: Mapping[str, Any]) -> str:
    """One line per split.

    >>> print(format_hf_report({"path": "ds", "format": "jsonl",
    ...     "files": {"train": "data/train.jsonl"}, "rows": {"train": 3}}))
    hf folder ds (jsonl): train 3 rows -> data/train.jsonl
    """
    parts = ", ".join(f"{s} {report['rows'][s]} rows -> {f}" for s, f in report["files"].items())
    skipped = (report.get("skipped") or {}).get("no_user_turn", 0)
    tail = f" (skipped {skipped} rows with no user turn)" if skipped else ""
    return f"hf folder {report['path']} ({report['format']}): {parts}{tail}"
