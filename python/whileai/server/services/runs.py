"""Training runs: create (idempotent on the client-made id), log points and events, finish, read.

Points and events carry the ``seq`` their client gave them; a line whose ``(run, seq)`` is
already stored is skipped, so a batch sent twice (the answer was lost, the sender retried, or a
folder was imported after a live upload) is stored once. Lines without ``seq`` (plain HTTP
callers) are numbered after the newest one.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import secrets
import time
from collections.abc import Mapping, Sequence
from typing import Any

import sqlalchemy as sa

from whileai.server.services import Account, Store
from whileai.server.services.problems import Invalid, NotFound, TooLarge
from whileai.server.store.dialect import insert_new
from whileai.server.store.run_tables import run_events, run_points, runs
from whileai.server.store.tables import datasets

__all__ = ["MAX_BATCH", "create_run", "finish_run", "get_run", "list_runs", "log_events",
           "log_points", "run_key"]

MAX_BATCH = 500
STATUSES = ("done", "failed", "stopped")
_RESERVED = ("seq", "step", "time")


def _loads(text: str | None) -> Any:
    return json.loads(text) if text else None


_DATASET_ID = re.compile(r"ds_[0-9a-f]{24}")  # the form of the ids ``datasets.create`` makes


def run_key(account_id: str, run_id: str) -> str:
    """The internal key of the account's run ``run_id``: a digest, so it names no other run and
    two accounts may choose the same id.

    >>> run_key("acct_1", "run_a") == run_key("acct_2", "run_a")
    False
    """
    digest = hashlib.sha256(f"{account_id}/{run_id}".encode()).hexdigest()
    return "rk_" + digest[:37]


def _record(row: Any) -> dict[str, Any]:
    return {"runId": row.run_id, "id": row.run_id, "name": row.name, "dataset": row.dataset_id,
            "holdout": row.holdout_id, "base_model": row.base_model, "trainer": row.trainer,
            "total_steps": row.total_steps, "config": _loads(row.config) or {},
            "status": row.status, "summary": _loads(row.summary) or {}, "adapter": row.adapter,
            "holdout_result": _loads(row.holdout_result), "points": row.points,
            "last_step": row.last_step, "created": row.created_at, "updated": row.updated_at,
            "finished": row.finished_at}


def _owned(conn: sa.Connection, account: Account, run_id: str) -> Any:
    """The account's run ``run_id`` (its ``id`` is the key of its points and events)."""
    row = conn.execute(sa.select(runs).where(runs.c.run_id == run_id,
                                             runs.c.account_id == account.id)).first()
    if row is None:
        raise NotFound(f"no run {run_id!r} in this account")
    return row


def _next_seq(conn: sa.Connection, table: sa.Table, run_id: str) -> int:
    top = conn.execute(sa.select(sa.func.max(table.c.seq)).where(table.c.run_id == run_id))
    value = top.scalar()
    return 0 if value is None else int(value) + 1


def _seq_of(line: Mapping[str, Any], where: str) -> int | None:
    seq = line.get("seq")
    if seq is None:
        return None
    if isinstance(seq, bool) or not isinstance(seq, int) or seq < 0:
        raise Invalid(f"{where}: seq must be a non-negative integer")
    return seq


def _check_batch(lines: Sequence[Any], what: str) -> None:
    if len(lines) > MAX_BATCH:
        raise TooLarge(f"{len(lines)} {what} in one request; send at most "
                       f"{MAX_BATCH} per batch")


def create_run(store: Store, account: Account, body: Mapping[str, Any]) -> dict[str, Any]:
    """Create a run, or return it when this account already created one with the same id."""
    run_id = body.get("id") or "run_" + secrets.token_hex(8)
    name = str(body.get("name") or "").strip()
    if not name:
        raise Invalid("a run needs a name")
    now = time.time()
    with store.engine.begin() as conn:
        found = conn.execute(sa.select(runs).where(runs.c.run_id == run_id,
                                                   runs.c.account_id == account.id)).first()
        if found is not None:
            return _record(found)
        for field in ("dataset_id", "holdout_id"):
            _check_reference(conn, account, field, body.get(field))
        conn.execute(sa.insert(runs).values(
            id=run_key(account.id, run_id), run_id=run_id, account_id=account.id, name=name,
            dataset_id=body.get("dataset_id"),
            holdout_id=body.get("holdout_id"), base_model=body.get("base_model"),
            trainer=body.get("trainer"), total_steps=body.get("total_steps"),
            config=json.dumps(body.get("config") or {}), status="running", points=0,
            created_at=now, updated_at=now))
        return _record(_owned(conn, account, run_id))


def _check_reference(conn: sa.Connection, account: Account, field: str, value: Any) -> None:
    """A value in the form of a dataset id must name one of the account's datasets or a public
    one (anything else is a name or a path, kept as given); another account's private set is
    answered exactly like a missing one."""
    if not isinstance(value, str) or not _DATASET_ID.fullmatch(value):
        return
    found = conn.execute(sa.select(datasets.c.id).where(
        datasets.c.id == value,
        sa.or_(datasets.c.account_id == account.id, datasets.c.public.is_(True)))).first()
    if found is None:
        raise NotFound(f"{field}: no dataset {value!r} in this account or the "
                       "public catalog")


