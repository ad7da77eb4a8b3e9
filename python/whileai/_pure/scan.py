"""The within-group correlation scan and its permutation noise floor (docs/kernels.md, "Scan").

Input is a sparse feature matrix in CSR form (one row per observation, one column per feature),
a group id per row (the ask) and a reward per row. Only *mixed* groups (two or more rows whose
rewards are not all equal) take part: a grouped update learns nothing from the others. Within
each mixed group the reward and every feature are centred on the group mean; a feature's
correlation is the Pearson correlation of the centred values over the mixed groups. The noise
floor shuffles the centred reward within each mixed group (Fisher-Yates, one splitmix64 stream
per permutation) and records the largest |rho| over all features for each permutation; with
``conjoin`` and ``top`` it also repeats the caller's conjunction search on every shuffle (the
ANDs of the ``top`` strongest candidate columns, two at a time), so a feature chosen *because*
it correlates is held to a floor that made the same choice.

Every sum runs in one documented order (groups ascending, rows ascending within a group), so a
port that follows the same order returns the same floats.

>>> from array import array
>>> indptr = array("q", [0, 1, 1, 1, 2])            # feature 0 on rows 0 and 3
>>> rho, floor, support = within_group_scan(
...     indptr, array("q", [0, 0]), array("d", [1.0, 1.0]), 1,
...     array("q", [0, 0, 1, 1]), array("d", [1.0, 0.0, 0.0, 1.0]), 2, 0)
>>> list(rho), len(floor), list(support)
([1.0], 2, [4])
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence
from itertools import pairwise

from whileai._pure.rng import Stream, check_count, check_seed

__all__ = ["within_group_scan", "within_group_scan_columns"]


def _check_inputs(
    indptr: Sequence[int],
    indices: Sequence[int],
    values: Sequence[float],
    n_features: int,
    groups: Sequence[int],
    reward: Sequence[float],
) -> None:
    if isinstance(n_features, bool) or not isinstance(n_features, int) or n_features < 0:
        raise ValueError(f"n_features must be an int >= 0, got {n_features!r}")
    n_rows = len(groups)
    if len(reward) != n_rows:
        raise ValueError(f"reward has {len(reward)} values but groups has {n_rows}")
    if len(indptr) != n_rows + 1 or (n_rows + 1 and indptr[0] != 0):
        raise ValueError(f"indptr must have {n_rows + 1} entries starting at 0, got {len(indptr)}")
    if len(indices) != len(values) or indptr[-1] != len(indices):
        raise ValueError(
            f"indices ({len(indices)}) and values ({len(values)}) must both have indptr[-1] "
            f"({indptr[-1]}) entries"
        )
    for i in range(n_rows):
        if indptr[i + 1] < indptr[i]:
            raise ValueError(f"indptr must not decrease (at row {i})")
        if groups[i] < 0:
            raise ValueError(f"groups[{i}] must be >= 0, got {groups[i]}")
        if not math.isfinite(reward[i]):
            raise ValueError(f"reward[{i}] must be finite, got {reward[i]}")
    for k, j in enumerate(indices):
        if not 0 <= j < n_features:
            raise ValueError(f"indices[{k}] = {j} is outside [0, {n_features})")


def _mean(values: Sequence[float]) -> float:
    total = 0.0
    for v in values:
        total += v
    return total / len(values)


def _check_conjoin(conjoin: Sequence[int], n_features: int) -> array[int]:
    columns = array("q", conjoin)  # the TypeError / OverflowError of the native reader
    seen: set[int] = set()
    for k, j in enumerate(columns):
        if not 0 <= j < n_features:
            raise ValueError(f"conjoin[{k}] = {j} is outside [0, {n_features})")
        if j in seen:
            raise ValueError(f"conjoin[{k}] = {j} repeats an earlier column")
        seen.add(j)
    return columns


def _search_args(
    n_perm: int, seed: int, conjoin: Sequence[int], top: int, n_features: int
) -> tuple[int, int, array[int], int]:
    """``n_perm``, ``seed``, ``conjoin`` and ``top`` checked in the native binding's order."""
    return (check_count(n_perm), check_seed(seed), _check_conjoin(conjoin, n_features),
            check_count(top, "top"))


def _contributions(
    col: dict[int, float], mixed: list[list[int]], group_of: list[int]
) -> tuple[list[int], list[float], float]:
    """Centre one column within every mixed group where it varies: (rows, values, var_x)."""
    rows_j: list[int] = []
    vals_j: list[float] = []
    # Only groups holding an entry can vary: elsewhere every value is 0.0.
    for g in sorted({group_of[i] for i in col}):
        rows = mixed[g]
        dense = [col.get(i, 0.0) for i in rows]
        first = dense[0]
        if all(v == first for v in dense):
            continue
        mean = _mean(dense)
        rows_j.extend(rows)
        vals_j.extend(v - mean for v in dense)
    var_x = 0.0
    for c in vals_j:
        var_x += c * c
    return rows_j, vals_j, var_x


