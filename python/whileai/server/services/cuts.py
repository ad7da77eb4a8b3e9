"""Cuts: what the traces would teach, and the datasets made from them.

Runs (traces) group into prompts by ``scenario_id`` (the ``whileai.scenario_id`` span attribute),
else by their task key (the prompt). A run passes when its ``score`` is 1.0 or more. ``rl`` keeps
the prompts passed some of the time but not always (pass rate inside ``band``, 20-80% by
default, with two or more scored runs) and all their scored runs; ``sft`` keeps the best run of
every prompt that ever passed; ``more`` counts prompts with fewer than two scored runs. Prompts
are split into train and holdout by task (``measure.holdout.split_pseudo_production``), so a
prompt you measure on is never one you trained on.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from whileai.server.errors import ApiError
from whileai.server.services import Account, Store, datasets
from whileai.server.services.traces import trace_rows
from whileai.server.store.blobs import PartWriter
from whileai.simulations.measure.holdout import split_pseudo_production
from whileai.simulations.rowsource import task_key

__all__ = ["DEFAULT_BAND", "FILTERS", "cut", "cuts_report"]

DEFAULT_BAND = (0.2, 0.8)
FILTERS = ("model", "tool", "measure")
_SMALL = 5  # with fewer prompts than this and no holdout= given, nothing is held out


def _keep(row: dict[str, Any], filters: Mapping[str, Any]) -> bool:
    if "model" in filters and row.get("model_version") != filters["model"]:
        return False
    if "tool" in filters and not any(s.get("tool") == filters["tool"]
                                     for s in row.get("steps") or []):
        return False
    return not ("measure" in filters and filters["measure"] not in row.get("scores", {}))


def _groups(store: Store, account: Account, agent: str | None, since: str,
            filters: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    unknown = sorted(set(filters) - set(FILTERS))
    if unknown:
        raise ApiError("bad_request", f"unknown trace filter(s) {unknown}; use {list(FILTERS)}")
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in trace_rows(store, account, agent=agent, since=since):
        if _keep(row, filters):
            groups.setdefault(task_key(row) or row["trace_id"], []).append(row)
    return groups


def _score(row: dict[str, Any]) -> float | None:
    value = row.get("scores", {}).get("score")
    return None if value is None else float(value)


def _band(band: Any) -> tuple[float, float]:
    lo, hi = band if band is not None else DEFAULT_BAND
    if not 0.0 <= lo <= hi <= 1.0:
        raise ApiError("bad_request", f"band must be (lo, hi) with 0 <= lo <= hi <= 1, got {band}")
    return float(lo), float(hi)


def _select(groups: dict[str, list[dict[str, Any]]], kind: str,
            band: tuple[float, float]) -> list[dict[str, Any]]:
    """The rows a cut of ``kind`` keeps (reward read from the score)."""
    out = []
    for key, runs in groups.items():
        scored = [(r, s) for r in runs if (s := _score(r)) is not None]
        passes = sum(s >= 1.0 for _, s in scored)
        if kind == "rl":
            if len(scored) >= 2 and band[0] <= passes / len(scored) <= band[1]:
                out.extend(_as_row(r, s, key) for r, s in scored)
        elif passes:
            best = max(scored, key=lambda rs: rs[1])  # first best run: max is stable
            out.append(_as_row(best[0], best[1], key))
    return out


def _as_row(row: dict[str, Any], score: float, key: str) -> dict[str, Any]:
    out = {k: v for k, v in row.items() if k not in ("scores",)}
    out["reward"] = 1.0 if score >= 1.0 else min(max(score, 0.0), 1.0)
    out["scenario_id"] = row.get("scenario_id") or key
    out["lineage"] = {"source": "traces", "trace_id": row["trace_id"], "stages": ["cut"]}
    return out


def _split(rows: list[dict[str, Any]], holdout: float | None,
           prompts: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(train, held out): whole prompts; ``holdout=None`` holds out 20% of 5 or more prompts."""
    if holdout is not None and not 0.0 <= holdout < 1.0:
        raise ApiError("bad_request", f"holdout must be in [0, 1), got {holdout}")
    fraction = 0.2 if holdout is None and prompts >= _SMALL else (holdout or 0.0)
    if not rows or fraction == 0.0:
        return rows, []
    held, rest = split_pseudo_production(rows, fraction)
    return rest, held


def cuts_report(store: Store, account: Account, *, agent: str | None = None, since: str = "all",
                band: Any = None, holdout: float | None = None,
                filters: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """What a cut would hold: prompts seen, rl (with train/holdout), sft, and more."""
    lo_hi = _band(band)
    groups = _groups(store, account, agent, since, filters or {})
    runs = sum(len(g) for g in groups.values())
    scored = sum(1 for g in groups.values() for r in g if _score(r) is not None)
    rl_rows = _select(groups, "rl", lo_hi)
    rl_prompts = {r["scenario_id"] for r in rl_rows}
    train, held = _split(rl_rows, holdout, len(rl_prompts))
    sft_rows = _select(groups, "sft", lo_hi)
    more = sum(1 for g in groups.values() if sum(_score(r) is not None for r in g) < 2)
    return {"agent": agent, "since": since, "band": list(lo_hi), "prompts": len(groups),
            "runs": runs, "scored": scored,
            "rl": {"prompts": len(rl_prompts), "runs": len(rl_rows),
                   "train": len({r["scenario_id"] for r in train}),
                   "holdout": len({r["scenario_id"] for r in held})},
            "sft": {"prompts": len(sft_rows), "runs": len(sft_rows)},
            "more": {"prompts": more}}


def _dataset(store: Store, account: Account, rows: list[dict[str, Any]],
             new: datasets.NewDataset) -> dict[str, Any]:
    writer = PartWriter(store.config.tmp_dir)
    try:
        for row in rows:
            writer.write((json.dumps(row, ensure_ascii=False) + "\n").encode())
        return datasets.create(store, account, new, writer, len(rows))
    except BaseException:
        writer.abort()
        raise


def cut(store: Store, account: Account, *, agent: str | None = None, kind: str = "rl",
        since: str = "all", holdout: float | None = None, band: Any = None,
        name: str | None = None, filters: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Make the train (and holdout) datasets of a cut; returns both entries and the report.

    Raises:
        ApiError: ``kind`` is not rl/sft, or the cut would be empty (nothing is stored).
    """
    if kind not in ("rl", "sft"):
        raise ApiError("bad_request", f"kind must be 'rl' or 'sft', got {kind!r}")
    report = cuts_report(store, account, agent=agent, since=since, band=band, holdout=holdout,
                         filters=filters)
    groups = _groups(store, account, agent, since, filters or {})
    rows = _select(groups, kind, _band(band))
    if not rows:
        raise ApiError("bad_request", f"nothing to cut: no prompt qualifies for kind={kind!r} "
                                      f"({report['prompts']} prompts, {report['scored']} scored "
                                      "runs); send scores with send_score first")
    train, held = _split(rows, holdout, len({r["scenario_id"] for r in rows}))
    base = name or f"{agent or 'traces'}-{kind}-cut"
    about = f"cut kind={kind} from traces (since {since}) of agent {agent or 'any'}"
    made = {"kind": kind, "report": report, "holdout": None,
            "train": _dataset(store, account, train, datasets.NewDataset(
                name=base, purpose="train", mode=kind, agent=agent, description=about))}
    if held:
        made["holdout"] = _dataset(store, account, held, datasets.NewDataset(
            name=f"{base}-holdout", purpose="holdout", mode=kind, agent=agent,
            description=about, linked=made["train"]["datasetId"]))
    return made
