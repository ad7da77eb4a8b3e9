"""The scan kernel's input checks, in the native binding's order and words (the same errors
from either backend, docs/kernels.md "Scan").

>>> check_conjoin([2, 0], 3).tolist()
[2, 0]
>>> check_conjoin([1, 1], 3)
Traceback (most recent call last):
    ...
ValueError: conjoin[1] = 1 repeats an earlier column
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence
from itertools import pairwise

from whileai._pure.rng import check_count, check_seed

__all__ = ["check_columns", "check_conjoin", "check_inputs", "column_arrays", "search_args"]


def check_inputs(
    indptr: Sequence[int],
    indices: Sequence[int],
    values: Sequence[float],
    n_features: int,
    groups: Sequence[int],
    reward: Sequence[float],
) -> None:
    """Check a CSR input of ``within_group_scan`` (shapes, group ids, finite rewards)."""
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


def check_conjoin(conjoin: Sequence[int], n_features: int) -> array[int]:
    """The conjunction candidates as ``array('q')``: column ids in range, none repeated."""
    columns = array("q", conjoin)  # the TypeError / OverflowError of the native reader
    seen: set[int] = set()
    for k, j in enumerate(columns):
        if not 0 <= j < n_features:
            raise ValueError(f"conjoin[{k}] = {j} is outside [0, {n_features})")
        if j in seen:
            raise ValueError(f"conjoin[{k}] = {j} repeats an earlier column")
        seen.add(j)
    return columns


def search_args(
    n_perm: int, seed: int, conjoin: Sequence[int], top: int, n_features: int
) -> tuple[int, int, array[int], int]:
    """``n_perm``, ``seed``, ``conjoin`` and ``top`` checked in the native binding's order."""
    return (check_count(n_perm), check_seed(seed), check_conjoin(conjoin, n_features),
            check_count(top, "top"))


def column_arrays(
    ptr: Sequence[int], rows: Sequence[int], vptr: Sequence[int], values: Sequence[float],
    groups: Sequence[int], reward: Sequence[float],
) -> tuple[array[int], array[int], array[int], array[float], array[int], array[float]]:
    """A column-major matrix as arrays (a caller's int array of rows kept as it is), checked."""
    ptr_a = array("q", ptr)
    rows_a = rows if isinstance(rows, array) and rows.typecode in "iq" else array("q", rows)
    vptr_a, values_a = array("q", vptr), array("d", values)
    groups_a, reward_a = array("q", groups), array("d", reward)
    check_columns(ptr_a, rows_a, vptr_a, values_a, groups_a, reward_a)
    return ptr_a, rows_a, vptr_a, values_a, groups_a, reward_a


def check_columns(
    ptr: array[int], rows: array[int], vptr: array[int], values: array[float],
    groups: array[int], reward: array[float],
) -> None:
    """Check a column-major input (pointers, ascending rows, group ids, finite rewards)."""
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
