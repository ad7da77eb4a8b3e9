"""Group hygiene for grouped RL data: signal per ask, duplicates, unanimous and out-of-band asks.

A row passes when its reward is at least 0.5 (partial credit splits there); an ask's pass rate
is its passes over its graded rollouts. Every trim returns ``(rows, report)`` and counts what it
dropped. ``reward_correlations`` is the older pooled check (reply length, tool calls, turns),
flagged at ``HACK_THRESHOLD``; ``hack_scan`` is the within-ask one.

>>> rows = [{"scenario_id": "a", "reward": r, "final_text": t} for r, t in [(1, "x"), (0, "y")]]
>>> group_signal(rows)["mixed_asks"]
1
>>> trim_unanimous_groups(rows)[1]["dropped_asks"]
0
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

from whileai.errors import ConfigError
from whileai.rows.source import as_rows, read_reward, task_key
from whileai.simulations.clean.hack_features import tool_names, trajectory_key
from whileai.simulations.measure.stats import pearson

__all__ = [
    "DEFAULT_BAND",
    "HACK_THRESHOLD",
    "PASS_AT",
    "check_band",
    "dedupe_groups",
    "group_rows",
    "group_signal",
    "length_report",
    "reward_correlations",
    "trim_out_of_band",
    "trim_unanimous_groups",
]

HACK_THRESHOLD = 0.3
DEFAULT_BAND = (0.2, 0.8)
PASS_AT = 0.5


def check_band(band: Any) -> tuple[float, float]:
    """Return ``band`` as ``(lo, hi)`` with 0 <= lo <= hi <= 1, else raise ConfigError."""
    try:
        lo, hi = float(band[0]), float(band[1])
    except (TypeError, ValueError, IndexError) as exc:
        raise ConfigError(f"band must be (low, high) pass rates, got {band!r}") from exc
    if not 0.0 <= lo <= hi <= 1.0:
        raise ConfigError(f"band must satisfy 0 <= low <= high <= 1, got {band!r}")
    return lo, hi


def group_rows(rows: Sequence[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Rows by task, in first-seen order (rows with no task key under ``""``)."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(task_key(row) or "", []).append(row)
    return groups


def _passes(group: Sequence[dict[str, Any]]) -> tuple[int, int]:
    """(passes, graded) of one group."""
    rewards = [read_reward(r)[0] for r in group]
    graded = [r for r in rewards if r is not None]
    return sum(r >= PASS_AT for r in graded), len(graded)


def group_signal(rows: Any) -> dict[str, Any]:
    """Count the asks that carry a group-relative signal (mixed pass and fail).

    >>> group_signal([{"task_id": "t", "reward": 1.0}, {"task_id": "t", "reward": 1.0}])["all_pass"]
    1
    """
    groups = group_rows(as_rows(rows))
    out: dict[str, Any] = {"asks": len(groups), "mixed_asks": 0, "all_pass": 0, "all_fail": 0,
                           "single": 0, "ungraded_rows": 0}
    for group in groups.values():
        passes, graded = _passes(group)
        out["ungraded_rows"] += len(group) - graded
        if graded < 2:
            out["single"] += 1
        elif passes == graded:
            out["all_pass"] += 1
        elif passes == 0:
            out["all_fail"] += 1
        else:
            out["mixed_asks"] += 1
    multi = out["asks"] - out["single"]
    out["mixed_share"] = round(out["mixed_asks"] / multi, 4) if multi else 0.0
    return out


def dedupe_groups(rows: Any) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Drop repeated trajectories within an ask (same tool calls, arguments and text).

    >>> kept, rep = dedupe_groups([{"task_id": "t", "final_text": "a"}] * 2)
    >>> len(kept), rep["dropped"]
    (1, 1)
    """
    kept, dropped, asks = [], 0, set()
    seen: set[tuple[str, str]] = set()
    for row in as_rows(rows):
        key = (task_key(row) or "", trajectory_key(row))
        if key in seen:
            dropped += 1
            asks.add(key[0])
            continue
        seen.add(key)
        kept.append(row)
    return kept, {"dropped": dropped, "asks_affected": len(asks)}


