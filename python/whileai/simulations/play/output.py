"""The run's ``output=`` file: append-only, one group at a time, resumable.

Rows reach the file only by appending (``JsonlAppender``: locked, torn tail cut back); nothing
the run does rewrites it. A group's rows are held until the group settles (all its rollouts
landed, or the allocator stopped it), then appended together, so a group the clock cuts short
goes in once, already stamped ``group_cut``. A run killed mid-group loses only that group's
unwritten rows, which the next run with the same ``output=`` plays again.

Resuming: before the run, the rows already in the file are read. A row of the same run (the
same ``run_fingerprint``, see ``play/fingerprint.py``, with a ``scenario_id`` and
``rollout_index``) is the job it records: when the run reaches that job it lands the stored row
instead of playing it again, and counts it in ``resumed``. A file holding any other row belongs
to another run and is refused with ``ConfigError`` naming what differs ("system prompt differs
from the rows already in p.jsonl") before anything is played; ``overwrite=True`` starts the file
anew instead.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "run.jsonl")
>>> out = RunOutput(path, fingerprint={"id": "0123456789abcdef", "seed": 0})
>>> out.resumable, out.resumed
(0, 0)
>>> out.close()
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from whileai.errors import ConfigError
from whileai.rows.duplicates import rollout_key
from whileai.rows.jsonl import read_jsonl
from whileai.rows.jsonl_write import JsonlAppender, dumps_row
from whileai.rows.outbound import export_row
from whileai.simulations.play.fingerprint import FIELD, describe, differences

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


def _refusal(target: Path, lineno: int, row: Mapping[str, Any],
             fingerprint: Mapping[str, Any]) -> ConfigError:
    fix = ("A re-run of the same run resumes; to start this file anew pass overwrite=True "
           "(whileai simulate --overwrite), or pick another output= file.")
    if job_identity(row) is None:
        return ConfigError(
            f"output={str(target)!r} already holds a row that is not a simulated rollout (no "
            f"scenario_id, rollout_index and scenario_dimensions.seed; row {lineno}). {fix}")
    stored = row.get(FIELD)
    if not isinstance(stored, Mapping):
        return ConfigError(
            f"output={str(target)!r} holds rows with no run fingerprint (row {lineno}: written "
            f"by an older whileai, or by hand), so they cannot be told to be this run's. {fix}")
    what = describe(differences(stored, fingerprint), stored, fingerprint)
    return ConfigError(f"{what} from the rows already in {target} (row {lineno}). {fix}")


def stored_jobs(path: str | Path,
                fingerprint: Mapping[str, Any]) -> dict[JobKey, dict[str, Any]]:
    """The rows of an earlier run with this ``fingerprint`` in ``path``, by
    ``(scenario_id, rollout_index)``.

    Lines that are not rows (a torn last line) are ignored; the appender cuts a torn tail.

    Raises:
        ConfigError: the file holds a row of another run (another fingerprint, none, or a row
            that is not a simulated rollout); the message names what differs.
    """
    target = Path(path)
    if not target.is_file() or target.stat().st_size == 0:
        return {}
    found: dict[JobKey, dict[str, Any]] = {}
    expected = fingerprint.get("id")
    for lineno, row in enumerate(read_jsonl(target, strict=False), start=1):
        ident = job_identity(row)
        stored = row.get(FIELD)
        if ident is None or not isinstance(stored, Mapping) or stored.get("id") != expected:
            raise _refusal(target, lineno, row, fingerprint)
        found.setdefault((ident[1], ident[2]), row)
    return found


class RunOutput:
    """The output file of one run: resume lookups, held groups, locked appends."""

    def __init__(self, path: str | Path, *, fingerprint: Mapping[str, Any],
                 overwrite: bool = False) -> None:
        self.path = Path(path)
        if overwrite:  # asked for: the old rows go, this run starts the file anew
            self.path.unlink(missing_ok=True)
        self._stored = stored_jobs(self.path, fingerprint)
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