def log_points(store: Store, account: Account, run_id: str, points: Sequence[Mapping[str, Any]],
               total_steps: int | None = None) -> dict[str, int]:
    """Store a batch of points; returns ``{"stored": new, "skipped": already there}``."""
    _check_batch(points, "points")
    with store.engine.begin() as conn:
        run = _owned(conn, account, run_id)
        internal = run.id
        nxt: int | None = None
        lines: list[dict[str, Any]] = []
        for i, point in enumerate(points):
            where = f"points[{i}]"
            step = point.get("step")
            if isinstance(step, bool) or not isinstance(step, int):
                raise Invalid(f"{where}: step must be an integer")
            metrics = {k: v for k, v in point.items() if k not in _RESERVED}
            for key, value in metrics.items():
                if isinstance(value, bool) or not isinstance(value, (int, float)) or (
                        not math.isfinite(value)):
                    raise Invalid(f"{where}: metric {key!r} must be a finite "
                                  "number")
            seq = _seq_of(point, where)
            if seq is None:
                nxt = _next_seq(conn, run_points, internal) if nxt is None else nxt
                seq, nxt = nxt, nxt + 1
            lines.append({"run_id": internal, "seq": seq, "step": step,
                          "time": point.get("time"), "metrics": json.dumps(metrics)})
        stored = insert_new(conn, run_points, lines)
        values: dict[str, Any] = {"points": run.points + stored, "updated_at": time.time()}
        if lines:
            steps = [int(line["step"]) for line in lines]
            values["last_step"] = max([*steps, *([run.last_step] if run.last_step is not None
                                                 else [])])
        if total_steps is not None:
            values["total_steps"] = total_steps
        conn.execute(sa.update(runs).where(runs.c.id == internal).values(**values))
    return {"stored": stored, "skipped": len(lines) - stored}


def log_events(store: Store, account: Account, run_id: str,
               events: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """Store a batch of events (notes, alarms, holdout, delta, finish)."""
    _check_batch(events, "events")
    with store.engine.begin() as conn:
        internal = _owned(conn, account, run_id).id
        nxt = None
        lines = []
        holdout = None
        for i, event in enumerate(events):
            where = f"events[{i}]"
            kind = event.get("kind")
            if not isinstance(kind, str) or not kind:
                raise Invalid(f"{where}: an event needs a kind")
            seq = _seq_of(event, where)
            if seq is None:
                nxt = _next_seq(conn, run_events, internal) if nxt is None else nxt
                seq, nxt = nxt, nxt + 1
            step = event.get("step")
            body = {k: v for k, v in event.items() if k not in ("seq", "kind", "step", "time")}
            lines.append({"run_id": internal, "seq": seq, "kind": kind[:20],
                          "step": step if isinstance(step, int) else None,
                          "time": event.get("time"), "body": json.dumps(body, default=str)})
            if kind == "holdout":
                holdout = {k: body.get(k) for k in ("before", "after", "metric", "verdict")}
        stored = insert_new(conn, run_events, lines)
        if holdout is not None:
            conn.execute(sa.update(runs).where(runs.c.id == internal).values(
                holdout_result=json.dumps(holdout), updated_at=time.time()))
    return {"stored": stored, "skipped": len(lines) - stored}


def finish_run(store: Store, account: Account, run_id: str, status: str,
               summary: Mapping[str, Any] | None, adapter: str | None) -> dict[str, Any]:
    """Mark the run done, failed or stopped (a second finish changes nothing)."""
    if status not in STATUSES:
        raise Invalid(f"status must be one of {', '.join(STATUSES)}")
    with store.engine.begin() as conn:
        run = _owned(conn, account, run_id)
        internal = run.id
        if run.status == "running":
            now = time.time()
            conn.execute(sa.update(runs).where(runs.c.id == internal).values(
                status=status, summary=json.dumps(dict(summary or {}), default=str),
                adapter=adapter, finished_at=now, updated_at=now))
        return _record(_owned(conn, account, run_id))


def list_runs(store: Store, account: Account, *, limit: int = 100,
              offset: int = 0) -> dict[str, Any]:
    """The account's runs, newest first."""
    with store.engine.connect() as conn:
        total = conn.execute(sa.select(sa.func.count()).select_from(runs).where(
            runs.c.account_id == account.id)).scalar() or 0
        rows = conn.execute(sa.select(runs).where(runs.c.account_id == account.id)
                            .order_by(runs.c.seq.desc()).limit(limit).offset(offset)).all()
    return {"runs": [_record(r) for r in rows], "total": int(total)}


def get_run(store: Store, account: Account, run_id: str) -> dict[str, Any]:
    """One run with ``series`` (points, oldest first) and ``events``."""
    with store.engine.connect() as conn:
        run = _owned(conn, account, run_id)
        internal = run.id
        points = conn.execute(sa.select(run_points).where(run_points.c.run_id == internal)
                              .order_by(run_points.c.seq)).all()
        events = conn.execute(sa.select(run_events).where(run_events.c.run_id == internal)
                              .order_by(run_events.c.seq)).all()
    series = [{"seq": p.seq, "step": p.step, "time": p.time, **json.loads(p.metrics)}
              for p in points]
    logged = [{"seq": e.seq, "kind": e.kind, "step": e.step, "time": e.time,
               **json.loads(e.body)} for e in events]
    return {**_record(run), "series": series, "events": logged}
