"""Cuts: what the traces would teach, and the datasets made from them.

Runs (traces) group into prompts by their task (``scenario_id``, the ``whileai.scenario_id`` span
attribute, else the prompt), counted in the database: the report reads the per-task summary
(``trace_stats``), so it stays fast at a million runs.
A run passes when its ``score`` is 1.0 or more. ``rl`` keeps the prompts passed some of the time
but not always (pass rate inside ``band``, 20-80% by default, with two or more scored runs) and
all their scored runs; ``sft`` keeps the best run of every prompt that ever passed; ``more``
counts prompts with fewer than two scored runs. Prompts are split into train and holdout by task
(``measure.holdout.split_pseudo_production``), so a prompt you measure on is never one you
trained on.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa

from whileai.cuts_text import format_cuts
from whileai.rows.source import task_key
from whileai.server.services import Account, Store, datasets, trace_stats
from whileai.server.services.problems import Invalid
from whileai.server.services.trace_reads import since_cutoff, trace_rows
from whileai.server.store.blobs import PartWriter
from whileai.server.store.trace_tables import trace_scores, traces
from whileai.simulations.selection.holdout import split_pseudo_production

__all__ = ["DEFAULT_BAND", "FILTERS", "cut", "cuts_report", "summary_lines", "task_cut"]

DEFAULT_BAND = (0.2, 0.8)
FILTERS = ("model", "tool", "measure")
_SMALL = 5  # with fewer prompts than this and no holdout= given, nothing is held out


def _stats_sql(store: Store, account: Account, agent: str | None, since: str,
               filters: Mapping[str, Any]) -> dict[str, tuple[int, int, int]]:
    """``{task: (runs, scored runs, passes)}`` counted in the database: from the per-task
    summary when no time or trace filter applies, else over the traces (a covering index)."""
    cutoff = since_cutoff(since)
    if cutoff is None and not filters and agent != "":
        with store.engine.connect() as conn:
            return trace_stats.task_stats(conn, account.id, agent)
    passed = sa.case((traces.c.score >= 1.0, 1), else_=0)
    query = (sa.select(traces.c.task, sa.func.count(), sa.func.count(traces.c.score),
                       sa.func.coalesce(sa.func.sum(passed), 0))
             .where(traces.c.account_id == account.id, traces.c.genai.is_(True))
             .group_by(traces.c.task))
    if agent is not None:
        query = query.where(traces.c.agent == agent)
    if cutoff is not None:
        query = query.where(traces.c.created_at >= cutoff)
    if "model" in filters:
        query = query.where(traces.c.model == filters["model"])
    if "measure" in filters:
        named = trace_scores.alias("named")
        query = query.where(sa.exists().where(
            named.c.account_id == traces.c.account_id, named.c.trace_id == traces.c.trace_id,
            named.c.name == filters["measure"]))
    with store.engine.connect() as conn:
        return {task: (int(n), int(s), int(p)) for task, n, s, p in conn.execute(query)}


def _keep(row: dict[str, Any], filters: Mapping[str, Any]) -> bool:
    if "model" in filters and row.get("model_version") != filters["model"]:
        return False
    if "tool" in filters and not any(s.get("tool") == filters["tool"]
                                     for s in row.get("steps") or []):
        return False
    return not ("measure" in filters and filters["measure"] not in row.get("scores", {}))


def _rows_by_task(store: Store, account: Account, agent: str | None, since: str,
                  filters: Mapping[str, Any],
                  tasks: set[str] | None = None) -> dict[str, list[dict[str, Any]]]:
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in trace_rows(store, account, agent=agent, since=since, tasks=tasks):
        if _keep(row, filters):
            groups.setdefault(task_key(row) or row["trace_id"], []).append(row)
    return groups


def _stats(store: Store, account: Account, agent: str | None, since: str,
           filters: Mapping[str, Any]) -> dict[str, tuple[int, int, int]]:
    unknown = sorted(set(filters) - set(FILTERS))
    if unknown:
        raise Invalid(f"unknown trace filter(s) {unknown}; use {list(FILTERS)}")
    if "tool" not in filters:
        return _stats_sql(store, account, agent, since, filters)
    out = {}  # the tool filter reads the steps: row by row
    for task, runs in _rows_by_task(store, account, agent, since, filters).items():
        scores = [s for r in runs if (s := _score(r)) is not None]
        out[task] = (len(runs), len(scores), sum(s >= 1.0 for s in scores))
    return out


def _score(row: dict[str, Any]) -> float | None:
    value = row.get("scores", {}).get("score")
    return None if value is None else float(value)


def _band(band: Any) -> tuple[float, float]:
    lo, hi = band if band is not None else DEFAULT_BAND
    if not 0.0 <= lo <= hi <= 1.0:
        raise Invalid(f"band must be (lo, hi) with 0 <= lo <= hi <= 1, got {band}")
    return float(lo), float(hi)


def _chosen(stats: dict[str, tuple[int, int, int]], kind: str,
            band: tuple[float, float]) -> list[str]:
    """The tasks a cut of ``kind`` keeps, in a stable order."""
    if kind == "rl":
        return sorted(t for t, (_, n, p) in stats.items() if n >= 2 and band[0] <= p / n <= band[1])
    return sorted(t for t, (_, _, p) in stats.items() if p)


def _held(tasks: list[str], holdout: float | None) -> set[str]:
    """The tasks held out: whole tasks; ``holdout=None`` holds out 20% of 5 or more tasks."""
    if holdout is not None and not 0.0 <= holdout < 1.0:
        raise Invalid(f"holdout must be in [0, 1), got {holdout}")
    fraction = 0.2 if holdout is None and len(tasks) >= _SMALL else (holdout or 0.0)
    if not tasks or fraction == 0.0:
        return set()
    held, _ = split_pseudo_production([{"scenario_id": t} for t in tasks], fraction)
    return {r["scenario_id"] for r in held}


def _as_row(row: dict[str, Any], score: float, key: str) -> dict[str, Any]:
    out = {k: v for k, v in row.items() if k not in ("scores",)}
    out["reward"] = 1.0 if score >= 1.0 else min(max(score, 0.0), 1.0)
    out["scenario_id"] = row.get("scenario_id") or key
    out["lineage"] = {"source": "traces", "trace_id": row["trace_id"], "stages": ["cut"]}
    return out


def cuts_report(store: Store, account: Account, *, agent: str | None = None, since: str = "all",
                band: Any = None, holdout: float | None = None,
                filters: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """What a cut would hold: prompts seen, rl (with train/holdout), sft, and more."""
    return _report(_stats(store, account, agent, since, filters or {}), agent=agent, since=since,
                   band=band, holdout=holdout)


def summary_lines(report: Mapping[str, Any], agent: str | None = None) -> list[str]:
    """The report in three lines (``cuts_text.format_cuts``, what the client prints too)."""
    return format_cuts(report, agent).splitlines()


def _report(stats: dict[str, tuple[int, int, int]], *, agent: str | None, since: str,
            band: Any, holdout: float | None) -> dict[str, Any]:
    lo_hi = _band(band)
    rl = _chosen(stats, "rl", lo_hi)
    held = _held(rl, holdout)
    return {"agent": agent, "since": since, "band": list(lo_hi), "prompts": len(stats),
            "runs": sum(n for n, _, _ in stats.values()),
            "scored": sum(s for _, s, _ in stats.values()),
            "rl": {"prompts": len(rl), "runs": sum(stats[t][1] for t in rl),
                   "train": len(rl) - len(held), "holdout": len(held)},
            "sft": {"prompts": len(_chosen(stats, "sft", lo_hi))},
            "more": {"prompts": sum(1 for _, s, _ in stats.values() if s < 2)}}


def _dataset(store: Store, account: Account, rows: list[dict[str, Any]],
             new: datasets.NewDataset) -> dict[str, Any]:
    """The cut's rows as a new dataset, each through the exit filter (``rows.outbound``): a
    trace that carried a ``privileged`` attribute cannot put it into a set that may go public."""
    from whileai.rows.outbound import outbound
    writer = PartWriter(store.config.tmp_dir)
    try:
        for row in rows:
            writer.write((json.dumps(outbound(row), ensure_ascii=False) + "\n").encode())
        return datasets.create(store, account, new, writer, len(rows))
    except BaseException:
        writer.abort()
        raise


def _cut_rows(groups: dict[str, list[dict[str, Any]]], kind: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for key in sorted(groups):
        scored = [(r, s) for r in groups[key] if (s := _score(r)) is not None]
        if kind == "rl":
            out.extend(_as_row(r, s, key) for r, s in scored)
        elif scored:
            best = max(scored, key=lambda rs: rs[1])  # the first best run: max is stable
            out.append(_as_row(best[0], best[1], key))
    return out


def cut(store: Store, account: Account, *, agent: str | None = None, kind: str = "rl",
        since: str = "all", holdout: float | None = None, band: Any = None,
        name: str | None = None, filters: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Make the train (and holdout) datasets of a cut; returns both entries and the report.

    Raises:
        Invalid: ``kind`` is not rl/sft, or the cut would be empty (nothing is stored).
    """
    if kind not in ("rl", "sft"):
        raise Invalid(f"kind must be 'rl' or 'sft', got {kind!r}")
    filters = filters or {}
    stats = _stats(store, account, agent, since, filters)
    report = _report(stats, agent=agent, since=since, band=band, holdout=holdout)
    tasks = _chosen(stats, kind, _band(band))
    if not tasks:
        raise Invalid(f"nothing to cut: no prompt qualifies for kind={kind!r} "
                      f"({report['prompts']} prompts, {report['scored']} scored "
                      "runs); send scores with send_score first")
    held = _held(tasks, holdout)
    rows = _cut_rows(_rows_by_task(store, account, agent, since, filters, set(tasks)), kind)
    train = [r for r in rows if r["scenario_id"] not in held]
    base = name or f"{agent or 'traces'}-{kind}-cut"
    about = f"cut kind={kind} from traces (since {since}) of agent {agent or 'any'}"
    made_train = _dataset(store, account, train, datasets.NewDataset(
        name=base, purpose="train", mode=kind, agent=agent, description=about))
    made_held = None
    if held:
        made_held = _dataset(store, account, [r for r in rows if r["scenario_id"] in held],
                             datasets.NewDataset(
                                 name=f"{base}-holdout", purpose="holdout", mode=kind,
                                 agent=agent, description=about,
                                 linked=made_train["datasetId"]))
    return {"kind": kind, "report": report, "train": made_train, "holdout": made_held}


def task_cut(store: Store, account: Account, *, agent: str | None, task: str) -> dict[str, Any]:
    """Which cuts one task falls into with the default band: its runs, scored runs and
    passes, and ``cuts`` (``rl`` when two or more scored runs sit in the band, ``sft`` when
    one passed, ``more`` when fewer than two are scored)."""
    runs, scored, passes = _stats(store, account, agent, "all", {}).get(task, (0, 0, 0))
    lo, hi = _band(None)
    cuts = [name for name, test in (
        ("rl", scored >= 2 and lo <= (passes / scored if scored else 0.0) <= hi),
        ("sft", passes > 0), ("more", scored < 2)) if test]
    return {"task": task, "runs": runs, "scored": scored, "passes": passes, "cuts": cuts,
            "band": [lo, hi]}
