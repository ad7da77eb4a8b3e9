"""The scan from per-block partial sums: how a cluster scans where the rows live.

``within_group_scan_partials`` (docs/kernels.md, "Scan") gives each block of asks' sums; added
here in block order they are the sums ``within_group_scan_columns`` makes in one process, so
:func:`scan_from_partials` returns its ``(rho, floor, support)`` exactly, whichever workers
summed which blocks. The conjunction floor needs each permutation's strongest candidates from
the totals, so it is a second step: the AND columns of the chosen pairs, summed the same way.

>>> from whileai import _backend
>>> args = ([0, 2], [0, 3], [0, 0], [], [0, 0, 1, 1], [1.0, 0.0, 0.0, 1.0])
>>> part = _backend.within_group_scan_partials(*args, 2, 0)
>>> rho, floor, support = scan_from_partials([part], 1, 2)
>>> (rho, floor, support) == _backend.within_group_scan_columns(*args, 2, 0)
True
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

__all__ = ["Totals", "add_partials", "and_columns", "scan_from_partials"]

# (blocks, var_r, support, var_x, cov, perm_cov) of ``within_group_scan_partials``.
Partials = tuple[Any, Any, Any, Any, Any, Any]


@dataclass
class Totals:
    """Block partials added in block order: the scan's sums over every ask."""

    var_r: float
    support: array[int]
    var_x: array[float]
    cov: array[float]
    perm_cov: list[float]  # feature j, permutation p at j * n_perm + p


def add_partials(parts: Sequence[Partials], n_features: int, n_perm: int) -> Totals:
    """Add the partials of distinct blocks in block order, each sum from 0.0.

    Raises:
        ValueError: a block is given twice.
    """
    order = sorted((int(b), i, k) for i, part in enumerate(parts) for k, b in enumerate(part[0]))
    for (b, _, _), (c, _, _) in pairwise(order):
        if b == c:
            raise ValueError(f"block {b} is given twice")
    var_r = 0.0
    support = array("q", [0] * n_features)
    var_x = array("d", [0.0] * n_features)
    cov = array("d", [0.0] * n_features)
    perm_cov = [0.0] * (n_features * n_perm)
    width = n_features * n_perm
    for _, i, k in order:
        _, part_r, part_support, part_x, part_cov, part_perm = parts[i]
        var_r += part_r[k]
        lo = k * n_features
        for j in range(n_features):
            support[j] += part_support[lo + j]
            var_x[j] += part_x[lo + j]
            cov[j] += part_cov[lo + j]
        block = part_perm[k * width : (k + 1) * width]
        perm_cov = [a + c for a, c in zip(perm_cov, block, strict=True)]
    return Totals(var_r, support, var_x, cov, perm_cov)


def _clamp(x: float) -> float:
    return min(1.0, max(-1.0, x))


def _denominators(totals: Totals) -> list[float]:
    var_r = totals.var_r
    return [
        math.sqrt(v * var_r) if v > 0.0 and var_r > 0.0 else 0.0 for v in totals.var_x
    ]


def scan_from_partials(
    parts: Sequence[Partials],
    n_features: int,
    n_perm: int,
    conjoin: Sequence[int] = (),
    top: int = 0,
    and_partials: Callable[[list[tuple[int, int]]], Sequence[Partials]] | None = None,
) -> tuple[array[float], array[float], array[int]]:
    """``within_group_scan_columns``'s ``(rho, floor, support)`` from every block's partials.

    With ``conjoin`` and ``top >= 2``, ``and_partials(pairs)`` must return the partials of the
    AND columns of ``pairs`` (column ``k`` for ``pairs[k]``, as :func:`and_columns` makes them)
    over every block, made with the same ``n_perm`` and seed.
    """
    totals = add_partials(parts, n_features, n_perm)
    denoms = _denominators(totals)
    rho = array("d", [0.0] * n_features)
    for j, denom in enumerate(denoms):
        if denom > 0.0:
            rho[j] = _clamp(totals.cov[j] / denom)
    active = [j for j in range(n_features) if denoms[j] > 0.0]
    searched = set(conjoin) if top >= 2 else set()
    floor = array("d", [0.0] * n_perm)
    chosen: list[list[tuple[int, int]]] = []
    for p in range(n_perm):
        best = 0.0
        strong: list[tuple[float, int]] = []
        for j in active:
            value = abs(_clamp(totals.perm_cov[j * n_perm + p] / denoms[j]))
            best = max(best, value)
            if j in searched and value > 0.0:
                strong.append((-value, j))
        floor[p] = best
        strong.sort()
        picked = [j for _, j in strong[:top]]
        chosen.append([
            (min(a, b), max(a, b)) for x, a in enumerate(picked) for b in picked[x + 1 :]
        ])
    pairs = sorted({pair for per_perm in chosen for pair in per_perm})
    if pairs:
        if and_partials is None:
            raise ValueError("the conjunction search needs and_partials")
        both = add_partials(and_partials(pairs), len(pairs), n_perm)
        index = {pair: k for k, pair in enumerate(pairs)}
        pair_denoms = _denominators(both)
        for p, per_perm in enumerate(chosen):
            for pair in per_perm:
                k = index[pair]
                if pair_denoms[k] > 0.0:
                    value = abs(_clamp(both.perm_cov[k * n_perm + p] / pair_denoms[k]))
                    floor[p] = max(floor[p], value)
    return rho, floor, totals.support


def and_columns(
    ptr: Sequence[int],
    rows: Sequence[int],
    vptr: Sequence[int],
    values: Sequence[float],
    pairs: Sequence[tuple[int, int]],
) -> tuple[array[int], array[int], array[int], array[float]]:
    """The AND column of each pair (1.0 where both columns are non-zero) as binary columns:
    ``(ptr, rows, vptr, values)`` for ``within_group_scan_partials``."""

    def nonzero(j: int) -> set[int]:
        lo, hi, vlo = ptr[j], ptr[j + 1], vptr[j]
        if vptr[j + 1] == vlo:
            return set(rows[lo:hi])
        return {r for k, r in enumerate(rows[lo:hi]) if values[vlo + k] != 0.0}

    out_ptr, out_rows = array("q", [0]), array("q")
    for a, b in pairs:
        out_rows.extend(sorted(nonzero(a) & nonzero(b)))
        out_ptr.append(len(out_rows))
    return out_ptr, out_rows, array("q", [0] * len(out_ptr)), array("d")
