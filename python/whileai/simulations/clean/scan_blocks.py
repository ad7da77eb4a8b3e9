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
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
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


def add_partials(parts: Iterable[Partials], n_features: int, n_perm: int,
                 expected: Sequence[int] = ()) -> Totals:
    """Add the partials of distinct blocks in block order, each sum from 0.0.

    ``parts`` are added as they come: a block is added as soon as every block of ``expected``
    (the blocks that may come, ascending) before it has been, so a caller iterating results
    that arrive in block order holds one block's partials at a time; blocks held back are added
    in order at the end. With no ``expected``, every part is held until the end.

    Raises:
        ValueError: a block is given twice, or a block ``expected`` does not list.

    >>> from whileai import _backend
    >>> part = _backend.within_group_scan_partials([0, 1], [0], [0, 0], [], [0, 0], [1.0, 0.0])
    >>> add_partials([part], 1, 0, expected=[0]).var_r
    0.5
    """
    totals = Totals(0.0, array("q", [0] * n_features), array("d", [0.0] * n_features),
                    array("d", [0.0] * n_features), [0.0] * (n_features * n_perm))
    allowed = set(expected)
    upcoming = iter(sorted(allowed))
    due = next(upcoming, None)
    seen: set[int] = set()
    waiting: dict[int, tuple[Partials, int]] = {}
    for part in parts:
        for k, b in enumerate(part[0]):
            block = int(b)
            if block in seen:
                raise ValueError(f"block {block} is given twice")
            if allowed and block not in allowed:
                raise ValueError(f"block {block} is not one of the expected blocks")
            seen.add(block)
            waiting[block] = (part, k)
        while due is not None and due in waiting:
            _add_block(totals, *waiting.pop(due), n_features, n_perm)
            due = next(upcoming, None)
    for block in sorted(waiting):  # with ``expected``: blocks after one that never came
        _add_block(totals, *waiting[block], n_features, n_perm)
    return totals


def _add_block(totals: Totals, part: Partials, k: int, n_features: int, n_perm: int) -> None:
    """Add block ``k`` of ``part`` (``within_group_scan_partials``'s k-th block) to ``totals``."""
    _, part_r, part_support, part_x, part_cov, part_perm = part
    totals.var_r += part_r[k]
    lo = k * n_features
    for j in range(n_features):
        totals.support[j] += part_support[lo + j]
        totals.var_x[j] += part_x[lo + j]
        totals.cov[j] += part_cov[lo + j]
    width = n_features * n_perm
    block = part_perm[k * width : (k + 1) * width]
    totals.perm_cov = [a + c for a, c in zip(totals.perm_cov, block, strict=True)]


def _clamp(x: float) -> float:
    return min(1.0, max(-1.0, x))


def _denominators(totals: Totals) -> list[float]:
    var_r = totals.var_r
    return [
        math.sqrt(v * var_r) if v > 0.0 and var_r > 0.0 else 0.0 for v in totals.var_x
    ]


def scan_from_partials(
    parts: Iterable[Partials],
    n_features: int,
    n_perm: int,
    conjoin: Sequence[int] = (),
    top: int = 0,
    and_partials: Callable[[list[tuple[int, int]]], Iterable[Partials]] | None = None,
    expected: Sequence[int] = (),
) -> tuple[array[float], array[float], array[int]]:
    """``within_group_scan_columns``'s ``(rho, floor, support)`` from every block's partials.

    With ``conjoin`` and ``top >= 2``, ``and_partials(pairs)`` must return the partials of the
    AND columns of ``pairs`` (column ``k`` for ``pairs[k]``, as :func:`and_columns` makes them)
    over every block, made with the same ``n_perm`` and seed. ``parts`` may be an iterator;
    with ``expected`` (the blocks that may come) it is added as it comes (:func:`add_partials`).
    """
    totals = add_partials(parts, n_features, n_perm, expected)
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
        both = add_partials(and_partials(pairs), len(pairs), n_perm, expected)
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
