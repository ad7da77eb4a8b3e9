"""The within-group correlation scan and its permutation noise floor (docs/kernels.md, "Scan").

Input is a sparse feature matrix in CSR form (one row per observation, one column per feature),
a group id per row (the ask) and a reward per row. Only *mixed* groups (two or more rows whose
rewards are not all equal) take part: a grouped update learns nothing from the others. Within
each mixed group the reward and every feature are centred on the group mean; a feature's
correlation is the Pearson correlation of the centred values over the mixed groups. The noise
floor shuffles the centred reward within each mixed group (Fisher-Yates, one splitmix64 stream
per permutation and ask) and records the largest |rho| over all features for each permutation; with
``conjoin`` and ``top`` it also repeats the caller's conjunction search on every shuffle (the
ANDs of the ``top`` strongest candidate columns, two at a time), so a feature chosen *because*
it correlates is held to a floor that made the same choice.

Every sum across asks runs in one documented order: within each block of ``BLOCK`` ask ids
(groups ascending, rows ascending within a group) from 0.0, then the block partials in block
order, so a port that follows the same order returns the same floats, and so does a cluster that
sums each block where its rows live (:func:`within_group_scan_partials`).

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

from whileai._pure.rng import Stream, check_count, check_seed
from whileai._pure.scan_checks import check_inputs, column_arrays, search_args

__all__ = [
    "BLOCK", "ask_stream", "within_group_scan", "within_group_scan_columns",
    "within_group_scan_partials",
]

BLOCK = 1024
"""Asks per block: ask ``g`` is in block ``g // BLOCK``; sums across asks run block by block."""

# A feature's contributions, one segment per block it touches (blocks ascending): (block, rows
# of its varying groups end to end, their centred values).
Segments = list[tuple[int, list[int], list[float]]]


def ask_stream(seed: int, perm: int, ask: int) -> Stream:
    """The stream that shuffles ask ``ask`` under permutation ``perm``: ``stream(state of
    stream(seed, perm), ask)`` (docs/kernels.md, "Scan")."""
    return Stream(Stream(seed, perm).state, ask)


def _mean(values: Sequence[float]) -> float:
    total = 0.0
    for v in values:
        total += v
    return total / len(values)


def _contributions(
    col: dict[int, float], mixed: list[list[int]], blocks: list[int], group_of: list[int]
) -> tuple[Segments, float]:
    """Centre one column within every mixed group where it varies: (segments, var_x)."""
    segments: Segments = []
    # Only groups holding an entry can vary: elsewhere every value is 0.0.
    for g in sorted({group_of[i] for i in col}):
        rows = mixed[g]
        dense = [col.get(i, 0.0) for i in rows]
        first = dense[0]
        if all(v == first for v in dense):
            continue
        mean = _mean(dense)
        if not segments or segments[-1][0] != blocks[g]:
            segments.append((blocks[g], [], []))
        segments[-1][1].extend(rows)
        segments[-1][2].extend(v - mean for v in dense)
    return segments, _blocked(_parts(segments, None))


def _parts(segments: Segments, other: Sequence[float] | None) -> list[float]:
    """Each segment's sequential sum of ``c * other[row]`` (``c * c`` without ``other``)."""
    out = []
    for _, rows, vals in segments:
        part = 0.0
        if other is None:
            for c in vals:
                part += c * c
        else:
            for i, c in zip(rows, vals, strict=True):
                part += c * other[i]
        out.append(part)
    return out


def _blocked(parts: list[float]) -> float:
    """Block partials added in block order, from 0.0."""
    total = 0.0
    for part in parts:
        total += part
    return total


def _abs_rho(segments: Segments, denom: float, reward: list[float]) -> float:
    cov = _blocked(_parts(segments, reward))
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
    check_inputs(indptr, indices, values, n_features, groups, reward)
    n_perm, seed, candidates, top = search_args(n_perm, seed, conjoin, top, n_features)
    mixed = _Mixed(groups, reward)
    # Per feature and row, the summed value (only rows of mixed groups matter).
    cells: list[dict[int, float]] = [{} for _ in range(n_features)]
    for i in range(len(groups)):
        if mixed.group_of[i] >= 0:
            for k in range(indptr[i], indptr[i + 1]):
                col = cells[indices[k]]
                col[i] = col.get(i, 0.0) + float(values[k])
    return _scan(cells, mixed, n_perm, seed, candidates, top)


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
    ptr_a, rows_a, vptr_a, values_a, groups_a, reward_a = column_arrays(
        ptr, rows, vptr, values, groups, reward)
    n_features = len(ptr_a) - 1
    n_perm, seed, candidates, top = search_args(n_perm, seed, conjoin, top, n_features)
    mixed = _Mixed(groups_a, reward_a)
    cells = _column_cells(ptr_a, rows_a, vptr_a, values_a, mixed.group_of)
    return _scan(cells, mixed, n_perm, seed, candidates, top)


