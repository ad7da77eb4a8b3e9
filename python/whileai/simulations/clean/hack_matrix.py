"""Turn rows into the flat inputs of the scan kernel: groups, rewards and a CSR feature matrix.

Identical feature columns are merged into one (the others are kept as ``aliases``), so two
names for the same behaviour never tie against each other; the representative is an endorsed
name if any, else the longest (most specific), then the alphabetically first.

>>> m = build_matrix([{"a": 1.0}, {"a": 1.0, "b": 2.0}], [0, 0], [1.0, 0.0], tiers={})
>>> m.names, list(m.indptr), m.n_features
(('a', 'b'), [0, 1, 3], 2)
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from whileai import _backend

__all__ = ["FeatureMatrix", "add_columns", "build_matrix", "conjunctions", "run_scan"]


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


def run_scan(m: FeatureMatrix, n_perm: int, seed: int) -> tuple[Any, Any, Any]:
    """Call the kernel on a matrix: ``(rho, floor, support)``."""
    return _backend.within_group_scan(  # type: ignore[no-any-return]
        m.indptr, m.indices, m.values, m.n_features, m.groups, m.reward, n_perm, seed
    )


def conjunctions(
    feats: Sequence[Mapping[str, float]],
    groups: Sequence[int],
    reward: Sequence[float],
    rho: Mapping[str, float],
    binary: set[str],
    *,
    top: int = 12,
) -> dict[str, list[int]]:
    """Return ``{"A & B": rows}`` for pairs of strong binary features whose AND beats both.

    Candidates are the ``top`` binary features by |rho|; a pair is kept when its own |rho|
    exceeds both parents' and its rows differ from each parent's.
    """
    live = [n for n in binary if abs(rho.get(n, 0.0)) > 0.0]
    strong = sorted(live, key=lambda n: (-abs(rho[n]), n))[:top]
    rows_of = {n: [i for i, f in enumerate(feats) if f.get(n)] for n in strong}
    pairs: dict[str, list[int]] = {}
    for a_pos, a in enumerate(strong):
        for b in strong[a_pos + 1 :]:
            both = sorted(set(rows_of[a]) & set(rows_of[b]))
            if both and both != rows_of[a] and both != rows_of[b]:
                pairs[f"{a} & {b}"] = both
    if not pairs:
        return {}
    names = sorted(pairs)
    indptr, indices, values = array("q", [0]), array("q"), array("d")
    cells: list[list[int]] = [[] for _ in feats]
    for j, name in enumerate(names):
        for i in pairs[name]:
            cells[i].append(j)
    for row in cells:
        indices.extend(row)
        values.extend([1.0] * len(row))
        indptr.append(len(indices))
    got, _, _ = _backend.within_group_scan(
        indptr, indices, values, len(names), array("q", groups), array("d", reward), 0, 0
    )
    kept = {}
    for j, name in enumerate(names):
        a, b = name.split(" & ", 1)
        if abs(got[j]) > max(abs(rho[a]), abs(rho[b])) + 1e-12:
            kept[name] = pairs[name]
    return kept
