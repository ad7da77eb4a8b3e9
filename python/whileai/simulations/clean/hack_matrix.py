"""Turn rows into the flat inputs of the scan kernel: groups, rewards and a column-major matrix.

Identical feature columns are merged into one (the others are kept as ``aliases``), so two
names for the same behaviour never tie against each other; the representative is an endorsed
name if any, else the longest (most specific), then the alphabetically first. A binary column
(every value 1.0) keeps its rows only; row ids are 32-bit while they fit.

>>> m = build_matrix([{"a": 1.0}, {"a": 1.0, "b": 2.0}], [0, 0], [1.0, 0.0], tiers={})
>>> m.names, list(m.col_rows), list(m.col_values), m.is_binary(0), m.n_features
(('a', 'b'), [0, 1, 1], [2.0], True, 2)
"""

from __future__ import annotations

import hashlib
import math
import sys
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
    "matrix_from_columns",
    "run_scan",
]

CONJ_TOP = 12  # the conjunction search pairs this many of the strongest binary features

# A column handed in: (rows ascending, values), values None (or all 1.0) for a binary column.
Cells = tuple["array[int]", "array[float] | None"]


@dataclass(frozen=True, slots=True, kw_only=True)
class FeatureMatrix:
    """The kernel's inputs, column by column, with a name, tier and aliases per column.

    Column ``j``'s rows are ``col_rows[col_ptr[j]:col_ptr[j + 1]]`` (ascending); its values are
    ``col_values[val_ptr[j]:val_ptr[j + 1]]``, one per row, or none when every value is 1.0.
    """

    names: tuple[str, ...]
    tiers: tuple[str, ...]
    aliases: tuple[tuple[str, ...], ...]
    groups: array[int]
    reward: array[float]
    col_ptr: array[int] = field(default_factory=lambda: array("q", [0]), repr=False)
    col_rows: array[int] = field(default_factory=lambda: array("i"), repr=False)
    val_ptr: array[int] = field(default_factory=lambda: array("q", [0]), repr=False)
    col_values: array[float] = field(default_factory=lambda: array("d"), repr=False)
    # Each column's content digest -> the indices of the columns with it, so added columns merge
    # the same way (a digest only narrows the search: equality is checked on the cells).
    content: dict[bytes, list[int]] = field(
        default_factory=dict, repr=False, compare=False
    )

    @property
    def n_features(self) -> int:
        """Number of (merged) feature columns."""
        return len(self.names)

    def rows_of(self, j: int) -> array[int]:
        """The rows (ascending) where column ``j`` is non-zero."""
        return self.col_rows[self.col_ptr[j] : self.col_ptr[j + 1]]

    def is_binary(self, j: int) -> bool:
        """Is every value of column ``j`` 1.0 (its values are not stored)?"""
        return self.val_ptr[j] == self.val_ptr[j + 1]

    def cells(self, j: int) -> Cells:
        """Column ``j`` as ``(rows, values)``, values None for a binary column."""
        lo, hi = self.val_ptr[j], self.val_ptr[j + 1]
        return self.rows_of(j), (self.col_values[lo:hi] if hi > lo else None)


def _row_code(n_rows: int) -> str:
    """The typecode of row ids: 32-bit while every id fits."""
    return "i" if n_rows <= 2**31 else "q"


def _narrow(rows: array[int]) -> array[int]:
    """``array("i", rows)`` of an ``array("q")`` whose ids fit 32 bits, without a loop in Python.

    On a little-endian machine the low half of each 64-bit id is its 32-bit value: a strided
    view of those halves, copied once.
    """
    if sys.byteorder != "little" or rows.itemsize != 8 or array("i").itemsize != 4:
        return array("i", rows)
    out = array("i")
    out.frombytes(memoryview(rows).cast("B").cast("i")[::2].tobytes())
    return out


def _normal(rows: Sequence[int], values: Sequence[float] | None, code: str) -> Cells:
    """A column with rows in ``code`` and values None when every value is 1.0."""
    if isinstance(rows, array) and rows.typecode == code:
        rows_a = rows
    elif code == "i" and isinstance(rows, array) and rows.typecode == "q":
        rows_a = _narrow(rows)  # row ids are below 2**31 (``_row_code``)
    else:
        rows_a = array(code, rows)
    if values is not None and not (isinstance(values, array) and values.typecode == "d"):
        values = array("d", values)
    if values is not None and values.count(1.0) == len(values):
        values = None
    return rows_a, values


def _key(cells: Cells) -> bytes:
    """A digest of a column's cells, read in place (no copy of the cells)."""
    rows, values = cells
    h = hashlib.blake2b(rows, digest_size=16)
    h.update(b"" if values is None else b"v")
    if values is not None:
        h.update(values)
    return h.digest()


def _append(col: tuple[array[int], array[int], array[int], array[float]], cells: Cells) -> None:
    """Append a column's cells to ``(ptr, rows, val_ptr, values)``."""
    ptr, rows, val_ptr, values = col
    rows.extend(cells[0])
    ptr.append(len(rows))
    if cells[1] is not None:
        values.extend(cells[1])
    val_ptr.append(len(values))


