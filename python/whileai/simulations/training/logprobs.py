"""Reports over the policy's recorded log-probabilities: coverage, confidence, KL and staleness.

Rows recorded with ``simulate(logprobs=True)`` carry ``logprob`` (the summed log-probability of
the tokens the policy generated) and ``n_tokens``. With a reference model's summed logprob of
the same tokens in ``ref_logprob`` (``reference_logprobs``), the sampled KL per generated token
of one row is ``(logprob - ref_logprob) / n_tokens``. The publish gate's ``zps.calibrate(rows,
ref="ref_logprob")`` stamps the per-task mean of that number into ``calibration.mean_kl``;
:func:`mean_kl` reports the same numbers without changing rows.

>>> rows = [{"prompt": "a", "logprob": -3.0, "ref_logprob": -5.0, "n_tokens": 4}]
>>> mean_kl(rows)["mean_kl"]
0.5
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from whileai.rows.outbound import task_key
from whileai.rows.source import as_rows

__all__ = ["format_logprob_report", "logprob_report", "mean_kl", "staleness_report"]

CONFIDENCE_WARN = 0.3
MIN_ROWS_FOR_CORRELATION = 10


def _rows(rows: Any) -> list[dict[str, Any]]:
    return as_rows(rows)


def _key(row: dict[str, Any]) -> str:
    try:
        return task_key(row)
    except Exception:  # a row with no prompt or id still counts, under one bucket
        return ""


def _num(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _pearson(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    n = len(xs)
    if n < 2:
        return None
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    if sxx == 0 or syy == 0:
        return None
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    return sxy / math.sqrt(sxx * syy)


def logprob_report(rows: Any) -> dict[str, Any]:
    """How much logprob was captured, and whether reward tracks the policy's confidence.

    Returns a dict: ``rows``, ``with_logprob`` (and ``coverage``), ``agent_turns`` /
    ``turns_with_logprob``, ``tokens``, ``mean_logprob_per_token``, ``truncated``,
    ``usage`` totals, ``reward_confidence_corr`` (Pearson of reward against per-token logprob
    over graded rows; ``None`` below 10 rows or without spread) and ``warnings``.

    >>> logprob_report([{"prompt": "a", "logprob": -2.0, "n_tokens": 4}])["coverage"]
    1.0
    """
    items = _rows(rows)
    with_lp = 0
    tokens = 0
    total_lp = 0.0
    turns = turns_lp = truncated = 0
    usage = {"input_tokens": 0, "output_tokens": 0}
    pairs: list[tuple[float, float]] = []
    for row in items:
        lp, n = _num(row.get("logprob")), row.get("n_tokens")
        for step in row.get("steps") or []:
            if isinstance(step, dict) and ("output_tokens" in step or "logprob" in step):
                turns += 1
                turns_lp += "logprob" in step
        if row.get("truncated"):
            truncated += 1
        raw_usage = row.get("usage")
        u: dict[str, Any] = raw_usage if isinstance(raw_usage, dict) else {}
        for k in usage:
            usage[k] += int(u.get(k) or 0)
        if lp is None or not isinstance(n, int) or n <= 0:
            continue
        with_lp += 1
        tokens += n
        total_lp += lp
        reward = _num(row.get("reward"))
        if reward is not None:
            pairs.append((reward, lp / n))
    corr = None
    if len(pairs) >= MIN_ROWS_FOR_CORRELATION:
        corr = _pearson([p[0] for p in pairs], [p[1] for p in pairs])
    warnings = []
    if items and with_lp < len(items):
        warnings.append(f"{len(items) - with_lp} of {len(items)} rows carry no logprob: an "
                        "update on them is off-policy with no importance ratio; run "
                        "simulate(logprobs=True)")
    if corr is not None and abs(corr) >= CONFIDENCE_WARN:
        warnings.append(f"reward tracks the policy's confidence (corr {corr:+.2f}); a fair "
                        "judge should not care how sure the policy was")
    if truncated:
        warnings.append(f"{truncated} rows were cut at the token or turn cap (truncated)")
    return {
        "rows": len(items), "with_logprob": with_lp,
        "coverage": with_lp / len(items) if items else 0.0,
        "agent_turns": turns, "turns_with_logprob": turns_lp, "tokens": tokens,
        "mean_logprob_per_token": total_lp / tokens if tokens else None,
        "truncated": truncated, "usage": usage,
        "graded_with_logprob": len(pairs), "reward_confidence_corr": corr,
        "warnings": warnings,
    }


def format_logprob_report(report: dict[str, Any]) -> str:
    """One short paragraph for a terminal."""
    corr = report.get("reward_confidence_corr")
    lines = [
        f"logprobs on {report['with_logprob']}/{report['rows']} rows "
        f"({report['coverage']:.0%}), {report['tokens']} tokens; reward~confidence "
        + ("n/a" if corr is None else f"{corr:+.2f}")
    ]
    lines += [f"  ! {w}" for w in report.get("warnings", [])]
    return "\n".join(lines)


def mean_kl(rows: Any, ref: str = "ref_logprob") -> dict[str, Any]:
    """Sampled KL per generated token against a reference, overall and per task.

    Per row: ``(logprob - row[ref]) / n_tokens``; ``per_task`` is the mean over a task's rows
    (the number the publish gate stamps as ``calibration.mean_kl``); ``mean_kl`` is the mean
    over rows and ``pooled_kl`` the token-weighted one. Rows missing any of the three numbers
    are counted in ``skipped``, never read as zero.

    >>> mean_kl([{"prompt": "a", "logprob": -1.0, "n_tokens": 2}])["skipped"]
    1
    """
    items = _rows(rows)
    per_task: dict[str, list[float]] = {}
    total_diff = 0.0
    total_tokens = 0
    values: list[float] = []
    skipped = 0
    for row in items:
        lp, rp, n = _num(row.get("logprob")), _num(row.get(ref)), row.get("n_tokens")
        if lp is None or rp is None or not isinstance(n, int) or n <= 0:
            skipped += 1
            continue
        value = (lp - rp) / n
        values.append(value)
        per_task.setdefault(_key(row), []).append(value)
        total_diff += lp - rp
        total_tokens += n
    warnings = []
    if skipped:
        warnings.append(f"{skipped} of {len(items)} rows lack logprob, {ref} or n_tokens")
    if values and min(values) < -1e-9:
        warnings.append("some rows have a negative sampled KL: normal for single samples, but "
                        "a large negative mean says the reference scored different tokens")
    return {
        "ref": ref, "rows": len(values), "skipped": skipped, "tokens": total_tokens,
        "mean_kl": round(sum(values) / len(values), 6) if values else None,
        "pooled_kl": round(total_diff / total_tokens, 6) if total_tokens else None,
        "per_task": {k: round(sum(v) / len(v), 6) for k, v in per_task.items()},
        "warnings": warnings,
    }


def staleness_report(rows: Any, *, base_model: str | None = None) -> dict[str, Any]:
    """Which policy versions sampled the rows, which are stale, and which can be reweighted.

    A row is ``stale`` when its ``model_version`` differs from ``base_model``; a stale row is
    ``usable`` off-policy only when it carries both its version and its logprob (so the
    importance ratio can be formed). Rows with no ``model_version`` are counted apart.

    >>> r = staleness_report([{"model_version": "v1", "logprob": -2.0, "n_tokens": 3}],
    ...                      base_model="v2")
    >>> r["stale"], r["stale_usable"]
    (1, 1)
    """
    items = _rows(rows)
    versions: dict[str, int] = {}
    missing = stale = usable = with_lp = 0
    for row in items:
        version = row.get("model_version")
        has_lp = _num(row.get("logprob")) is not None and isinstance(row.get("n_tokens"), int)
        with_lp += has_lp
        if not isinstance(version, str) or not version:
            missing += 1
            continue
        versions[version] = versions.get(version, 0) + 1
        if base_model is not None and version != base_model:
            stale += 1
            usable += has_lp
    warnings = []
    if missing:
        warnings.append(f"{missing} rows carry no model_version: their sampler is unknown")
    if stale - usable:
        warnings.append(f"{stale - usable} stale rows have no logprob: no importance ratio can "
                        "be formed; drop them or re-sample with the current policy")
    if base_model is None and len(versions) > 1:
        warnings.append(f"rows come from {len(versions)} policy versions; pass base_model=")
    return {
        "rows": len(items), "base_model": base_model, "versions": versions,
        "missing_version": missing, "stale": stale, "stale_usable": usable,
        "stale_unusable": stale - usable, "with_logprob": with_lp,
        "logprob_coverage": with_lp / len(items) if items else 0.0,
        "ok": missing == 0 and stale == usable, "warnings": warnings,
    }
