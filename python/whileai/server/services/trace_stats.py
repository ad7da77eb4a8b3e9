"""The per-task trace summary: runs, scored runs and passes per (agent, task), kept current.

Every change to a trace that the cuts report counts (a trace stored or rebuilt, a ``score``
verdict sent or corrected) passes the trace's state before and after to :func:`apply`, which
adds the difference to ``trace_task_stats`` in the same transaction. The report and the trace
counts then read a few rows per task instead of every trace: their time does not grow with the
number of traces.

A raw trace (no row) counts under the reason it has none (``ingest.unbuilt``), kept in its
``task``; one stored before reasons were kept counts under ``""``.

>>> contribution(TraceState(agent=None, genai=True, task="s1", score=1.0))
(('', True, 's1'), (1, 1, 1))
>>> contribution(TraceState(agent="bot", genai=False, task="without_content", score=None))
(('bot', False, 'without_content'), (1, 0, 0))
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import sqlalchemy as sa

from whileai.server.store.dialect import accumulate
from whileai.server.store.trace_tables import trace_task_stats, traces

__all__ = ["TraceState", "apply", "contribution", "raw_reasons", "recount", "states",
           "task_stats", "trace_counts"]

PASS = 1.0  # a run passes when its score is this or more


@dataclass(frozen=True, slots=True, kw_only=True)
class TraceState:
    """What the summary counts of one trace."""

    agent: str | None
    genai: bool
    task: str | None
    score: float | None


Key = tuple[str, bool, str]


def contribution(state: TraceState) -> tuple[Key, tuple[int, int, int]]:
    """The summary row a trace counts in and what it adds there: (runs, scored, passes)."""
    key = (state.agent or "", bool(state.genai), state.task or "")
    if state.score is None:
        return key, (1, 0, 0)
    return key, (1, 1, int(state.score >= PASS))


def states(conn: sa.Connection, account_id: str,
           trace_ids: Sequence[str]) -> dict[str, TraceState]:
    """The stored state of those of ``trace_ids`` that exist."""
    out: dict[str, TraceState] = {}
    for start in range(0, len(trace_ids), 500):
        for row in conn.execute(
                sa.select(traces.c.trace_id, traces.c.agent, traces.c.genai, traces.c.task,
                          traces.c.score).where(
                    traces.c.account_id == account_id,
                    traces.c.trace_id.in_(trace_ids[start:start + 500]))):
            out[row.trace_id] = TraceState(agent=row.agent, genai=bool(row.genai),
                                           task=row.task, score=row.score)
    return out


def apply(conn: sa.Connection, account_id: str, before: Iterable[TraceState],
          after: Iterable[TraceState]) -> None:
    """Move the summary from the ``before`` states of some traces to their ``after`` states."""
    delta: dict[Key, list[int]] = {}
    for sign, group in ((-1, before), (1, after)):
        for state in group:
            key, counts = contribution(state)
            total = delta.setdefault(key, [0, 0, 0])
            for i, n in enumerate(counts):
                total[i] += sign * n
    changes = [(key, counts) for key, counts in sorted(delta.items()) if any(counts)]
    rows = [{"account_id": account_id, "agent": agent, "genai": genai, "task": task,
             "runs": runs, "scored": scored, "passes": passes}
            for (agent, genai, task), (runs, scored, passes) in changes]
    accumulate(conn, trace_task_stats, rows, keys=("account_id", "agent", "genai", "task"),
               add=("runs", "scored", "passes"))
    if any(counts[0] < 0 for _, counts in changes):  # a task that lost its last run is gone
        conn.execute(sa.delete(trace_task_stats).where(
            trace_task_stats.c.account_id == account_id, trace_task_stats.c.runs <= 0))


def task_stats(conn: sa.Connection, account_id: str,
               agent: str | None) -> dict[str, tuple[int, int, int]]:
    """``{task: (runs, scored runs, passes)}`` of the GenAI traces (of ``agent`` when given)."""
    c = trace_task_stats.c
    query = (sa.select(c.task, sa.func.sum(c.runs), sa.func.sum(c.scored), sa.func.sum(c.passes))
             .where(c.account_id == account_id, c.genai.is_(True)).group_by(c.task))
    if agent is not None:
        query = query.where(c.agent == agent)
    return {task: (int(n), int(s), int(p)) for task, n, s, p in conn.execute(query)}


def trace_counts(conn: sa.Connection, account_id: str, agent: str | None) -> dict[bool, int]:
    """How many GenAI (True) and raw (False) traces there are (of ``agent`` when given)."""
    c = trace_task_stats.c
    query = (sa.select(c.genai, sa.func.sum(c.runs)).where(c.account_id == account_id)
             .group_by(c.genai))
    if agent is not None:
        query = query.where(c.agent == agent)
    return {bool(genai): int(n) for genai, n in conn.execute(query)}


def raw_reasons(conn: sa.Connection, account_id: str, agent: str | None) -> dict[str, int]:
    """How many raw traces there are by the reason they have no row (of ``agent`` when given);
    traces stored before reasons were kept count as ``not_genai``."""
    c = trace_task_stats.c
    query = (sa.select(c.task, sa.func.sum(c.runs)).where(c.account_id == account_id,
                                                          c.genai.is_(False)).group_by(c.task))
    if agent is not None:
        query = query.where(c.agent == agent)
    out: dict[str, int] = {}
    for task, n in conn.execute(query):
        if int(n):
            out[task or "not_genai"] = out.get(task or "not_genai", 0) + int(n)
    return dict(sorted(out.items()))


def recount(conn: sa.Connection, account_id: str) -> int:
    """Rebuild the account's summary from its traces (after a bulk load that bypassed ingest);
    returns the number of summary rows."""
    c = traces.c
    task = sa.func.coalesce(c.task, "")
    agent = sa.func.coalesce(c.agent, "")
    passed = sa.case((c.score >= PASS, 1), else_=0)
    conn.execute(sa.delete(trace_task_stats).where(trace_task_stats.c.account_id == account_id))
    counted = conn.execute(
        sa.select(c.account_id, agent, c.genai, task, sa.func.count(), sa.func.count(c.score),
                  sa.func.sum(passed))
        .where(c.account_id == account_id).group_by(c.account_id, agent, c.genai, task)).all()
    rows = [{"account_id": a, "agent": g, "genai": bool(ai), "task": t, "runs": int(n),
             "scored": int(s), "passes": int(p)} for a, g, ai, t, n, s, p in counted]
    if rows:
        conn.execute(sa.insert(trace_task_stats), rows)
    return len(rows)
