"""Turn rows into the flat inputs of the scan kernel: groups, rewards and a CSR feature matrix.

Identical feature columns are merged into one (the others are kept as ``aliases``), so two
names for the same behaviour never tie against each other; the representative is an endorsed
name if any, else the longest (most specific), then the alphabetically first.

>>> m = build_matrix([{"a": 1.0}, {"a": 1.0, "b": 2.0}], [0, 0], [1.0, 0.0], tiers={})
>>> m.names, list(m.indptr), m.n_features
(('a', 'b'), [0, 1, 3], 2)
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any

from whileai import _backend

__all__ = [
    "CONJ_TOP",
    "FeatureMatrix",
    "add_columns",
    "build_matrix",
    "conjunctions",
    "run_scan",
]

CONJ_TOP = 12  # the conjunction search pairs this many of the strongest binary features


@dataclass(frozen=True, slots=True, kw_only=True)
class FeatureMatrix:
    """The kernel's inputs, with a name, tier and aliases per column."""

    names: tuple[str, ...]
    tiers: tuple[str, ...]
    aliases: tuple[tuple[str, ...], ...]
    indptr: array[int]
    indices: array[int]
    values: array[float]
    groups: array[int]
    reward: array[float]
    # Each column's cells ``((row, value), ...)`` -> its index, so added columns merge the same way.
    content: dict[tuple[tuple[int, float], ...], int] = field(
        default_factory=dict, repr=False, compare=False
    )

    @property
    def n_features(self) -> int:
        """Number of (merged) feature columns."""
        return len(self.names)


def build_matrix(
    feats: Sequence[Mapping[str, float]],
    groups: Sequence[int],
    reward: Sequence[float],
    *,
    tiers: Mapping[str, str],
    endorsed: Callable[[str], bool] = lambda name: False,
) -> FeatureMatrix:
    """Return the merged CSR matrix of per-row ``{name: value}`` features."""
    columns: dict[str, list[tuple[int, float]]] = {}
    for i, row in enumerate(feats):
        for name, value in row.items():
            if value != 0.0:
                columns.setdefault(name, []).append((i, value))
    by_content: dict[tuple[tuple[int, float], ...], list[str]] = {}
    for name in sorted(columns):
        by_content.setdefault(tuple(columns[name]), []).append(name)
    merged = []
    for names in by_content.values():
        names.sort(key=lambda n: (not endorsed(n), -len(n), n))
        merged.append(names)
    merged.sort(key=lambda names: names[0])
    col_of = {names[0]: j for j, names in enumerate(merged)}
    per_row: list[list[tuple[int, float]]] = [[] for _ in feats]
    for names in merged:
        j = col_of[names[0]]
        for i, value in columns[names[0]]:
            per_row[i].append((j, value))
    # Columns were appended in ascending j (merged is sorted and j is its position), so each
    # row's cells are already in column order.
    indptr, indices, values = array("q", [0]), array("q"), array("d")
    for cells in per_row:
        if cells:
            js, vs = zip(*cells, strict=True)
            indices.extend(js)
            values.extend(vs)
        indptr.append(len(indices))
    content = {}
    for key, names in by_content.items():
        content[key] = col_of[names[0]]
    return FeatureMatrix(
        names=tuple(n[0] for n in merged),
        tiers=tuple(tiers.get(n[0], "auto") for n in merged),
        aliases=tuple(tuple(n[1:]) for n in merged),
        indptr=indptr,
        indices=indices,
        values=values,
        groups=array("q", groups),
        reward=array("d", reward),
        content=content,
    )


def add_columns(
    m: FeatureMatrix,
    columns: Mapping[str, Sequence[int]],
    *,
    tiers: Mapping[str, str],
    endorsed: Callable[[str], bool] = lambda name: False,
) -> FeatureMatrix:
    """Return ``m`` with binary columns ``{name: rows}`` added, merged as ``build_matrix`` would.

    A column equal to an existing one joins it as a name (the representative is re-chosen by
    the same rule); a new column is appended after the existing ones, so the result equals
    ``build_matrix`` of the extended rows up to the order of the columns.
    """
    groups_of: list[list[str]] = [[n, *a] for n, a in zip(m.names, m.aliases, strict=True)]
    content = dict(m.content)
    new_cols: list[list[int]] = []
    n_old = len(groups_of)
    for name in sorted(columns):
        rows = list(columns[name])
        key = tuple((i, 1.0) for i in rows)
        j = content.get(key)
        if j is None:
            j = content[key] = len(groups_of)
            groups_of.append([])
            new_cols.append(rows)
        groups_of[j].append(name)
    for names in groups_of:
        names.sort(key=lambda n: (not endorsed(n), -len(n), n))
    indptr, indices, values = m.indptr, m.indices, m.values
    if new_cols:
        extra: list[list[int]] = [[] for _ in range(len(indptr) - 1)]
        for k, rows in enumerate(new_cols):
            for i in rows:
                extra[i].append(n_old + k)
        indptr, indices, values = array("q", [0]), array("q"), array("d")
        old_ptr, old_idx, old_val = m.indptr, m.indices, m.values
        for i, more in enumerate(extra):
            lo, hi = old_ptr[i], old_ptr[i + 1]
            indices.extend(old_idx[lo:hi])
            values.extend(old_val[lo:hi])
            if more:
                indices.extend(more)
                values.extend([1.0] * len(more))
            indptr.append(len(indices))
    return FeatureMatrix(
        names=tuple(n[0] for n in groups_of),
        tiers=tuple(tiers.get(n[0], "auto") for n in groups_of),
        aliases=tuple(tuple(n[1:]) for n in groups_of),
        indptr=indptr,
        indices=indices,
        values=values,
        groups=m.groups,
        reward=m.reward,
        content=content,
    )


