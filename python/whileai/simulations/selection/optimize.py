"""Prune graded rows to what carries a training signal: ``optimize`` for RL and SFT.

RL (``select_for_rl``): drop junk (no ask, no reply, no usable reward), duplicate rollouts within
an ask, truncated rollouts (or keep them as ``overlong``, or keep them as failures with the
judged score under ``reward_before_penalty``), unanimous asks and asks outside the pass-rate
band; keep whole groups, interleaved round-robin across fault kinds. SFT (``select_for_sft``):
rejection sampling, with the ``random_*`` rules as chance controls. Nothing is dropped silently.

>>> rows = [{"task_id": "t", "prompt": "p", "final_text": f"r{i}", "reward": float(i % 2)}
...         for i in range(4)]
>>> kept, report = optimize(rows, mode="rl")
>>> len(kept), report["band_dropped"]
(4, {'too_easy': 0, 'too_hard': 0})
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Sequence
from typing import Any, Literal, get_args, overload

from whileai.errors import ConfigError
from whileai.rows.keywords import valid_kwargs
from whileai.rows.source import as_rows, read_reward
from whileai.simulations.clean.hack_scan import hack_scan
from whileai.simulations.selection.gate import calibrate
from whileai.simulations.selection.hygiene import (
    DEFAULT_BAND,
    PASS_AT,
    check_band,
    dedupe_groups,
    group_rows,
    group_signal,
    reward_correlations,
    trim_out_of_band,
    trim_unanimous_groups,
)

__all__ = ["SFT_RULES", "optimize", "select_for_rl", "select_for_sft"]

SftRule = Literal["top_per_prompt", "top_k_overall", "random_per_prompt", "random_k_overall"]
Truncated = Literal["drop", "keep", "penalize"]
SFT_RULES: tuple[str, ...] = get_args(SftRule)
_TRUNCATED: tuple[str, ...] = get_args(Truncated)


def _eval_sourced(rows: Sequence[dict[str, Any]]) -> int:
    return sum(
        isinstance(r.get("lineage"), dict) and r["lineage"].get("source") == "eval" for r in rows
    )


def _eval_warning(n: int) -> list[str]:
    if not n:
        return []
    return [
        f"{n} selected rows got their reward from evaluate() (lineage.source == 'eval'): the "
        "held-out scorer becomes the training reward; grade training rows with run_judge or "
        "data.grade and keep evaluate for held-out rows"
    ]


def _junk(rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, int]]:
    kept, why = [], {"no_prompt": 0, "no_reply": 0, "unjudged": 0, "invalid_reward": 0}
    for row in rows:
        prompt, final, steps = row.get("prompt"), row.get("final_text"), row.get("steps")
        value, how = read_reward(row)
        if not (isinstance(prompt, str) and prompt.strip()):
            why["no_prompt"] += 1
        elif not (isinstance(final, str) and final.strip()) and not steps:
            why["no_reply"] += 1
        elif value is None:
            why["unjudged" if how == "unjudged" else "invalid_reward"] += 1
        else:
            kept.append(row)
    return kept, why


def _is_truncated(row: dict[str, Any]) -> bool:
    if row.get("truncated") is True or row.get("finish_reason") == "length":
        return True
    return any(isinstance(s, dict) and s.get("truncated") is True for s in row.get("steps") or [])


def _fault_kind(group: Sequence[dict[str, Any]]) -> str:
    for row in group:
        for fault in row.get("faults") or []:
            if isinstance(fault, dict) and fault.get("kind"):
                return str(fault["kind"])
    return "none"


def _round_robin(groups: dict[str, list[dict[str, Any]]]) -> list[list[dict[str, Any]]]:
    buckets: dict[str, list[list[dict[str, Any]]]] = {}
    for group in groups.values():
        buckets.setdefault(_fault_kind(group), []).append(group)
    order: list[list[dict[str, Any]]] = []
    queues = [buckets[k] for k in sorted(buckets)]
    while any(queues):
        order.extend(q.pop(0) for q in queues if q)
    return order


def _stamp_group(group: list[dict[str, Any]]) -> list[dict[str, Any]]:
    values = [v for v in (read_reward(r)[0] for r in group) if v is not None]
    n1 = sum(v >= PASS_AT for v in values)
    stats = {"n0": len(values) - n1, "n1": n1,
             "reward_mean": round(statistics.fmean(values), 6) if values else None,
             "reward_std": round(statistics.pstdev(values), 6) if values else None}
    return [{**r, "group": stats} for r in group]


def select_for_rl(
    rows: Any,
    *,
    band: tuple[float, float] = DEFAULT_BAND,
    enforce_band: bool = True,
    truncated: Truncated = "drop",
    endorsed: Sequence[str] | None = None,
    max_asks: int | None = None,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Keep whole groups that carry a group-relative signal; see the module docstring."""
    if truncated not in _TRUNCATED:
        raise ConfigError(f"truncated= must be one of {', '.join(_TRUNCATED)}, got {truncated!r}")
    check_band(band)
    given = as_rows(rows)
    before = group_signal(given)
    items, junk = _junk(calibrate(given))
    items, dupes = dedupe_groups(items)
    trunc = {"dropped": 0, "overlong": 0, "penalized": 0}
    handled = []
    for row in items:
        if not _is_truncated(row):
            handled.append(row)
        elif truncated == "drop":
            trunc["dropped"] += 1
        elif truncated == "keep":
            trunc["overlong"] += 1
            handled.append({**row, "overlong": True})
        else:
            trunc["penalized"] += 1
            handled.append({**row, "reward_before_penalty": row.get("reward"), "reward": 0.0})
    items, unanimous = trim_unanimous_groups(handled)
    if enforce_band:
        items, band_rep = trim_out_of_band(items, band)
    else:
        _, band_rep = trim_out_of_band(items, band)
        band_rep = {**band_rep, "dropped_rows": 0, "enforced": False}
    ordered = _round_robin(group_rows(items))
    capped = 0
    if max_asks is not None and len(ordered) > max_asks:
        capped = len(ordered) - max_asks
        ordered = ordered[:max_asks]
    kept = [row for group in ordered for row in _stamp_group(group)]
    warnings: list[str] = []
    if before["asks"] - before["single"] and ordered:
        warnings.append(
            "pruning shrinks the groups: pass^k and pass@k on the selection are not the graded "
            "numbers (read pass_at before optimize; the calibration stamp keeps them per task)"
        )
    correlations = reward_correlations(kept)
    warnings.extend(correlations["warnings"])
    scan = None
    if endorsed is not None:

        scan = hack_scan(kept, endorsed=endorsed, progress=False)
        warnings.extend(scan["warnings"] if scan["regime"] != "train" else scan["warnings"][:1])
    n_eval = _eval_sourced(kept)
    warnings.extend(_eval_warning(n_eval))
    report = {
        "mode": "rl",
        "rows_in": len(given),
        "rows_out": len(kept),
        "asks_in": before["asks"],
        "asks_out": len(ordered),
        "dropped": {
            "junk": junk,
            "duplicates": dupes["dropped"],
            "truncated": trunc,
            "unanimous": {k: unanimous[k] for k in ("all_pass", "all_fail", "dropped_rows")},
            "out_of_band_rows": band_rep["dropped_rows"],
            "capped_asks": capped,
        },
        "band": list(check_band(band)),
        "enforce_band": enforce_band,
        "band_dropped": {"too_easy": band_rep["too_easy"], "too_hard": band_rep["too_hard"]},
        "fault_kinds": sorted({_fault_kind(g) for g in ordered}),
        "correlations": correlations["correlations"],
        "hack_scan": scan,
        "hygiene_warnings": warnings,
        "eval_sourced": n_eval,
    }
    if not enforce_band:
        report["out_of_band_kept"] = band_rep["too_easy"] + band_rep["too_hard"]
    return kept, report