def _abs_rho(rows: list[int], vals: list[float], denom: float, reward: list[float]) -> float:
    cov = 0.0
    for i, c in zip(rows, vals, strict=True):
        cov += c * reward[i]
    return abs(min(1.0, max(-1.0, cov / denom)))


def within_group_scan(
    indptr: Sequence[int],
    indices: Sequence[int],
    values: Sequence[float],
    n_features: int,
    groups: Sequence[int],
    reward: Sequence[float],
    n_perm: int = 0,
    seed: int = 0,
    conjoin: Sequence[int] = (),
    top: int = 0,
) -> tuple[array[float], array[float], array[int]]:
    """Return (rho per feature, max |rho| per permutation, rows per feature where it varies).

    Duplicate column indices within one row are added together. With ``conjoin`` (distinct
    column ids) and ``top >= 2``, each permutation also repeats the conjunction search on its
    shuffled reward: the ``top`` columns of ``conjoin`` with the largest non-zero |rho| are
    paired, and the AND of every pair (1.0 where both are non-zero) counts toward the maximum.
    """
    _check_inputs(indptr, indices, values, n_features, groups, reward)
    n_perm, seed, candidates, top = _search_args(n_perm, seed, conjoin, top, n_features)
    mixed, group_of, centred, var_r = _mixed(groups, reward)
    # Per feature and row, the summed value (only rows of mixed groups matter).
    cells: list[dict[int, float]] = [{} for _ in range(n_features)]
    for i in range(len(groups)):
        if group_of[i] >= 0:
            for k in range(indptr[i], indptr[i + 1]):
                col = cells[indices[k]]
                col[i] = col.get(i, 0.0) + float(values[k])
    return _scan(cells, mixed, group_of, centred, var_r, n_perm, seed, candidates, top)


def within_group_scan_columns(
    ptr: Sequence[int],
    rows: Sequence[int],
    vptr: Sequence[int],
    values: Sequence[float],
    groups: Sequence[int],
    reward: Sequence[float],
    n_perm: int = 0,
    seed: int = 0,
    conjoin: Sequence[int] = (),
    top: int = 0,
) -> tuple[array[float], array[float], array[int]]:
    """:func:`within_group_scan` of a column-major matrix (the same results for the same cells).

    Column ``j``'s rows are ``rows[ptr[j]:ptr[j + 1]]``, strictly ascending; its values are
    ``values[vptr[j]:vptr[j + 1]]``, one per row, or none: then every value is 1.0 (a binary
    column stores its rows only). ``n_features`` is ``len(ptr) - 1``.

    >>> rho, floor, support = within_group_scan_columns(
    ...     [0, 2], [0, 3], [0, 0], [], [0, 0, 1, 1], [1.0, 0.0, 0.0, 1.0], 2, 0)
    >>> list(rho), len(floor), list(support)
    ([1.0], 2, [4])
    """
    ptr_a = array("q", ptr)
    rows_a = rows if isinstance(rows, array) and rows.typecode in "iq" else array("q", rows)
    vptr_a, values_a = array("q", vptr), array("d", values)
    groups_a, reward_a = array("q", groups), array("d", reward)
    _check_columns(ptr_a, rows_a, vptr_a, values_a, groups_a, reward_a)
    n_features = len(ptr_a) - 1
    n_perm, seed, candidates, top = _search_args(n_perm, seed, conjoin, top, n_features)
    mixed, group_of, centred, var_r = _mixed(groups_a, reward_a)
    cells: list[dict[int, float]] = []
    for j in range(n_features):
        lo, hi, vlo = ptr_a[j], ptr_a[j + 1], vptr_a[j]
        if vptr_a[j + 1] == vlo:
            cells.append({i: 1.0 for i in rows_a[lo:hi] if group_of[i] >= 0})
        else:
            cells.append({
                i: 0.0 + values_a[vlo + k]
                for k, i in enumerate(rows_a[lo:hi]) if group_of[i] >= 0
            })
    return _scan(cells, mixed, group_of, centred, var_r, n_perm, seed, candidates, top)


def _check_columns(
    ptr: array[int], rows: array[int], vptr: array[int], values: array[float],
    groups: array[int], reward: array[float],
) -> None:
    n_rows = len(groups)
    if len(reward) != n_rows:
        raise ValueError(f"reward has {len(reward)} values but groups has {n_rows}")

    def partition(p: array[int], n: int) -> bool:
        return bool(p) and p[0] == 0 and p[-1] == n and all(a <= b for a, b in pairwise(p))

    if not partition(ptr, len(rows)):
        raise ValueError(f"ptr must run from 0 to len(rows) ({len(rows)}) without decreasing")
    if len(vptr) != len(ptr) or not partition(vptr, len(values)):
        raise ValueError(
            f"vptr must have {len(ptr)} entries running from 0 to len(values) ({len(values)}) "
            "without decreasing"
        )
    for j in range(len(ptr) - 1):
        lo, hi = ptr[j], ptr[j + 1]
        n_values = vptr[j + 1] - vptr[j]
        if n_values and n_values != hi - lo:
            raise ValueError(
                f"column {j} has {hi - lo} rows but {n_values} values (give one per row, or "
                "none for 1.0)"
            )
        last = -1
        for k in range(lo, hi):
            r = rows[k]
            if not 0 <= r < n_rows:
                raise ValueError(f"rows[{k}] = {r} is outside [0, {n_rows})")
            if r <= last:
                raise ValueError(f"rows[{k}] = {r} does not ascend within column {j}")
            last = r
    for i in range(n_rows):
        if groups[i] < 0:
            raise ValueError(f"groups[{i}] must be >= 0, got {groups[i]}")
        if not math.isfinite(reward[i]):
            raise ValueError(f"reward[{i}] must be finite, got {reward[i]}")


