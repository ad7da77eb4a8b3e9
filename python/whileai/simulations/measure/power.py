"""How many held-out tasks a before/after needs, and what effect a given holdout can see.

Two-sided test of two proportions at level ``alpha`` with power ``power`` (normal approximation,
no continuity correction): ``n = (z_a * sqrt(2 p q) + z_b * sqrt(p1 q1 + p2 q2))^2 / d^2`` per run,
where ``p1 = baseline``, ``p2 = baseline + effect``, ``p`` their mean. Paired designs (the same
tasks before and after) need fewer; this is the conservative size.

>>> holdout_size(0.1, baseline=0.5)
388
>>> round(detectable_effect(388, baseline=0.5), 3)
0.1
"""

from __future__ import annotations

import math

from whileai.errors import ConfigError
from whileai.rows.keywords import valid_kwargs
from whileai.simulations.measure.stats import z_quantile

__all__ = ["detectable_effect", "holdout_size"]


def _check(baseline: float, alpha: float, power: float) -> None:
    if not 0.0 < baseline < 1.0:
        raise ConfigError(f"baseline must be a pass rate in (0, 1), got {baseline!r}")
    if not 0.0 < alpha < 1.0:
        raise ConfigError(f"alpha must be in (0, 1), got {alpha!r}")
    if not 0.0 < power < 1.0:
        raise ConfigError(f"power must be in (0, 1), got {power!r}")


def _n_float(effect: float, baseline: float, alpha: float, power: float) -> float:
    p1, p2 = baseline, baseline + effect
    pbar = (p1 + p2) / 2
    z_a, z_b = z_quantile(1 - alpha / 2), z_quantile(power)
    top = z_a * math.sqrt(2 * pbar * (1 - pbar)) + z_b * math.sqrt(p1 * (1 - p1) + p2 * (1 - p2))
    return top * top / (effect * effect)


@valid_kwargs
def holdout_size(
    effect: float, *, baseline: float = 0.5, alpha: float = 0.05, power: float = 0.8
) -> int:
    """Tasks per run needed to detect a pass-rate change of ``effect`` from ``baseline``.

    Raises:
        ConfigError: ``effect`` is not in (0, 1 - baseline], or a level is outside (0, 1).

    >>> holdout_size(0.2, baseline=0.3)
    93
    """
    _check(baseline, alpha, power)
    if not 0.0 < effect <= 1.0 - baseline:
        raise ConfigError(
            f"effect must be in (0, {1 - baseline:g}] for baseline {baseline:g}, got {effect!r}"
        )
    return math.ceil(_n_float(effect, baseline, alpha, power) - 1e-9)


@valid_kwargs
def detectable_effect(
    n: int, *, baseline: float = 0.5, alpha: float = 0.05, power: float = 0.8
) -> float:
    """The smallest pass-rate increase over ``baseline`` that ``n`` tasks per run can detect.

    Returns ``1 - baseline`` (capped) when even the largest change needs more than ``n`` tasks.

    >>> detectable_effect(100) > detectable_effect(400)
    True
    """
    _check(baseline, alpha, power)
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ConfigError(f"n must be an int >= 1 (tasks per run), got {n!r}")
    lo, hi = 1e-6, 1.0 - baseline
    if _n_float(hi, baseline, alpha, power) > n:
        return hi
    for _ in range(100):
        mid = (lo + hi) / 2
        if _n_float(mid, baseline, alpha, power) > n:
            lo = mid
        else:
            hi = mid
    return hi