def run_scan(
    m: FeatureMatrix, n_perm: int, seed: int, conjoin: Sequence[int] = (), top: int = 0
) -> tuple[Any, Any, Any]:
    """Call the kernel on a matrix: ``(rho, floor, support)``.

    ``conjoin`` (column ids) and ``top`` make every permutation repeat :func:`conjunctions`
    on its shuffled reward, so the floor pays for the search as the observed ranking did.
    """
    return _backend.within_group_scan(  # type: ignore[no-any-return]
        m.indptr, m.indices, m.values, m.n_features, m.groups, m.reward, n_perm, seed,
        conjoin, top,
    )


def conjunctions(
    feats: Sequence[Mapping[str, float]],
    groups: Sequence[int],
    reward: Sequence[float],
    rho: Mapping[str, float],
    binary: set[str],
    *,
    top: int = CONJ_TOP,
    alpha: float = 0.05,
) -> dict[str, list[int]]:
    """Return ``{"A & B": rows}`` for pairs of strong binary features whose AND beats both.

    Candidates are the ``top`` binary features by |rho| (ties by name, which is column order
    in ``build_matrix``). A pair is kept when its |rho| exceeds both parents' and it *splits*
    each parent: among the parent's rows (in asks with mixed rewards), those with the other
    feature beat those without in within-ask reward, in the pair's direction, by ``z``
    standard errors, ``z`` the one-sided normal quantile at ``alpha`` over the number of
    pairs searched (Bonferroni). Otherwise the parent is the simpler explanation and the pair
    only trimmed it by chance. The choice looks at the reward, so the noise floor repeats
    the search under every permutation (``run_scan(..., conjoin=binary columns, top=top)``) over
    every pair of that permutation's ``top``; a pair the rules here drop can only lower the
    observed maximum, so the floor stays valid.
    """
    live = [n for n in binary if abs(rho.get(n, 0.0)) > 0.0]
    strong = sorted(live, key=lambda n: (-abs(rho[n]), n))[:top]
    rows_of = {n: [i for i, f in enumerate(feats) if f.get(n)] for n in strong}
    pairs: dict[str, tuple[str, str, list[int]]] = {}
    for a_pos, a in enumerate(strong):
        for b in strong[a_pos + 1 :]:
            both = sorted(set(rows_of[a]) & set(rows_of[b]))
            if both and both != rows_of[a] and both != rows_of[b]:
                pairs[f"{a} & {b}"] = (a, b, both)
    if not pairs:
        return {}
    names = sorted(pairs)
    indptr, indices, values = array("q", [0]), array("q"), array("d")
    cells: list[list[int]] = [[] for _ in feats]
    for j, name in enumerate(names):
        for i in pairs[name][2]:
            cells[i].append(j)
    for row in cells:
        indices.extend(row)
        values.extend([1.0] * len(row))
        indptr.append(len(indices))
    got, _, _ = _backend.within_group_scan(
        indptr, indices, values, len(names), array("q", groups), array("d", reward), 0, 0
    )
    centred = _centred(groups, reward)
    z = NormalDist().inv_cdf(1.0 - alpha / len(names))
    kept = {}
    for j, name in enumerate(names):
        a, b, both = pairs[name]
        if abs(got[j]) <= max(abs(rho[a]), abs(rho[b])) + 1e-12:
            continue
        inside = set(both)
        sign = 1.0 if got[j] > 0 else -1.0
        if all(_splits(rows_of[p], inside, centred, sign, z) for p in (a, b)):
            kept[name] = both
    return kept


def _centred(groups: Sequence[int], reward: Sequence[float]) -> list[float | None]:
    """Reward minus its ask's mean, or None for rows of asks without mixed rewards."""
    members: dict[int, list[int]] = {}
    for i, g in enumerate(groups):
        members.setdefault(g, []).append(i)
    out: list[float | None] = [None] * len(groups)
    for rows in members.values():
        values = [reward[i] for i in rows]
        if len(rows) >= 2 and len(set(values)) > 1:
            mean = sum(values) / len(values)
            for i in rows:
                out[i] = reward[i] - mean
    return out


def _splits(
    parent: Sequence[int], inside: set[int], centred: Sequence[float | None], sign: float, z: float
) -> bool:
    """Do the parent's rows in the pair beat its rows outside it by ``z`` standard errors?

    A two-sample comparison of within-ask reward (pooled variance) in the pair's direction.
    """
    kept: list[float] = []
    dropped: list[float] = []
    for i in parent:
        c = centred[i]
        if c is not None:
            (kept if i in inside else dropped).append(c)
    n1, n2 = len(kept), len(dropped)
    if not n1 or not n2 or n1 + n2 < 3:
        return False
    m1, m2 = sum(kept) / n1, sum(dropped) / n2
    ss = sum((x - m1) ** 2 for x in kept) + sum((x - m2) ** 2 for x in dropped)
    se = math.sqrt(ss / (n1 + n2 - 2) * (1.0 / n1 + 1.0 / n2))
    gap = sign * (m1 - m2)
    return gap > z * se if se > 0.0 else gap > 0.0
