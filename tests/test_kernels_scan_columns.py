"""The column-major scan on both backends: bit-identical output and errors, and the CSR scan's
results for the same cells."""

from __future__ import annotations

import random
from array import array
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from _kernel_helpers import (
    as_bytes,
    backend_settings,
    golden,
    golden_params,
    outcome,
    same,
    scan_bytes,
    scan_cell_values,
    scan_rewards,
    spoil,
)

GOLDEN = golden("scan")["cases"]
SETTINGS = backend_settings(200)


@st.composite
def problems(draw: st.DrawFn) -> tuple[Any, ...]:
    """A random column-major matrix (binary and valued columns) with groups and rewards."""
    n_rows = draw(st.integers(0, 14))
    n_features = draw(st.integers(0, 6))
    ptr, rows, vptr, values = [0], [], [0], []
    for _ in range(n_features):
        col = sorted(draw(st.sets(st.integers(0, max(0, n_rows - 1)), max_size=n_rows)))
        rows.extend(col if n_rows else [])
        ptr.append(len(rows))
        if draw(st.booleans()):
            values.extend(draw(scan_cell_values) for _ in (col if n_rows else []))
        vptr.append(len(values))
    groups = draw(st.lists(st.integers(0, 4), min_size=n_rows, max_size=n_rows))
    reward = draw(st.lists(scan_rewards, min_size=n_rows, max_size=n_rows))
    conjoin = draw(st.permutations(range(n_features)))[: draw(st.integers(0, n_features))]
    return (
        array("q", ptr),
        array(draw(st.sampled_from("iq")), rows),
        array("q", vptr),
        array("d", values),
        array("q", groups),
        array("d", reward),
        draw(st.integers(0, 17)),
        draw(st.integers(-(2**70), 2**70)),
        array("q", conjoin),
        draw(st.integers(0, 4)),
    )


def to_csr(problem: tuple[Any, ...]) -> tuple[Any, ...]:
    """The same cells as ``within_group_scan``'s CSR arguments."""
    ptr, rows, vptr, values, groups, reward, *rest = problem
    cells: list[list[tuple[int, float]]] = [[] for _ in groups]
    for j in range(len(ptr) - 1):
        binary = vptr[j] == vptr[j + 1]
        for k in range(ptr[j], ptr[j + 1]):
            value = 1.0 if binary else values[vptr[j] + k - ptr[j]]
            cells[rows[k]].append((j, value))
    indptr, indices, out = [0], [], []
    for row in cells:
        indices.extend(j for j, _ in row)
        out.extend(v for _, v in row)
        indptr.append(len(indices))
    return (indptr, indices, out, len(ptr) - 1, groups, reward, *rest)


def same_columns(both: tuple[ModuleType, ModuleType], *args: Any) -> tuple[str, Any]:
    """The column scan's outcome, the same on both backends (arrays compared as bytes)."""
    return same(both, "within_group_scan_columns", *args, keep=scan_bytes)


def csr_outcome(backend: ModuleType, problem: tuple[Any, ...]) -> tuple[str, Any]:
    """The outcome of the CSR scan of the same cells."""
    return outcome(lambda: backend.within_group_scan(*to_csr(problem)), scan_bytes)


@SETTINGS
@given(problem=problems())
def test_columns_match_across_backends_and_the_csr_scan(
    both_backends: tuple[ModuleType, ModuleType], problem: tuple[Any, ...]
) -> None:
    got = same_columns(both_backends, *problem)
    assert got[0] == "ok"
    for backend in both_backends:
        assert got == csr_outcome(backend, problem)


@SETTINGS
@given(problem=problems(), which=st.integers(0, 9), junk=st.sampled_from([-1, 99, 0.5, True]))
def test_broken_input_raises_the_same_error(
    both_backends: tuple[ModuleType, ModuleType], problem: tuple[Any, ...], which: int, junk: Any
) -> None:
    args = spoil(problem, which, junk, floats=(3, 5))  # values and reward
    if args is not None:
        same_columns(both_backends, *args)