def _mixed(
    groups: Sequence[int], reward: Sequence[float]
) -> tuple[list[list[int]], list[int], list[float], float]:
    """Mixed groups (ascending id, rows ascending), each row's position, centred reward, var_r."""
    n_rows = len(groups)
    n_groups = max(groups) + 1 if n_rows else 0
    members: list[list[int]] = [[] for _ in range(n_groups)]
    for i in range(n_rows):
        members[groups[i]].append(i)
    centred = [0.0] * n_rows
    mixed: list[list[int]] = []
    for rows in members:
        if len(rows) < 2:
            continue
        first = reward[rows[0]]
        if all(reward[i] == first for i in rows):
            continue
        mean = _mean([reward[i] for i in rows])
        for i in rows:
            centred[i] = reward[i] - mean
        mixed.append(rows)
    var_r = 0.0
    for rows in mixed:
        for i in rows:
            var_r += centred[i] * centred[i]
    group_of = [-1] * n_rows
    for g, rows in enumerate(mixed):
        for i in rows:
            group_of[i] = g
    return mixed, group_of, centred, var_r


def _scan(
    cells: list[dict[int, float]],
    mixed: list[list[int]],
    group_of: list[int],
    centred: list[float],
    var_r: float,
    n_perm: int,
    seed: int,
    candidates: array[int],
    top: int,
) -> tuple[array[float], array[float], array[int]]:
    """The scan of per-feature ``{row: value}`` cells (rows of mixed groups, ascending)."""
    n_features = len(cells)
    # Centred contributions per feature: (row ids, centred values) over groups where it varies.
    contrib: list[tuple[list[int], list[float]]] = []
    denominators: list[float] = []
    rho = array("d", [0.0] * n_features)
    support = array("q", [0] * n_features)
    for j in range(n_features):
        rows_j, vals_j, var_x = _contributions(cells[j], mixed, group_of)
        cov = 0.0
        for i, c in zip(rows_j, vals_j, strict=True):
            cov += c * centred[i]
        denom = math.sqrt(var_x * var_r) if var_x > 0.0 and var_r > 0.0 else 0.0
        if denom > 0.0:
            rho[j] = min(1.0, max(-1.0, cov / denom))
        support[j] = len(rows_j)
        contrib.append((rows_j, vals_j))
        denominators.append(denom)

    active = [j for j in range(n_features) if denominators[j] > 0.0]
    is_candidate = [False] * n_features
    for j in candidates:
        is_candidate[j] = top >= 2
    # A pair's AND column does not depend on the permutation: centre it once.
    pairs: dict[tuple[int, int], tuple[list[int], list[float], float]] = {}

    def pair(a: int, b: int) -> tuple[list[int], list[float], float]:
        key = (a, b) if a < b else (b, a)
        if key not in pairs:
            other = cells[key[1]]
            both = {
                i: 1.0
                for i, v in cells[key[0]].items()
                if v != 0.0 and other.get(i, 0.0) != 0.0
            }
            rows_ab, vals_ab, var_x = _contributions(both, mixed, group_of)
            denom = math.sqrt(var_x * var_r) if var_x > 0.0 and var_r > 0.0 else 0.0
            pairs[key] = (rows_ab, vals_ab, denom)
        return pairs[key]

    floor = array("d", [0.0] * n_perm)
    for p in range(n_perm):
        stream = Stream(seed, p)
        shuffled = list(centred)
        for rows in mixed:
            for k in range(len(rows) - 1, 0, -1):
                m = stream.below(k + 1)
                a, b = rows[k], rows[m]
                shuffled[a], shuffled[b] = shuffled[b], shuffled[a]
        best = 0.0
        strong: list[tuple[float, int]] = []
        for j in active:
            value = _abs_rho(*contrib[j], denominators[j], shuffled)
            if value > best:
                best = value
            if is_candidate[j] and value > 0.0:
                strong.append((-value, j))
        strong.sort()
        chosen = [j for _, j in strong[:top]]
        for x, a in enumerate(chosen):
            for b in chosen[x + 1 :]:
                rows_ab, vals_ab, denom = pair(a, b)
                if denom > 0.0:
                    value = _abs_rho(rows_ab, vals_ab, denom, shuffled)
                    if value > best:
                        best = value
        floor[p] = best
    return rho, floor, support