def matrix_from_columns(
    columns: Mapping[str, tuple[Sequence[int], Sequence[float] | None]],
    groups: Sequence[int],
    reward: Sequence[float],
    *,
    tiers: Mapping[str, str],
    endorsed: Callable[[str], bool] = lambda name: False,
) -> FeatureMatrix:
    """Return the merged matrix of ``{name: (rows, values)}`` columns (non-zero cells only)."""
    code = _row_code(len(groups))
    # Columns with equal cells, by digest and then by the cells themselves (in name order).
    normal: dict[str, Cells] = {}
    by_digest: dict[bytes, list[list[str]]] = {}
    for name in sorted(columns):
        cells = normal[name] = _normal(*columns[name], code)
        same = by_digest.setdefault(_key(cells), [])
        for names in same:
            if normal[names[0]] == cells:
                names.append(name)
                break
        else:
            same.append([name])
    merged = [names for groups_ in by_digest.values() for names in groups_]
    for names in merged:
        names.sort(key=lambda n: (not endorsed(n), -len(n), n))
    merged.sort(key=lambda names: names[0])
    col = (array("q", [0]), array(code), array("q", [0]), array("d"))
    content: dict[bytes, list[int]] = {}
    for j, names in enumerate(merged):
        cells = normal[names[0]]
        content.setdefault(_key(cells), []).append(j)
        _append(col, cells)
    del normal
    return FeatureMatrix(
        names=tuple(n[0] for n in merged),
        tiers=tuple(tiers.get(n[0], "auto") for n in merged),
        aliases=tuple(tuple(n[1:]) for n in merged),
        groups=array("q", groups),
        reward=array("d", reward),
        col_ptr=col[0],
        col_rows=col[1],
        val_ptr=col[2],
        col_values=col[3],
        content=content,
    )


def build_matrix(
    feats: Sequence[Mapping[str, float]],
    groups: Sequence[int],
    reward: Sequence[float],
    *,
    tiers: Mapping[str, str],
    endorsed: Callable[[str], bool] = lambda name: False,
) -> FeatureMatrix:
    """Return the merged matrix of per-row ``{name: value}`` features."""
    columns: dict[str, tuple[array[int], array[float]]] = {}
    for i, row in enumerate(feats):
        for name, value in row.items():
            if value != 0.0:
                rows, values = columns.setdefault(name, (array("q"), array("d")))
                rows.append(i)
                values.append(value)
    return matrix_from_columns(columns, groups, reward, tiers=tiers, endorsed=endorsed)


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
    content = {key: list(js) for key, js in m.content.items()}
    code = m.col_rows.typecode
    col = (array("q", m.col_ptr), array(code, m.col_rows), array("q", m.val_ptr),
           array("d", m.col_values))

    def cells(j: int) -> Cells:
        lo, hi, vlo, vhi = col[0][j], col[0][j + 1], col[2][j], col[2][j + 1]
        return col[1][lo:hi], (col[3][vlo:vhi] if vhi > vlo else None)

    for name in sorted(columns):
        new = _normal(columns[name], None, code)
        key = _key(new)
        j = next((j for j in content.get(key, ()) if cells(j) == new), None)
        if j is None:
            j = len(groups_of)
            content.setdefault(key, []).append(j)
            groups_of.append([])
            _append(col, new)
        groups_of[j].append(name)
    for names in groups_of:
        names.sort(key=lambda n: (not endorsed(n), -len(n), n))
    return FeatureMatrix(
        names=tuple(n[0] for n in groups_of),
        tiers=tuple(tiers.get(n[0], "auto") for n in groups_of),
        aliases=tuple(tuple(n[1:]) for n in groups_of),
        groups=m.groups,
        reward=m.reward,
        col_ptr=col[0],
        col_rows=col[1],
        val_ptr=col[2],
        col_values=col[3],
        content=content,
    )


def run_scan(
    m: FeatureMatrix, n_perm: int, seed: int, conjoin: Sequence[int] = (), top: int = 0
) -> tuple[Any, Any, Any]:
    """Call the kernel on a matrix, read in place: ``(rho, floor, support)``.

    ``conjoin`` (column ids) and ``top`` make every permutation repeat :func:`conjunctions`
    on its shuffled reward, so the floor pays for the search as the observed ranking did.
    """
    return _backend.within_group_scan_columns(
        m.col_ptr, m.col_rows, m.val_ptr, m.col_values, m.groups, m.reward, n_perm, seed,
        conjoin, top,
    )


def conjunctions(
    rows_of: Callable[[str], Sequence[int]],
    groups: Sequence[int],
    reward: Sequence[float],
    rho: Mapping[str, float],
    binary: set[str],
    *,
    top: int = CONJ_TOP,
    alpha: float = 0.05,
) -> dict[str, list[int]]:
    """Return ``{"A & B": rows}`` for pairs of strong binary features whose AND beats both.

    ``rows_of(name)`` gives the rows (ascending) where the binary feature ``name`` is 1.

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
    members = {n: list(rows_of(n)) for n in strong}
    sets = {n: set(rows) for n, rows in members.items()}
    pairs: dict[str, tuple[str, str, list[int]]] = {}
    for a_pos, a in enumerate(strong):
        for b in strong[a_pos + 1 :]:
            # A subset of each parent: equal to one exactly when it is as long.
            both = sorted(sets[a] & sets[b])
            if both and len(both) != len(members[a]) and len(both) != len(members[b]):
                pairs[f"{a} & {b}"] = (a, b, both)
    if not pairs:
        return {}
    names = sorted(pairs)
    ptr, rows = array("q", [0]), array(_row_code(len(groups)))
    for name in names:
        rows.extend(pairs[name][2])
        ptr.append(len(rows))
    got, _, _ = _backend.within_group_scan_columns(
        ptr, rows, array("q", [0]) * len(ptr), array("d"), array("q", groups),
        array("d", reward),
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
        if all(_splits(members[p], inside, centred, sign, z) for p in (a, b)):
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
