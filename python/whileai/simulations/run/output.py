"""The run's ``output=`` file: append-only, one group at a time, resumable.

Rows reach the file only by appending (``JsonlAppender``: locked, torn tail cut back); nothing
the run does rewrites it. A group's rows are held until the group settles (all its rollouts
landed, or the allocator stopped it), then appended together, so a group the clock cuts short
goes in once, already stamped ``group_cut``. A run killed mid-group loses only that group's
unwritten rows, which the next run with the same ``output=`` plays again.

Resuming: before the run, the rows already in the file are read. A row of the same run (same
``scenario_dimensions.seed``, with a ``scenario_id`` and ``rollout_index``) is the job it
records: when the run reaches that job it lands the stored row instead of playing it again,
and counts it in ``resumed``. A file holding any other row belongs to another run and is
refused with ``ConfigError`` before anything is played.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "run.jsonl")
>>> out = RunOutput(path, seed=0)
>>> out.resumable, out.resumed
(0, 0)
>>> out.close()
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from whileai.errors import ConfigError
from whileai.simulations.duplicates import rollout_key
from whileai.simulations.io import JsonlAppender, dumps_row, read_jsonl
from whileai.simulations.rows import export_row

__all__ = ["RunOutput", "job_identity", "stored_jobs"]

JobKey = tuple[str, int]
_STAMPS = ("group_cut", "early_stop")  # set on a held row by the engine after it landed


def job_identity(row: Mapping[str, Any]) -> tuple[int, str, int] | None:
    """``(seed, scenario_id, rollout_index)`` of a simulated row, or None when it lacks one.

    >>> job_identity({"scenario_id": "s", "rollout_index": 2, "scenario_dimensions": {"seed": 7}})
    (7, 's', 2)
    >>> job_identity({"prompt": "hi"}) is None
    True
    """
    key = rollout_key(row)
    if key is None or not isinstance(key[0], int):
        return None
    return key[0], key[1], key[2]


def stored_jobs(path: str | Path, seed: int) -> dict[JobKey, dict[str, Any]]:
    """The rows of an earlier run of this seed in ``path``, by ``(scenario_id, rollout_index)``.

    Lines that are not rows (a torn last line) are ignored; the appender cuts a torn tail.

    Raises:
        ConfigError: the file holds a row of another run (another seed, or a row that is not a
            simulated rollout).
    """
    target = Path(path)
    if not target.is_file() or target.stat().st_size == 0:
        return {}
    found: dict[JobKey, dict[str, Any]] = {}
    for lineno, row in enumerate(read_jsonl(target, strict=False), start=1):
        ident = job_identity(row)
        if ident is None or ident[0] != seed:
            what = ("a row that is not a simulated rollout (no scenario_id, rollout_index and "
                    "scenario_dimensions.seed)" if ident is None else
                    f"rows of a run with seed {ident[0]}")
            raise ConfigError(
                f"output={str(target)!r} already holds {what} (row {lineno}); this run has seed "
                f"{seed}. A re-run with the same output= and seed resumes; for a different run "
                "pick another output= file, or move the old one away."
            )
        found.setdefault((ident[1], ident[2]), row)
    return found


class RunOutput:
    """The output file of one run: resume lookups, held groups, locked appends."""

    def __init__(self, path: str | Path, *, seed: int) -> None:
        self.path = Path(path)
        self._stored = stored_jobs(self.path, seed)
        self.resumable = len(self._stored)
        self.resumed = 0
        # group id -> (group, [(row, its exported copy, that copy's JSON line)])
        self._held: dict[int, tuple[Any, list[tuple[dict[str, Any], dict[str, Any], str]]]] = {}
        self._appender = JsonlAppender(self.path)

    def take(self, scenario_id: str, rollout_index: int) -> dict[str, Any] | None:
        """The stored row for this job (counted as resumed), or None when it must be played."""
        row = self._stored.pop((scenario_id, rollout_index), None)
        if row is not None:
            self.resumed += 1
        return row

    def hold(self, group: Any, row: dict[str, Any]) -> None:
        """Keep a new row until its group settles; ``RowError`` now if JSON cannot hold it."""
        exported = export_row(row)
        line = dumps_row(exported, where=f"{self.path} row")
        self._held.setdefault(id(group), (group, []))[1].append((row, exported, line))

    def _lines(self, held: list[tuple[dict[str, Any], dict[str, Any], str]]) -> list[str]:
        """The held rows' lines; a row stamped (``group_cut``, ``early_stop``) since it landed
        is re-encoded."""
        lines = []
        for row, exported, line in held:
            stamps = {k: row[k] for k in _STAMPS if k in row and exported.get(k) != row[k]}
            if stamps:
                line = dumps_row({**exported, **stamps}, where=f"{self.path} row")
            lines.append(line)
        return lines

    def flush_settled(self) -> None:
        """Append the held rows of every group that will get no more rollouts for now."""
        for key, (group, rows) in list(self._held.items()):
            if group.inflight == 0 and (group.landed >= group.target or group.state != "open"):
                del self._held[key]
                self._appender.extend_lines(self._lines(rows))

    def close(self) -> None:
        """Append every held row (cut groups as they are now) and close the file."""
        try:
            for _group, rows in self._held.values():
                self._appender.extend_lines(self._lines(rows))
            self._held.clear()
        finally:
            self._appender.close()

    @property
    def cut_bytes(self) -> int:
        """Bytes of a torn last line cut from the file before appending."""
        return self._appender.cut_bytes

    @property
    def written(self) -> int:
        """Rows this run appended."""
        return self._appender.count
