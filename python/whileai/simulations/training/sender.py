"""Upload a run folder to the platform in the background, never blocking or failing the trainer.

The folder (:class:`~whileai.simulations.training.record.RunFolder`) is the queue: the trainer
only appends lines to it, and one daemon thread sends whatever is past its cursor, in batches of
at most 500 lines. While the server is down the lines simply wait on disk (memory stays flat);
each line carries its ``seq``, so a batch sent twice (sent, then the answer lost) is stored once.

A transport is anything with the four calls of :class:`RunsTransport`; the platform client
provides the real one, which sends each request once: the sender is the only layer retrying.
Its waits follow the shared policy of :mod:`whileai.retry` (doubling from ``2 * interval`` up to
``max_backoff``, no jitter): unbounded in the background thread, since nothing is lost while the
server is away, and bounded by :data:`LATE` in :meth:`RunSender.send_now`.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from whileai.retry import Retry
from whileai.simulations.training.record import RunFolder

__all__ = ["BATCH", "LATE", "RunSender", "RunsTransport", "upload_folder"]

BATCH = 500  # lines per request: the runs API's limit
LATE = Retry(attempts=4, total_time=30.0, backoff=0.25)  # a send in the caller's thread


class RunsTransport(Protocol):
    """What a sender needs from a server: the runs API, one call per route."""

    def create_run(self, header: Mapping[str, Any]) -> None: ...

    def log_points(self, run_id: str, points: Sequence[Mapping[str, Any]]) -> None: ...

    def log_events(self, run_id: str, events: Sequence[Mapping[str, Any]]) -> None: ...

    def finish_run(self, run_id: str, header: Mapping[str, Any]) -> None: ...


def _cursor(folder: RunFolder) -> dict[str, Any]:
    try:
        data: dict[str, Any] = json.loads((folder.path / "sent.json").read_text("utf-8"))
        return data
    except (OSError, ValueError):
        return {"created": False, "points": 0, "events": 0, "finished": False}
    # byte offsets into points.jsonl / events.jsonl: each upload reads only what is new


def _save_cursor(folder: RunFolder, cursor: Mapping[str, Any]) -> None:
    temp = folder.path / ".sent.json.tmp"
    temp.write_text(json.dumps(cursor), encoding="utf-8")
    temp.replace(folder.path / "sent.json")


def upload_folder(folder: RunFolder, transport: RunsTransport) -> dict[str, int]:
    """Send everything past the folder's cursor; raise on the first failure (cursor kept).

    The cursor (``sent.json``) keeps a byte offset per file, so an upload reads only the lines
    written since the last one, however long the run.

    Returns:
        ``{"points": n, "events": n}`` sent by this call.
    """
    cursor = _cursor(folder)
    sent = {"points": 0, "events": 0}
    header = folder.header
    if not cursor["created"]:
        transport.create_run(header)
        cursor["created"] = True
        _save_cursor(folder, cursor)
    for kind, send in (("points", transport.log_points), ("events", transport.log_events)):
        while True:
            batch, end = folder.read_from(kind, cursor[kind], BATCH)
            if end == cursor[kind]:
                break
            if batch:
                send(header["id"], batch)
            cursor[kind] = end
            sent[kind] += len(batch)
            _save_cursor(folder, cursor)
    if header.get("status", "running") != "running" and not cursor["finished"]:
        transport.finish_run(header["id"], header)
        cursor["finished"] = True
        _save_cursor(folder, cursor)
    return sent


class RunSender:
    """A daemon thread that keeps a server in step with a run folder.

    ``notify()`` wakes it (called after each log line); it also wakes every ``interval``
    seconds. Failures back off up to ``max_backoff`` seconds and are counted in ``failures``;
    the last one is kept in ``last_error`` (a message, never a key).
    """

    def __init__(self, folder: RunFolder, transport: RunsTransport, *, interval: float = 1.0,
                 max_backoff: float = 30.0) -> None:
        self.folder = folder
        self.transport = transport
        self.interval = interval
        self.max_backoff = max_backoff
        self.failures = 0
        self.last_error: str | None = None
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._idle = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"whileai-run-{folder.run_id}",
                                        daemon=True)
        self._thread.start()

    def notify(self) -> None:
        """Ask for a send soon (cheap; called by the trainer's thread)."""
        self._idle.clear()
        self._wake.set()

    def _delay(self, streak: int) -> float:
        """The wait before the next round after ``streak`` failed rounds in a row."""
        if streak == 0:
            return self.interval
        backoff = Retry(backoff=2 * self.interval, max_backoff=self.max_backoff)
        return backoff.delay(streak - 1)

    def _loop(self) -> None:
        streak = 0
        while not self._stop.is_set():
            self._wake.wait(self._delay(streak))
            self._wake.clear()
            try:
                upload_folder(self.folder, self.transport)
            except Exception as exc:  # the trainer must never see a platform failure
                self._failed(exc)
                streak += 1
                continue
            streak = 0
            self.last_error = None
            if not self._wake.is_set():
                self._idle.set()

    def _failed(self, exc: Exception) -> None:
        self.failures += 1
        self.last_error = f"{type(exc).__name__}: {exc}"

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait up to ``timeout`` seconds for everything written so far to be sent."""
        self.notify()
        return self._idle.wait(timeout)

    def send_now(self) -> bool:
        """Send what is past the cursor in the caller's thread (after ``close``: a holdout
        result or a note added to a finished run), retrying under :data:`LATE`; False, with
        ``last_error``, when that budget is spent."""
        budget = LATE.start()
        while True:
            budget.tried()
            try:
                upload_folder(self.folder, self.transport)
            except Exception as exc:  # the caller decides how loud a failed late send is
                self._failed(exc)
                if budget.again():
                    continue
                return False
            self.last_error = None
            return True

    def close(self, timeout: float = 10.0) -> bool:
        """Flush (bounded by ``timeout``), then stop the thread; True when all was sent."""
        done = self.flush(timeout)
        self._stop.set()
        self._wake.set()
        with contextlib.suppress(RuntimeError):
            self._thread.join(timeout=1.0)
        return done