class _Mixed:
    """The mixed groups (ascending ask id, rows ascending), each one's ask id and block, each
    row's mixed-group position (-1 outside them), the centred reward and its per-block sums of
    squares (``blocks_r``, ``parts_r``) and total ``var_r``."""

    def __init__(self, groups: Sequence[int], reward: Sequence[float]) -> None:
        n_rows = len(groups)
        members: dict[int, list[int]] = {}
        for i in range(n_rows):
            members.setdefault(groups[i], []).append(i)
        self.centred = [0.0] * n_rows
        self.mixed: list[list[int]] = []
        self.asks: list[int] = []
        for ask in sorted(members):
            rows = members[ask]
            if len(rows) < 2:
                continue
            first = reward[rows[0]]
            if all(reward[i] == first for i in rows):
                continue
            mean = _mean([reward[i] for i in rows])
            for i in rows:
                self.centred[i] = reward[i] - mean
            self.mixed.append(rows)
            self.asks.append(ask)
        self.blocks = [ask // BLOCK for ask in self.asks]
        self.group_of = [-1] * n_rows
        segments: Segments = []
        for g, rows in enumerate(self.mixed):
            for i in rows:
                self.group_of[i] = g
            if not segments or segments[-1][0] != self.blocks[g]:
                segments.append((self.blocks[g], [], []))
            segments[-1][1].extend(rows)
            segments[-1][2].extend(self.centred[i] for i in rows)
        self.blocks_r = [b for b, _, _ in segments]
        self.parts_r = _parts(segments, None)
        self.var_r = _blocked(self.parts_r)

    def shuffled(self, seed: int, perm: int) -> list[float]:
        """The centred reward shuffled within each mixed group by permutation ``perm``."""
        base = Stream(seed, perm).state
        out = list(self.centred)
        for rows, ask in zip(self.mixed, self.asks, strict=True):
            stream = Stream(base, ask)
            for k in range(len(rows) - 1, 0, -1):
                m = stream.below(k + 1)
                a, b = rows[k], rows[m]
                out[a], out[b] = out[b], out[a]
        return out

    def contributions(self, col: dict[int, float]) -> tuple[Segments, float]:
        return _contributions(col, self.mixed, self.blocks, self.group_of)

    def denominator(self, var_x: float) -> float:
        return math.sqrt(var_x * self.var_r) if var_x > 0.0 and self.var_r > 0.0 else 0.0


def _column_cells(
    ptr: Sequence[int], rows: Sequence[int], vptr: Sequence[int], values: Sequence[float],
    group_of: list[int],
) -> list[dict[int, float]]:
    """Each column's ``{row: 0.0 + value}`` on rows of mixed groups."""
    cells: list[dict[int, float]] = []
    for j in range(len(ptr) - 1):
        lo, hi, vlo = ptr[j], ptr[j + 1], vptr[j]
        if vptr[j + 1] == vlo:
            cells.append({i: 1.0 for i in rows[lo:hi] if group_of[i] >= 0})
        else:
            cells.append({
                i: 0.0 + values[vlo + k] for k, i in enumerate(rows[lo:hi]) if group_of[i] >= 0
            })
    return cells


def _scan(
    cells: list[dict[int, float]],
    groups: _Mixed,
    n_perm: int,
    seed: int,
    candidates: array[int],
    top: int,
) -> tuple[array[float], array[float], array[int]]:
    """The scan of per-feature ``{row: value}`` cells (rows of mixed groups, ascending)."""
    n_features = len(cells)
    contrib: list[Segments] = []
    denominators: list[float] = []
    rho = array("d", [0.0] * n_features)
    support = array("q", [0] * n_features)
    for j in range(n_features):
        segments, var_x = groups.contributions(cells[j])
        denom = groups.denominator(var_x)
        if denom > 0.0:
            cov = _blocked(_parts(segments, groups.centred))
            rho[j] = min(1.0, max(-1.0, cov / denom))
        support[j] = sum(len(vals) for _, _, vals in segments)
        contrib.append(segments)
        denominators.append(denom)

    active = [j for j in range(n_features) if denominators[j] > 0.0]
    is_candidate = [False] * n_features
    for j in candidates:
        is_candidate[j] = top >= 2
    # A pair's AND column does not depend on the permutation: centre it once.
    pairs: dict[tuple[int, int], tuple[Segments, float]] = {}

    def pair(a: int, b: int) -> tuple[Segments, float]:
        key = (a, b) if a < b else (b, a)
        if key not in pairs:
            other = cells[key[1]]
            both = {
                i: 1.0
                for i, v in cells[key[0]].items()
                if v != 0.0 and other.get(i, 0.0) != 0.0
            }
            segments, var_x = groups.contributions(both)
            pairs[key] = (segments, groups.denominator(var_x))
        return pairs[key]

    floor = array("d", [0.0] * n_perm)
    for p in range(n_perm):
        shuffled = groups.shuffled(seed, p)
        best = 0.0
        strong: list[tuple[float, int]] = []
        for j in active:
            value = _abs_rho(contrib[j], denominators[j], shuffled)
            if value > best:
                best = value
            if is_candidate[j] and value > 0.0:
                strong.append((-value, j))
        strong.sort()
        chosen = [j for _, j in strong[:top]]
        for x, a in enumerate(chosen):
            for b in chosen[x + 1 :]:
                segments, denom = pair(a, b)
                if denom > 0.0:
                    value = _abs_rho(segments, denom, shuffled)
                    if value > best:
                        best = value
        floor[p] = best
    return rho, floor, support


def within_group_scan_partials(
    ptr: Sequence[int],
    rows: Sequence[int],
    vptr: Sequence[int],
    values: Sequence[float],
    groups: Sequence[int],
    reward: Sequence[float],
    n_perm: int = 0,
    seed: int = 0,
) -> tuple[array[int], array[float], array[int], array[float], array[float], array[float]]:
    """Each block's partial sums of the scan of a column-major matrix (docs/kernels.md, "Scan").

    The input is :func:`within_group_scan_columns`'s; its rows should hold whole blocks (every
    row of every ask ``g`` with ``g // BLOCK`` among them, in the caller's order) for the sums to
    be the blocks' own. Returns ``(blocks, var_r, support, var_x, cov, perm_cov)``: the blocks
    holding a row, ascending; per block its reward sum of squares; per block and feature
    (``b * n_features + j``) the rows where the feature varies, its sum of squares and its
    covariance with the centred reward; per block, feature and permutation (``(b * n_features +
    j) * n_perm + p``) its covariance with permutation ``p``'s shuffled reward.

    >>> blocks, var_r, support, var_x, cov, perm_cov = within_group_scan_partials(
    ...     [0, 2], [0, 3], [0, 0], [], [0, 0, 1, 1], [1.0, 0.0, 0.0, 1.0], 2, 0)
    >>> list(blocks), list(var_r), list(support), list(var_x), list(cov), len(perm_cov)
    ([0], [1.0], [4], [1.0], [1.0], 2)
    """
    ptr_a, rows_a, vptr_a, values_a, groups_a, reward_a = column_arrays(
        ptr, rows, vptr, values, groups, reward)
    n_perm, seed = check_count(n_perm), check_seed(seed)
    n_features = len(ptr_a) - 1
    mixed = _Mixed(groups_a, reward_a)
    cells = _column_cells(ptr_a, rows_a, vptr_a, values_a, mixed.group_of)
    blocks = array("q", sorted({g // BLOCK for g in groups_a}))
    at = {b: k for k, b in enumerate(blocks)}
    n_blocks = len(blocks)
    var_r = array("d", [0.0] * n_blocks)
    for b, part in zip(mixed.blocks_r, mixed.parts_r, strict=True):
        var_r[at[b]] = part
    support = array("q", [0] * (n_blocks * n_features))
    var_x = array("d", [0.0] * (n_blocks * n_features))
    cov = array("d", [0.0] * (n_blocks * n_features))
    perm_cov = array("d", [0.0] * (n_blocks * n_features * n_perm))
    contrib = [mixed.contributions(cells[j])[0] for j in range(n_features)]
    for j, segments in enumerate(contrib):
        squares, covs = _parts(segments, None), _parts(segments, mixed.centred)
        for (b, _, vals), sq, c in zip(segments, squares, covs, strict=True):
            k = at[b] * n_features + j
            support[k], var_x[k], cov[k] = len(vals), sq, c
    for p in range(n_perm):
        shuffled = mixed.shuffled(seed, p)
        for j, segments in enumerate(contrib):
            for (b, _, _), c in zip(segments, _parts(segments, shuffled), strict=True):
                perm_cov[(at[b] * n_features + j) * n_perm + p] = c
    return blocks, var_r, support, var_x, cov, perm_cov