def test_errors_name_the_bad_position(backend: ModuleType) -> None:
    scan = backend.within_group_scan_columns
    groups, reward = [0, 0, 1], [1.0, 0.0, 1.0]
    with pytest.raises(ValueError, match=r"rows\[1\] = 0 does not ascend within column 0"):
        scan([0, 2], [1, 0], [0, 0], [], groups, reward)
    with pytest.raises(ValueError, match=r"rows\[2\] = 3 is outside \[0, 3\)"):
        scan([0, 1, 3], [0, 1, 3], [0, 0, 0], [], groups, reward)
    with pytest.raises(ValueError, match="column 1 has 2 rows but 1 values"):
        scan([0, 1, 3], [0, 1, 2], [0, 0, 1], [2.0], groups, reward)
    with pytest.raises(ValueError, match=r"ptr must run from 0 to len\(rows\) \(2\)"):
        scan([0, 1], [0, 1], [0, 0], [], groups, reward)
    with pytest.raises(ValueError, match="vptr must have 2 entries"):
        scan([0, 1], [0], [0], [], groups, reward)
    with pytest.raises(ValueError, match=r"groups\[1\] must be >= 0, got -1"):
        scan([0, 1], [0], [0, 0], [], [0, -1, 1], reward)
    with pytest.raises(ValueError, match=r"conjoin\[0\] = 1 is outside \[0, 1\)"):
        scan([0, 1], [0], [0, 0], [], groups, reward, 1, 0, [1], 2)


def test_many_rows_cross_the_kernels_tiles(both_backends: tuple[ModuleType, ModuleType]) -> None:
    # 4,501 rows in asks of 7 (an ask straddles position 4,096, where the native kernel's
    # tiles meet), valued and binary columns, 9 shuffles (a full block of 8 and one more) and
    # the conjunction search: both backends, and the CSR scan of the same cells, agree.
    rng = random.Random(3)
    n_rows = 4501
    ptr, rows, vptr, values = [0], [], [0], []
    for j in range(6):
        col = [i for i in range(n_rows) if rng.random() < 0.2 + 0.1 * j]
        rows.extend(col)
        ptr.append(len(rows))
        if j % 3 == 0:
            values.extend(rng.choice([0.5, 2.0, 3.0]) for _ in col)
        vptr.append(len(values))
    groups = [i // 7 for i in range(n_rows)]
    reward = [float(rng.random() < 0.5) for _ in range(n_rows)]
    problem = (array("q", ptr), array("i", rows), array("q", vptr), array("d", values),
               array("q", groups), array("d", reward), 9, 11, array("q", [1, 2, 4, 5]), 3)
    got = same_columns(both_backends, *problem)
    assert got[0] == "ok"
    assert got == csr_outcome(both_backends[0], problem)


def _columns_of(args: list[Any]) -> tuple[Any, ...]:
    """A golden CSR case's cells column by column (duplicates in a row added, as the scan does)."""
    indptr, indices, values, n_features, groups, reward, *rest = args
    cols: list[dict[int, float]] = [{} for _ in range(n_features)]
    for i in range(len(indptr) - 1):
        for k in range(indptr[i], indptr[i + 1]):
            cols[indices[k]][i] = cols[indices[k]].get(i, 0.0) + float(values[k])
    ptr, rows, vptr, out = [0], [], [0], []
    for col in cols:
        rows.extend(sorted(col))
        out.extend(col[i] for i in sorted(col))
        ptr.append(len(rows))
        vptr.append(len(out))
    return (ptr, rows, vptr, out, groups, reward, *rest)


@pytest.mark.parametrize("case", golden_params(GOLDEN))
def test_golden_cases_column_by_column(backend: ModuleType, case: dict[str, Any]) -> None:
    want = backend.within_group_scan(*case["args"])
    got = backend.within_group_scan_columns(*_columns_of(case["args"]))
    assert as_bytes(got) == as_bytes(want)


def test_a_binary_column_stores_its_rows_only(backend: ModuleType) -> None:
    # Feature 0 (binary, no values) fires on the rewarded row of each ask.
    rho, _, support = backend.within_group_scan_columns(
        [0, 2, 4], [0, 2, 0, 1], [0, 0, 2], [3.0, 3.0], [0, 0, 1, 1], [1.0, 0.0, 1.0, 0.0]
    )
    assert list(rho) == [1.0, 0.0]  # feature 1 is 3.0 on both rows of ask 0: it never varies
    assert list(support) == [4, 0]
