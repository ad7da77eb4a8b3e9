"""The row contract and its files: the bottom layer every stage, the platform and the server use.

``schema`` (the typed views of a row and its checks), ``outbound`` (what leaves the process:
scrubbing, export rows), ``check`` (whole-file checks), ``jsonl`` (reading and writing JSONL once),
``source`` (where graded rows come from, rewards read strictly), ``depth`` (the nesting guard),
``duplicates`` (repeated rollouts), ``keywords`` (unknown keyword arguments), ``progress`` (the
one progress line). It imports nothing above ``whileai.errors`` and ``whileai.secrets``.

>>> from whileai.rows import Task, from_row
>>> isinstance(from_row({"prompt": "hi"}).task, Task)
True
"""

from __future__ import annotations

from whileai.rows.check import check_rows, format_row_check
from whileai.rows.depth import MAX_DEPTH, check_depth, loads_limited
from whileai.rows.duplicates import drop_duplicates, rollout_key
from whileai.rows.jsonl import JsonlReader, LoadedRows, load_rows, read_jsonl
from whileai.rows.jsonl_write import JsonlAppender, dumps_row, write_jsonl
from whileai.rows.keywords import valid_kwargs
from whileai.rows.outbound import export_row, outbound, scrub, task_key
from whileai.rows.progress import Progress, track
from whileai.rows.schema import (
    SCHEMA_VERSION,
    Calibration,
    Judgment,
    Marker,
    Rollout,
    Task,
    from_row,
    row_problems,
    row_schema,
    to_row,
    validate,
)
from whileai.rows.source import as_rows, read_reward

__all__ = [
    "MAX_DEPTH",
    "SCHEMA_VERSION",
    "Calibration",
    "JsonlAppender",
    "JsonlReader",
    "Judgment",
    "LoadedRows",
    "Marker",
    "Progress",
    "Rollout",
    "Task",
    "as_rows",
    "check_depth",
    "check_rows",
    "drop_duplicates",
    "dumps_row",
    "export_row",
    "format_row_check",
    "from_row",
    "load_rows",
    "loads_limited",
    "outbound",
    "read_jsonl",
    "read_reward",
    "rollout_key",
    "row_problems",
    "row_schema",
    "scrub",
    "task_key",
    "to_row",
    "track",
    "valid_kwargs",
    "validate",
    "write_jsonl",
]
