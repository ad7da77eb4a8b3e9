"""whileai.simulations: simulate, grade, measure, clean, select and export (``import ... as zps``).

The public surface is re-exported here; internals live in stage folders and may move.
"""

from __future__ import annotations

from whileai.simulations.data import SimulationData
from whileai.simulations.generate.diversity import novelty
from whileai.simulations.generate.seeded import SEEDED_KINDS, seeded_agent
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
    simulate_from_traces,
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
from whileai.simulations.run.sizing import format_recommendation, recommend
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
from whileai.simulations.simulation import simulate
from whileai.simulations.spec import inspect
from whileai.simulations.world import World, current_rollout, world

__all__: list[str] = [
    "FAULT_TO_AXIS",
    "REWARD_KEYS",
    "SCHEMA_VERSION",
    "SEEDED_KINDS",
    "Calibration",
    "JsonlAppender",
    "Judgment",
    "Marker",
    "Rollout",
    "RowParts",
    "SimulationData",
    "Task",
    "World",
    "calibration_of",
    "check_rows",
    "conversation",
    "current_rollout",
    "dimensions_from_traces",
    "export_row",
    "flaw_rows",
    "format_recommendation",
    "format_row_check",
    "format_trace_report",
    "from_row",
    "infer_harness",
    "inspect",
    "load_rows",
    "load_traces",
    "mine_traces",
    "novelty",
    "opening_share",
    "read_jsonl",
    "recommend",
    "row_problems",
    "row_schema",
    "rows_from_otel",
    "schema_version_of",
    "scrub",
    "seeded_agent",
    "simulate",
    "simulate_from_traces",
    "task_key",
    "to_row",
    "tools_from_traces",
    "trace_report",
    "validate",
    "world",
    "write_jsonl",
]
