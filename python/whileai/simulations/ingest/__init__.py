"""Traces in: row dicts, JSONL files and OpenTelemetry spans to canonical trace rows.

The public names are re-exported from ``whileai.simulations``.
"""

from __future__ import annotations

from whileai.simulations.ingest.dimensions import FAULT_TO_AXIS, dimensions_from_traces
from whileai.simulations.ingest.harness import infer_harness, tools_from_traces
from whileai.simulations.ingest.mining import flaw_rows, mine_traces, opening_share
from whileai.simulations.ingest.otel import REWARD_KEYS, rows_from_otel
from whileai.simulations.ingest.report import format_trace_report, trace_report
from whileai.simulations.ingest.traces import load_traces

__all__ = [
    "FAULT_TO_AXIS",
    "REWARD_KEYS",
    "dimensions_from_traces",
    "flaw_rows",
    "format_trace_report",
    "infer_harness",
    "load_traces",
    "mine_traces",
    "opening_share",
    "rows_from_otel",
    "tools_from_traces",
    "trace_report",
]
