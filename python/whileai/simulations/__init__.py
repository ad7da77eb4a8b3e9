"""whileai.simulations: simulate, grade, measure, clean, select and export (``import ... as zps``).

The public surface is re-exported here; internals live in stage folders and may move.
"""

from __future__ import annotations

from whileai.simulations.ingest import (
    FAULT_TO_AXIS,
    REWARD_KEYS,
    dimensions_from_traces,
    flaw_rows,
    format_trace_report,
    infer_harness,
    load_traces,
    mine_traces,
    opening_share,
    rows_from_otel,
    tools_from_traces,
    trace_report,
)
from whileai.simulations.io import JsonlAppender, load_rows, read_jsonl, write_jsonl
from whileai.simulations.rows import (
    check_rows,
    conversation,
    export_row,
    format_row_check,
    scrub,
    task_key,
)
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
    "FAULT_TO_AXIS",
    "REWARD_KEYS",
    "SCHEMA_VERSION",
    "Calibration",
    "JsonlAppender",
    "Judgment",
    "Marker",
    "Rollout",
    "RowParts",
    "Task",
    "calibration_of",
    "check_rows",
    "conversation",
    "dimensions_from_traces",
    "export_row",
    "flaw_rows",
    "format_row_check",
    "format_trace_report",
    "from_row",
    "infer_harness",
    "load_rows",
    "load_traces",
    "mine_traces",
    "opening_share",
    "read_jsonl",
    "row_problems",
    "row_schema",
    "rows_from_otel",
    "schema_version_of",
    "scrub",
    "task_key",
    "to_row",
    "tools_from_traces",
    "trace_report",
    "validate",
    "write_jsonl",
]