def select_for_sft(
    rows: Any,
    *,
    select: SftRule = "top_per_prompt",
    min_reward: float = 1.0,
    k: int | None = None,
    seed: int = 0,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Rejection sampling: the best completion per prompt, or the best ``k`` overall.

    ``random_per_prompt`` / ``random_k_overall`` pick at random (ignoring reward and
    ``min_reward``) from the same pool, as chance controls for an ablation.
    """
    if select not in SFT_RULES:
        raise ConfigError(f"select= must be one of {', '.join(SFT_RULES)}, got {select!r}")
    if select.endswith("_k_overall") and (not isinstance(k, int) or k < 1):
        raise ConfigError(f"select={select!r} needs k= (an int >= 1), got {k!r}")
    given = as_rows(rows)
    items, junk = _junk(given)
    rng = random.Random(seed)
    chosen: list[dict[str, Any]] = []
    below = 0
    if select == "top_per_prompt":
        for group in group_rows(items).values():
            best = max(group, key=lambda r: read_reward(r)[0] or 0.0)
            if (read_reward(best)[0] or 0.0) >= min_reward:
                chosen.append(best)
            else:
                below += 1
    elif select == "random_per_prompt":
        chosen = [rng.choice(group) for group in group_rows(items).values()]
    elif select == "top_k_overall":
        eligible = [r for r in items if (read_reward(r)[0] or 0.0) >= min_reward]
        below = len(items) - len(eligible)
        order = sorted(range(len(eligible)), key=lambda i: -(read_reward(eligible[i])[0] or 0.0))
        chosen = [eligible[i] for i in order[:k]]
    else:
        chosen = rng.sample(items, min(k or 0, len(items)))
    n_eval = _eval_sourced(chosen)
    return chosen, {
        "mode": "sft",
        "select": select,
        "min_reward": min_reward,
        "k": k,
        "rows_in": len(given),
        "rows_out": len(chosen),
        "dropped": {"junk": junk, "below_min_reward": below},
        "hygiene_warnings": _eval_warning(n_eval),
        "eval_sourced": n_eval,
    }


_OPT_KEYS = {
    "rl": ("band", "enforce_band", "truncated", "endorsed", "max_asks"),
    "sft": ("select", "min_reward", "k", "seed"),
}
Selection = tuple[list[dict[str, Any]], dict[str, Any]]


@overload
def optimize(
    data_or_rows: Any,
    mode: Literal["rl"] = "rl",
    *,
    band: tuple[float, float] = DEFAULT_BAND,
    enforce_band: bool = True,
    truncated: Truncated = "drop",
    endorsed: Sequence[str] | None = None,
    max_asks: int | None = None,
) -> Selection: ...


@overload
def optimize(
    data_or_rows: Any,
    mode: Literal["sft"],
    *,
    select: SftRule = "top_per_prompt",
    min_reward: float = 1.0,
    k: int | None = None,
    seed: int = 0,
) -> Selection: ...


@valid_kwargs
def optimize(
    data_or_rows: Any,
    mode: Literal["rl", "sft"] = "rl",
    *,
    band: tuple[float, float] | None = None,
    enforce_band: bool | None = None,
    truncated: Truncated | None = None,
    endorsed: Sequence[str] | None = None,
    max_asks: int | None = None,
    select: SftRule | None = None,
    min_reward: float | None = None,
    k: int | None = None,
    seed: int | None = None,
) -> Selection:
    """Prune a run or rows for training: ``mode="rl"`` (groups) or ``"sft"`` (rejection sampling).

    Args:
        data_or_rows: a graded run (``ScoredData``), its rows, or a JSONL path.
        mode: ``"rl"``: :func:`select_for_rl`; ``"sft"``: :func:`select_for_sft`.
        band: ``rl``: the pass-rate band whole groups must fall in (default (0.2, 0.8)).
        enforce_band: ``rl``: False reports the band without trimming to it (default True).
        truncated: ``rl``: ``"drop"`` (default), ``"keep"`` (as ``overlong``) or
            ``"penalize"`` (kept as failures, judged score under ``reward_before_penalty``).
        endorsed: ``rl``: hack-scan features you endorse (not reported as suspicious).
        max_asks: ``rl``: keep at most this many asks (whole groups, round-robin by fault kind).
        select: ``sft``: ``"top_per_prompt"`` (default), ``"top_k_overall"`` or the
            ``random_*`` chance controls.
        min_reward: ``sft``: the lowest reward a kept completion may have (default 1.0).
        k: ``sft``: how many rows the ``*_k_overall`` rules keep.
        seed: ``sft``: the seed of the ``random_*`` rules (default 0).

    Returns:
        ``(rows, report)``: the kept rows and what was dropped and why.

    Raises:
        TypeError: an unknown keyword, or one that belongs to the other mode (the valid ones
            are listed).
        ConfigError: an unknown ``mode``, ``truncated`` or ``select``, or a malformed band.

    >>> optimize([], mode="sft", band=(0.1, 0.9))
    Traceback (most recent call last):
    ...
    TypeError: optimize(mode='sft') does not take band; its keywords: select, min_reward, k, seed
    """
    if mode not in _OPT_KEYS:
        raise ConfigError(f"mode must be 'rl' or 'sft', got {mode!r}")
    given: dict[str, Any] = {name: value for name, value in (
        ("band", band), ("enforce_band", enforce_band), ("truncated", truncated),
        ("endorsed", endorsed), ("max_asks", max_asks), ("select", select),
        ("min_reward", min_reward), ("k", k), ("seed", seed)) if value is not None}
    other = sorted(set(given) - set(_OPT_KEYS[mode]))
    if other:
        raise TypeError(
            f"optimize(mode={mode!r}) does not take {', '.join(other)}; its keywords: "
            f"{', '.join(_OPT_KEYS[mode])}"
        )
    rows = as_rows(data_or_rows, what="data_or_rows")
    if mode == "rl":
        return select_for_rl(rows, **given)
    return select_for_sft(rows, **given)