def trim_unanimous_groups(rows: Any) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Drop asks whose graded rollouts all pass or all fail (zero advantage everywhere)."""
    kept: list[dict[str, Any]] = []
    report = {"dropped_asks": 0, "dropped_rows": 0, "all_pass": 0, "all_fail": 0}
    for group in group_rows(as_rows(rows)).values():
        passes, graded = _passes(group)
        if graded >= 1 and passes in (0, graded):
            report["all_pass" if passes else "all_fail"] += 1
            report["dropped_asks"] += 1
            report["dropped_rows"] += len(group)
        else:
            kept.extend(group)
    return kept, report


def trim_out_of_band(
    rows: Any, band: tuple[float, float] = DEFAULT_BAND
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Drop asks whose pass rate lies outside ``band`` (a difficulty filter; prompts unread).

    >>> rows = [{"task_id": "t", "reward": 1.0}] * 3 + [{"task_id": "u", "reward": 0.0}]
    >>> trim_out_of_band(rows)[1]["too_easy"], trim_out_of_band(rows)[1]["too_hard"]
    (1, 1)
    """
    lo, hi = check_band(band)
    kept: list[dict[str, Any]] = []
    report: dict[str, Any] = {"band": [lo, hi], "too_easy": 0, "too_hard": 0, "dropped_rows": 0,
                              "ungraded_asks": 0}
    for group in group_rows(as_rows(rows)).values():
        passes, graded = _passes(group)
        if not graded:
            report["ungraded_asks"] += 1
            kept.extend(group)
            continue
        rate = passes / graded
        if rate > hi or rate < lo:
            report["too_easy" if rate > hi else "too_hard"] += 1
            report["dropped_rows"] += len(group)
        else:
            kept.extend(group)
    return kept, report


def _reply(row: dict[str, Any]) -> str:
    text = row.get("final_text")
    return text if isinstance(text, str) else ""


def reward_correlations(
    rows: Any, *, reward: str = "reward", threshold: float = HACK_THRESHOLD
) -> dict[str, Any]:
    """Pooled correlation of reward with reply length, tool calls and turns, flagged at threshold.

    >>> rows = [{"reward": r, "final_text": "x" * (1 + 9 * r)} for r in (0, 1, 0, 1)]
    >>> rep = reward_correlations(rows)
    >>> rep["flagged"]
    ['reply_length']
    """
    xs: dict[str, list[float]] = {"reply_length": [], "tool_calls": [], "turns": []}
    ys: list[float] = []
    for row in as_rows(rows):
        value, _ = read_reward(row, reward)
        if value is None:
            continue
        ys.append(value)
        steps = row.get("steps") if isinstance(row.get("steps"), list) else []
        xs["reply_length"].append(float(len(_reply(row))))
        xs["tool_calls"].append(float(len(tool_names(row))))
        xs["turns"].append(float(1 + sum(isinstance(s, dict) and s.get("role") == "user"
                                         for s in steps or [])))
    corr = {k: pearson(v, ys) for k, v in xs.items()}
    flagged = [k for k, c in corr.items() if c is not None and abs(c) >= threshold]
    warnings = [f"reward tracks {k} (pooled corr {corr[k]:+.2f} >= {threshold})" for k in flagged]
    return {"n": len(ys), "correlations": corr, "threshold": threshold, "flagged": flagged,
            "warnings": warnings}


def length_report(rows: Any, *, spread_warn: float = 4.0) -> dict[str, Any]:
    """Reply length (characters): spread, and the mean length of passing and failing rows.

    >>> rows = [{"final_text": "ab", "reward": 1.0}, {"final_text": "abcd", "reward": 0.0}]
    >>> length_report(rows)["max"]
    4
    """
    lengths: list[int] = []
    passing: list[int] = []
    failing: list[int] = []
    for row in as_rows(rows):
        n = len(_reply(row))
        lengths.append(n)
        value, _ = read_reward(row)
        if value is not None:
            (passing if value >= PASS_AT else failing).append(n)
    if not lengths:
        return {"n": 0, "warnings": ["no rows"]}
    median = statistics.median(lengths)
    out: dict[str, Any] = {
        "n": len(lengths),
        "min": min(lengths),
        "median": median,
        "max": max(lengths),
        "spread": round(max(lengths) / median, 3) if median else None,
        "pass_mean": round(statistics.fmean(passing), 2) if passing else None,
        "fail_mean": round(statistics.fmean(failing), 2) if failing else None,
        "warnings": [],
    }
    if out["spread"] is not None and out["spread"] >= spread_warn:
        out["warnings"].append(
            f"reply length spread: the longest reply is {out['spread']}x the median; "
            "length-match pairs or check the judge for a length bias"
        )
    if out["pass_mean"] and out["fail_mean"] and out["pass_mean"] >= 1.5 * out["fail_mean"]:
        out["warnings"].append(
            f"passing replies are {out['pass_mean'] / out['fail_mean']:.1f}x longer than failing "
            "ones on average: the reward may pay for length"
        )
    return out
