"""Bootstrap and sign-flip resampling: the reference kernel (docs/kernels.md, "Resampling").

Every replicate (or permutation) ``r`` draws from its own splitmix64 stream ``Stream(seed, r)``,
and every sum runs left to right in draw order, so a port that follows the same steps returns the
same floats bit for bit. Inputs and outputs are flat ``array('d')`` buffers and ints.

>>> from array import array
>>> means = bootstrap_means(array("d", [0.0, 1.0, 1.0, 0.0]), 3, 7)
>>> len(means), all(0.0 <= m <= 1.0 for m in means)
(3, True)
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence

from whileai._pure.rng import GOLDEN, MASK64, check_seed, mix64

__all__ = [
    "bootstrap_mean_diff",
    "bootstrap_means",
    "sign_flip_means",
]

_C1 = 0xBF58476D1CE4E5B9
_C2 = 0x94D049BB133111EB


def _check_count(n_resamples: object, what: str) -> int:
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int):
        raise TypeError(f"{what} must be an int, got {type(n_resamples).__name__}")
    if n_resamples < 0:
        raise ValueError(f"{what} must be at least 0, got {n_resamples}")
    return n_resamples


def _as_floats(values: Sequence[float], what: str) -> array[float]:
    out = array("d", values)
    for i, v in enumerate(out):
        if not math.isfinite(v):
            raise ValueError(f"{what}[{i}] is not finite ({v}); drop or fix it before resampling")
    return out


def _stream_state(seed: int, unit: int) -> int:
    return mix64((seed + mix64((unit + GOLDEN) & MASK64)) & MASK64)


def _resample_sum(values: array, n: int, state: int) -> tuple[float, int]:  # type: ignore[type-arg]
    """Sum ``n`` draws (with replacement) from ``values``; return (sum, new stream state).

    The RNG is Stream.next / Stream.below written inline (same arithmetic) for speed.
    """
    total = 0.0
    threshold = ((1 << 64) - n) % n
    for _ in range(n):
        state = (state + GOLDEN) & MASK64
        z = ((state ^ (state >> 30)) * _C1) & MASK64
        z = ((z ^ (z >> 27)) * _C2) & MASK64
        m = (z ^ (z >> 31)) * n
        if (m & MASK64) < threshold:  # Lemire rejection (only possible when low < n)
            while (m & MASK64) < threshold:
                state = (state + GOLDEN) & MASK64
                z = ((state ^ (state >> 30)) * _C1) & MASK64
                z = ((z ^ (z >> 27)) * _C2) & MASK64
                m = (z ^ (z >> 31)) * n
        total += values[m >> 64]
    return total, state


def bootstrap_means(values: Sequence[float], n_resamples: int, seed: int) -> array[float]:
    """Return ``n_resamples`` bootstrap means of ``values`` (one stream per replicate).

    Replicate ``r`` uses ``Stream(seed, r)``: ``len(values)`` draws of ``below(len(values))``,
    summed in draw order, then one division by ``len(values)``.

    Raises:
        ValueError: ``values`` is empty or holds a NaN/inf; ``n_resamples`` is negative.
        TypeError: ``seed`` or ``n_resamples`` is not an int.

    >>> list(bootstrap_means([2.0, 2.0], 2, 0))
    [2.0, 2.0]
    """
    seed = check_seed(seed)
    count = _check_count(n_resamples, "n_resamples")
    data = _as_floats(values, "values")
    n = len(data)
    if n == 0:
        raise ValueError("values is empty: a bootstrap needs at least one value")
    out = array("d", bytes(8 * count))
    for r in range(count):
        total, _ = _resample_sum(data, n, _stream_state(seed, r))
        out[r] = total / n
    return out


def bootstrap_mean_diff(
    a: Sequence[float], b: Sequence[float], n_resamples: int, seed: int
) -> array[float]:
    """Return ``n_resamples`` unpaired bootstrap values of ``mean(b*) - mean(a*)``.

    Replicate ``r`` uses one stream ``Stream(seed, r)``: first ``len(a)`` draws resample ``a``,
    then ``len(b)`` draws from the same stream resample ``b``.

    >>> list(bootstrap_mean_diff([0.0], [1.0], 2, 3))
    [1.0, 1.0]
    """
    seed = check_seed(seed)
    count = _check_count(n_resamples, "n_resamples")
    xa = _as_floats(a, "a")
    xb = _as_floats(b, "b")
    if not xa or not xb:
        raise ValueError("a and b must both be non-empty for an unpaired bootstrap")
    na, nb = len(xa), len(xb)
    out = array("d", bytes(8 * count))
    for r in range(count):
        sum_a, state = _resample_sum(xa, na, _stream_state(seed, r))
        sum_b, _ = _resample_sum(xb, nb, state)
        out[r] = sum_b / nb - sum_a / na
    return out


def sign_flip_means(diffs: Sequence[float], n_perm: int, seed: int) -> array[float]:
    """Return ``n_perm`` sign-flipped means of ``diffs`` (a paired permutation null).

    Permutation ``p`` uses ``Stream(seed, p)``: for each ``diffs[i]`` in order, one ``next()``;
    its top bit 1 flips the sign. Signed values are summed in order, then divided by ``len``.

    >>> [abs(m) for m in sign_flip_means([1.0, 1.0], 3, 0)] == [abs(m) for m in
    ...     sign_flip_means([1.0, 1.0], 3, 0)]
    True
    """
    seed = check_seed(seed)
    count = _check_count(n_perm, "n_perm")
    data = _as_floats(diffs, "diffs")
    n = len(data)
    if n == 0:
        raise ValueError("diffs is empty: a sign-flip test needs at least one paired difference")
    out = array("d", bytes(8 * count))
    for p in range(count):
        state = _stream_state(seed, p)
        total = 0.0
        for v in data:
            state = (state + GOLDEN) & MASK64
            z = ((state ^ (state >> 30)) * _C1) & MASK64
            z = ((z ^ (z >> 27)) * _C2) & MASK64
            z ^= z >> 31
            total += -v if (z >> 63) else v
        out[p] = total / n
    return out
