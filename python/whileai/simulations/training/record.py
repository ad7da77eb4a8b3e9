"""A training run on disk: one folder with the run's header, its points and its events.

The folder is the run's durable log. Everything a run says is written here first (one flushed
JSONL line each), so a crash of the trainer or of the platform loses nothing; a sender uploads
from the folder, and ``whileai runs import DIR`` uploads a folder later.

Layout of ``<dir>/<run id>/``:

- ``run.json``: the header (id, name, dataset, holdout, config, base model, total steps, trainer,
  created) plus, once finished, ``status``, ``summary`` and ``adapter``.
- ``points.jsonl``: ``{"seq", "step", "time", <metric>: value, ...}``, oldest first.
- ``events.jsonl``: ``{"seq", "kind", "time", ...}`` with kind ``note``, ``alarm``, ``holdout``,
  ``delta`` or ``finish``.

``seq`` numbers each line from 0 in its file: it is the identity a server uses to ignore a line
sent twice.

>>> import tempfile
>>> folder = RunFolder.create(tempfile.mkdtemp(), {"name": "sft-v1"})
>>> folder.add_point({"step": 1, "loss": 2.0})
>>> [p["loss"] for p in folder.points()]
[2.0]
"""

from __future__ import annotations

import json
import math
import os
import secrets
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from whileai.config import home
from whileai.errors import ConfigError
from whileai.rows.jsonl import read_jsonl
from whileai.rows.jsonl_write import JsonlAppender

__all__ = ["RUN_STATUSES", "RunFolder", "default_runs_dir", "new_run_id"]

RUN_STATUSES = ("running", "done", "failed", "stopped")


def new_run_id() -> str:
    """A fresh run id, ``run_`` and 16 hex digits (made on the client, so a folder and the
    server agree on it before the server has seen the run)."""
    return "run_" + secrets.token_hex(8)


def default_runs_dir() -> Path:
    """Where local run folders go: ``WHILEAI_HOME/runs`` (``~/.whileai/runs``)."""
    return home() / "runs"


def _clean_metrics(metrics: Mapping[str, Any], where: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for key, value in metrics.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            item = getattr(value, "item", None)  # torch / numpy scalars
            value = item() if callable(item) else value
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{where}: metric {key!r} is a {type(value).__name__}, not a number")
        if math.isfinite(value):
            out[str(key)] = float(value)
    return out


class RunFolder:
    """The on-disk record of one run (thread-safe appends; see the module docstring)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        if not (self.path / "run.json").is_file():
            raise ConfigError(f"{self.path}: not a run folder (no run.json)")
        self._lock = threading.Lock()
        self._next = {"points": self._count("points"), "events": self._count("events")}

    @classmethod
    def create(cls, parent: str | os.PathLike[str], header: Mapping[str, Any]) -> RunFolder:
        """Make ``<parent>/<id>/`` with ``run.json`` from ``header`` (an id is made if absent)."""
        head = {"id": header.get("id") or new_run_id(), "status": "running",
                "created": time.time(), **{k: v for k, v in header.items() if k != "id"}}
        path = Path(parent) / str(head["id"])
        path.mkdir(parents=True, exist_ok=False)
        _write_json(path / "run.json", head)
        return cls(path)

    @property
    def header(self) -> dict[str, Any]:
        """The current ``run.json``."""
        data: dict[str, Any] = json.loads((self.path / "run.json").read_text(encoding="utf-8"))
        return data

    @property
    def run_id(self) -> str:
        return str(self.header["id"])

    def _count(self, kind: str) -> int:
        file = self.path / f"{kind}.jsonl"
        return sum(1 for _ in read_jsonl(file, strict=False)) if file.exists() else 0

    def _append(self, kind: str, record: dict[str, Any]) -> dict[str, Any]:
        # Open, write one flushed line, close: a run object dropped without finish() leaks no
        # file handle, and the cost (tens of microseconds) is nothing next to a training step.
        with self._lock:
            line = {"seq": self._next[kind], "time": time.time(), **record}
            with JsonlAppender(self.path / f"{kind}.jsonl") as out:
                out.append(line)
            self._next[kind] += 1
            return line

    def add_point(self, point: Mapping[str, Any]) -> None:
        """Append one point: ``step`` (an int) and numeric metrics (non-finite ones dropped)."""
        step = point.get("step")
        if isinstance(step, bool) or not isinstance(step, int):
            raise ConfigError(f"run {self.run_id}: step must be an int, got {step!r}")
        metrics = _clean_metrics({k: v for k, v in point.items() if k != "step"},
                                 f"run {self.run_id} step {step}")
        self._append("points", {"step": step, **metrics})

    def add_event(self, kind: str, **fields: Any) -> dict[str, Any]:
        """Append one event (``note``, ``alarm``, ``holdout``, ``delta``, ``finish``)."""
        return self._append("events", {"kind": kind, **fields})

    def set_header(self, **fields: Any) -> None:
        """Merge ``fields`` into ``run.json`` (atomically replaced)."""
        with self._lock:
            _write_json(self.path / "run.json", {**self.header, **fields})

    def points(self, start: int = 0) -> Iterator[dict[str, Any]]:
        """The points from ``seq`` ``start`` on, oldest first."""
        return self._read("points", start)

    def events(self, start: int = 0) -> Iterator[dict[str, Any]]:
        """The events from ``seq`` ``start`` on, oldest first."""
        return self._read("events", start)

    def _read(self, kind: str, start: int) -> Iterator[dict[str, Any]]:
        file = self.path / f"{kind}.jsonl"
        if not file.exists():
            return
        # a torn last line (the writer was killed mid-line) is skipped, never fatal
        for i, row in enumerate(read_jsonl(file, strict=False)):
            if i >= start:
                yield row

    def read_from(self, kind: str, offset: int, limit: int) -> tuple[list[dict[str, Any]], int]:
        """Up to ``limit`` lines of ``kind`` from byte ``offset``, and the offset after them.

        Only whole lines are read: a line still being written (no newline yet) waits for the next
        call. A line that is not JSON (cut short by a crash) is passed over, as ``points()``
        does.
        """
        file = self.path / f"{kind}.jsonl"
        out: list[dict[str, Any]] = []
        if not file.exists():
            return out, offset
        with open(file, "rb") as handle:
            handle.seek(offset)
            while len(out) < limit:
                line = handle.readline()
                if not line.endswith(b"\n"):
                    break
                offset += len(line)
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                if isinstance(record, dict):
                    out.append(record)
        return out, offset

    def count(self, kind: str) -> int:
        """How many points (``"points"``) or events (``"events"``) the folder holds."""
        with self._lock:
            return self._next[kind]



def _write_json(path: Path, data: Mapping[str, Any]) -> None:
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temp.write_text(json.dumps(data, ensure_ascii=False, indent=1, default=str), encoding="utf-8")
    os.replace(temp, path)
