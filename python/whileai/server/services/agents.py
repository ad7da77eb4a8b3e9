"""Agents: the records a push, a trace or ``register_agent`` creates, their counts, and purging
one (its datasets and its traces, with their spans, scores and counts in the cuts summary).
"""

from __future__ import annotations

import json
import secrets
import time
from typing import Any

import sqlalchemy as sa

from whileai.server.services import Account, Store
from whileai.server.services.datasets import _delete_rows
from whileai.server.services.problems import Invalid, NotFound
from whileai.server.store.blobs import remove_parts
from whileai.server.store.tables import agents, datasets
from whileai.server.store.trace_tables import trace_scores, trace_spans, trace_task_stats, traces

__all__ = ["list_agents", "purge", "register"]


def _record(row: Any) -> dict[str, Any]:
    return {"agent": row.name, "description": row.description,
            "tools": json.loads(row.tools) if row.tools else None,
            "systemPrompt": row.system_prompt, "createdAt": row.created_at,
            "updatedAt": row.updated_at}


def list_agents(store: Store, account: Account) -> list[dict[str, Any]]:
    """Every agent of the account (registered or named by a push) with its counts."""
    with store.engine.connect() as conn:
        records = {r.name: r for r in conn.execute(
            sa.select(agents).where(agents.c.account_id == account.id))}
        counts = conn.execute(
            sa.select(datasets.c.agent, datasets.c.purpose, datasets.c.public,
                      sa.func.count(), sa.func.sum(datasets.c.rows))
            .where(datasets.c.account_id == account.id, datasets.c.agent.is_not(None))
            .group_by(datasets.c.agent, datasets.c.purpose, datasets.c.public)).all()
        traced: dict[str, int] = dict(conn.execute(
            sa.select(traces.c.agent, sa.func.count())
            .where(traces.c.account_id == account.id, traces.c.agent.is_not(None))
            .group_by(traces.c.agent)).tuples().all())
    out: dict[str, dict[str, Any]] = {}
    for name in sorted(records):
        out[name] = {**_record(records[name]), "traces": int(traced.get(name, 0)),
                     "datasets": {}, "rows": 0, "publicCards": 0}
    for name, purpose, public, count, rows in counts:
        item = out.setdefault(name, {"agent": name, "description": None, "tools": None,
                                     "systemPrompt": None, "traces": int(traced.get(name, 0)),
                                     "datasets": {},
                                     "rows": 0, "publicCards": 0})
        item["datasets"][purpose] = item["datasets"].get(purpose, 0) + int(count)
        item["rows"] += int(rows or 0)
        if public:
            item["publicCards"] += int(count)
    return [out[name] for name in sorted(out)]


def register(store: Store, account: Account, name: str, *, description: str | None,
             tools: list[Any] | None, system_prompt: str | None) -> dict[str, Any]:
    """Create or update an agent record; only the fields given change."""
    if not name.strip():
        raise Invalid("an agent needs a name")
    now = time.time()
    values: dict[str, Any] = {"updated_at": now}
    if description is not None:
        values["description"] = description
    if tools is not None:
        values["tools"] = json.dumps(tools)
    if system_prompt is not None:
        values["system_prompt"] = system_prompt
    with store.engine.begin() as conn:
        row = conn.execute(sa.select(agents).where(
            agents.c.account_id == account.id, agents.c.name == name)).first()
        if row is None:
            conn.execute(sa.insert(agents).values(
                id="agt_" + secrets.token_hex(8), account_id=account.id, name=name,
                created_at=now, **values))
        else:
            conn.execute(sa.update(agents).where(agents.c.id == row.id).values(**values))
        row = conn.execute(sa.select(agents).where(
            agents.c.account_id == account.id, agents.c.name == name)).one()
    return _record(row)


def _delete_traces(conn: sa.Connection, account_id: str, name: str) -> None:
    """Delete the agent's traces with their spans, scores and summary counts."""
    theirs = sa.select(traces.c.trace_id).where(traces.c.account_id == account_id,
                                                traces.c.agent == name).scalar_subquery()
    for table in (trace_spans, trace_scores):
        conn.execute(sa.delete(table).where(table.c.account_id == account_id,
                                            table.c.trace_id.in_(theirs)))
    conn.execute(sa.delete(traces).where(traces.c.account_id == account_id,
                                         traces.c.agent == name))
    conn.execute(sa.delete(trace_task_stats).where(trace_task_stats.c.account_id == account_id,
                                                   trace_task_stats.c.agent == name))


def purge(store: Store, account: Account, name: str, *, dry_run: bool) -> dict[str, Any]:
    """Delete an agent, its datasets and its traces; ``dry_run`` only counts them."""
    with store.engine.begin() as conn:
        record = conn.execute(sa.select(agents.c.id).where(
            agents.c.account_id == account.id, agents.c.name == name)).first()
        ids = list(conn.execute(sa.select(datasets.c.id).where(
            datasets.c.account_id == account.id, datasets.c.agent == name)).scalars())
        n_traces = int(conn.execute(sa.select(sa.func.count()).select_from(traces).where(
            traces.c.account_id == account.id, traces.c.agent == name)).scalar() or 0)
        if record is None and not ids and not n_traces:
            raise NotFound(f"no agent {name!r} on this account")
        paths: list[str] = []
        if not dry_run:
            paths = _delete_rows(conn, ids)
            _delete_traces(conn, account.id, name)
            conn.execute(sa.delete(agents).where(
                agents.c.account_id == account.id, agents.c.name == name))
    remove_parts(store.config.parts_dir, paths)
    return {"agent": name, "traces": n_traces, "datasets": len(ids), "datasetIds": ids,
            "deleted": not dry_run, "dryRun": dry_run}
