"""whileai.simulations: simulate, grade, measure, clean, select and export (``import ... as zps``).

The public surface is re-exported here; internals live in stage folders and may move.
"""

from __future__ import annotations

from whileai.simulations.io import JsonlAppender, load_rows, read_jsonl, write_jsonl
from whileai.simulations.rows import conversation, export_row, scrub, task_key
from whileai.simulations.schema import (
    SCHEMA_VERSION,
    Calibration,
    Judgment,
    Marker,
    Rollout,
    RowParts,
    Task,
    calibration_of,
    from_row,
    row_problems,
    row_schema,
    schema_version_of,
    to_row,
    validate,
)

__all__: list[str] = [
    "SCHEMA_VERSION",
    "Calibration",
    "JsonlAppender",
    "Judgment",
    "Marker",
    "Rollout",
    "RowParts",
    "Task",
    "calibration_of",
    "conversation",
    "export_row",
    "from_row",
    "load_rows",
    "read_jsonl",
    "row_problems",
    "row_schema",
    "schema_version_of",
    "scrub",
    "task_key",
    "to_row",
    "validate",
    "write_jsonl",
]
