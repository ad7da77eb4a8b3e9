"""Small statistics used by grading reports: Wilson intervals, Cohen's kappa, bootstrap intervals,
paired and unpaired difference tests, and power sizing.

Resampling goes through the ``resample`` kernel (``whileai._backend``), so both backends give the
same interval for the same seed; the percentile rule is the one in docs/kernels.md.

>>> lo, hi = wilson_interval(8, 10)
>>> round(lo, 4), round(hi, 4)
(0.4902, 0.9433)
>>> cohen_kappa(20, 5, 10, 15)
0.4
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist
from typing import Any

from whileai import _backend

__all__ = [
    "DEFAULT_RESAMPLES",
    "bootstrap_ci",
    "cohen_kappa",
    "mean",
    "paired_difference",
    "pearson",
    "percentile",
    "sample_std",
    "unpaired_difference",
    "wilson_interval",
    "z_quantile",
]

DEFAULT_RESAMPLES = 2000
_TIE_EPS = 1e-12


def z_quantile(p: float) -> float:
    """Return the standard normal quantile at ``p`` (``z_quantile(0.975)`` is about 1.96).

    >>> round(z_quantile(0.975), 3)
    1.96
    """
    return NormalDist().inv_cdf(p)


def mean(values: Sequence[float]) -> float:
    """Mean summed left to right (the same order as the kernels).

    >>> mean([1.0, 2.0])
    1.5
    """
    if not values:
        raise ValueError("mean of an empty sequence")
    total = 0.0
    for v in values:
        total += v
    return total / len(values)


def sample_std(values: Sequence[float]) -> float:
    """Sample standard deviation (n - 1); 0.0 for fewer than two values.

    >>> sample_std([1.0, 3.0])
    1.4142135623730951
    """
    if len(values) < 2:
        return 0.0
    m = mean(values)
    return math.sqrt(sum((v - m) ** 2 for v in values) / (len(values) - 1))


def pearson(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Pearson correlation, or None when either side is constant or there are < 3 points.

    >>> pearson([1, 2, 3], [2, 4, 6])
    1.0
    """
    n = len(xs)
    if n < 3 or n != len(ys):
        return None
    mx, my = sum(xs) / n, sum(ys) / n
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    if sxx <= 0 or syy <= 0:
        return None
    return max(-1.0, min(1.0, sxy / math.sqrt(sxx * syy)))


def percentile(values: Sequence[float], q: float) -> float:
    """The documented percentile rule (linear interpolation, numpy's default).

    >>> percentile([1.0, 2.0, 3.0, 4.0], 0.5)
    2.5
    """
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"q must be in [0, 1], got {q}")
    xs = sorted(values)
    if not xs:
        raise ValueError("values is empty: no percentile to take")
    h = q * (len(xs) - 1)
    i = math.floor(h)
    if i >= len(xs) - 1:
        return float(xs[-1])
    return float(xs[i] + (h - i) * (xs[i + 1] - xs[i]))


def wilson_interval(successes: int, n: int, *, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion.

    Raises:
        ValueError: ``n`` is 0 or ``successes`` is outside [0, n].

    >>> wilson_interval(0, 5)[0]
    0.0
    """
    if n <= 0:
        raise ValueError("wilson_interval needs n >= 1 (no observations to bound)")
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be in [0, {n}], got {successes}")
    z = z_quantile(0.5 + level / 2)
    p = successes / n
    z2 = z * z
    denom = 1 + z2 / n
    center = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
    lo = 0.0 if successes == 0 else max(0.0, center - half)
    hi = 1.0 if successes == n else min(1.0, center + half)
    return lo, hi


def cohen_kappa(both_pass: int, judge_only: int, gold_only: int, both_fail: int) -> float | None:
    """Cohen's kappa for a 2x2 table (judge vs gold); ``None`` when chance agreement is 1.

    Args: counts of (judge pass, gold pass), (judge pass, gold fail), (judge fail, gold pass),
    (judge fail, gold fail).

    >>> cohen_kappa(5, 0, 0, 5)
    1.0
    """
    n = both_pass + judge_only + gold_only + both_fail
    if n == 0:
        return None
    observed = (both_pass + both_fail) / n
    judge_yes = (both_pass + judge_only) / n
    gold_yes = (both_pass + gold_only) / n
    chance = judge_yes * gold_yes + (1 - judge_yes) * (1 - gold_yes)
    if chance >= 1.0:
        return None
    return round((observed - chance) / (1 - chance), 12)


def bootstrap_ci(
    values: Sequence[float],
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[float, float] | None:
    """Percentile bootstrap interval on the mean of ``values``; ``None`` for fewer than 2 values.

    >>> bootstrap_ci([1.0, 1.0, 1.0])
    (1.0, 1.0)
    """
    if len(values) < 2 or n_resamples < 1:
        return None
    reps = _backend.bootstrap_means(list(values), n_resamples, seed)
    alpha = (1 - level) / 2
    return percentile(reps, alpha), percentile(reps, 1 - alpha)


def paired_difference(
    diffs: Sequence[float],
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    level: float = 0.95,
) -> dict[str, Any]:
    """Bootstrap interval on the mean paired difference plus a two-sided sign-flip p-value.

    >>> out = paired_difference([0.5] * 8, n_resamples=200)
    >>> out["delta"], out["ci95"], out["p_value"] < 0.05
    (0.5, (0.5, 0.5), True)
    """
    if not diffs:
        raise ValueError("paired_difference needs at least one paired difference")
    delta = mean(diffs)
    ci = bootstrap_ci(diffs, n_resamples=n_resamples, seed=seed, level=level)
    perms = _backend.sign_flip_means(list(diffs), n_resamples, seed + 1)
    observed = abs(delta)
    cut = observed - _TIE_EPS * max(1.0, observed)
    extreme = sum(1 for m in perms if abs(m) >= cut)
    p_value = (1 + extreme) / (1 + len(perms))
    return {"delta": delta, "ci95": ci, "p_value": p_value, "test": "paired sign-flip"}


def unpaired_difference(
    a: Sequence[float],
    b: Sequence[float],
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    level: float = 0.95,
) -> dict[str, Any]:
    """Unpaired comparison of ``mean(b) - mean(a)``: bootstrap interval and a Welch z p-value.

    >>> out = unpaired_difference([0.0, 0.0, 1.0], [1.0, 1.0, 0.0], n_resamples=100)
    >>> round(out["delta"], 3)
    0.333
    """
    if not a or not b:
        raise ValueError("unpaired_difference needs values on both sides")
    delta = mean(b) - mean(a)
    ci = None
    if len(a) >= 2 and len(b) >= 2 and n_resamples >= 1:
        reps = _backend.bootstrap_mean_diff(list(a), list(b), n_resamples, seed)
        alpha = (1 - level) / 2
        ci = (percentile(reps, alpha), percentile(reps, 1 - alpha))
    se = math.sqrt(sample_std(a) ** 2 / len(a) + sample_std(b) ** 2 / len(b))
    if se == 0.0:
        p_value = 1.0 if delta == 0.0 else 0.0
    else:
        p_value = 2 * (1 - NormalDist().cdf(abs(delta) / se))
    return {"delta": delta, "ci95": ci, "p_value": p_value, "test": "unpaired bootstrap + Welch z"}
