"""The within-group scan kernel on both backends: bit-identical output, identical errors."""

from __future__ import annotations

import math
import random
from array import array
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from _kernel_helpers import (
    backend_settings,
    bits,
    golden,
    golden_params,
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
    """A random CSR matrix with groups and rewards (duplicate columns allowed)."""
    n_rows = draw(st.integers(0, 12))
    n_features = draw(st.integers(0, 5))
    indptr, indices, values = [0], [], []
    for _ in range(n_rows):
        if n_features:
            cells = st.tuples(st.integers(0, n_features - 1), scan_cell_values)
            row = draw(st.lists(cells, max_size=4))
            indices.extend(j for j, _ in row)
            values.extend(v for _, v in row)
        indptr.append(len(indices))
    groups = draw(st.lists(st.integers(0, 4), min_size=n_rows, max_size=n_rows))
    reward = draw(st.lists(scan_rewards, min_size=n_rows, max_size=n_rows))
    n_perm = draw(st.integers(0, 8))
    seed = draw(st.integers(-(2**70), 2**70))
    conjoin = draw(st.permutations(range(n_features)))[: draw(st.integers(0, n_features))]
    return (
        array("q", indptr),
        array("q", indices),
        array("d", values),
        n_features,
        array("q", groups),
        array("d", reward),
        n_perm,
        seed,
        array("q", conjoin),
        draw(st.integers(0, 4)),
    )


@SETTINGS
@given(problem=problems())
def test_scan_matches(
    both_backends: tuple[ModuleType, ModuleType], problem: tuple[Any, ...]
) -> None:
    same(both_backends, "within_group_scan", *problem, keep=scan_bytes)


@SETTINGS
@given(problem=problems(), which=st.integers(0, 9), junk=st.sampled_from([-1, 99, 0.5, True]))
def test_broken_input_raises_the_same_error(
    both_backends: tuple[ModuleType, ModuleType], problem: tuple[Any, ...], which: int, junk: Any
) -> None:
    args = spoil(problem, which, junk, floats=(2, 5))  # values and reward
    if args is not None:
        same(both_backends, "within_group_scan", *args, keep=scan_bytes)


def test_errors_name_the_bad_position(backend: ModuleType) -> None:
    ok = ([0, 1, 1], [0], [1.0], 1, [0, 0], [1.0, 0.0])
    with pytest.raises(ValueError, match=r"indices\[0\] = 3 is outside \[0, 1\)"):
        backend.within_group_scan(ok[0], [3], *ok[2:])
    with pytest.raises(ValueError, match=r"reward\[1\] must be finite, got nan"):
        backend.within_group_scan(*ok[:5], [1.0, math.nan])
    with pytest.raises(ValueError, match=r"groups\[0\] must be >= 0, got -1"):
        backend.within_group_scan(*ok[:4], [-1, 0], ok[5])
    with pytest.raises(ValueError, match="n_features must be an int >= 0, got -1"):
        backend.within_group_scan(ok[0], ok[1], ok[2], -1, *ok[4:])
    with pytest.raises(ValueError, match="indptr must have 3 entries starting at 0"):
        backend.within_group_scan([0, 1], *ok[1:])
    with pytest.raises(TypeError, match="count must be an int, got NoneType"):
        backend.within_group_scan(*ok, None)
    with pytest.raises(TypeError, match="seed must be an int, got float"):
        backend.within_group_scan(*ok, seed=1.5)


def test_a_feature_that_tracks_reward_within_asks_correlates_fully(backend: ModuleType) -> None:
    # Feature 0 fires exactly on the rewarded row of each ask; feature 1 fires everywhere.
    rows = [[0, 1], [1], [0, 1], [1], [1], [1]]
    indptr = [0]
    for r in rows:
        indptr.append(indptr[-1] + len(r))
    indices = [j for r in rows for j in r]
    rho, floor, support = backend.within_group_scan(
        indptr,
        indices,
        [1.0] * len(indices),
        2,
        [0, 0, 1, 1, 2, 2],
        [1.0, 0.0, 1.0, 0.0, 1.0, 1.0],
        50,
        4,
    )
    assert list(rho) == [1.0, 0.0]
    assert list(support) == [4, 0]  # ask 2 is uniform (all rewards 1.0) and takes no part
    assert len(floor) == 50
    assert all(0.0 <= f <= 1.0 for f in floor)
    assert max(floor) == 1.0  # some shuffle puts the reward back where the feature is


def test_golden_file_holds_cases() -> None:
    assert GOLDEN


@pytest.mark.parametrize("case", golden_params(GOLDEN))
def test_golden_vectors(backend: ModuleType, case: dict[str, Any]) -> None:
    rho, floor, support = backend.within_group_scan(*case["args"])
    assert bits(rho) == case["rho"]
    assert bits(floor) == case["floor"]
    assert list(support) == case["support"]


@st.composite
def binary_problems(draw: st.DrawFn) -> tuple[Any, ...]:
    """Binary features over a few asks: the shape whose pairs the conjunction search ANDs."""
    n_features = draw(st.integers(2, 7))
    n_rows = draw(st.integers(4, 40))
    density = draw(st.lists(st.floats(0.1, 0.9), min_size=n_features, max_size=n_features))
    picks = draw(st.lists(st.floats(0.0, 1.0), min_size=n_rows * n_features,
                          max_size=n_rows * n_features))
    indptr, indices = [0], []
    for i in range(n_rows):
        indices.extend(j for j in range(n_features) if picks[i * n_features + j] < density[j])
        indptr.append(len(indices))
    groups = sorted(draw(st.lists(st.integers(0, 5), min_size=n_rows, max_size=n_rows)))
    reward = draw(st.lists(st.sampled_from([0.0, 1.0, 0.5]), min_size=n_rows, max_size=n_rows))
    conjoin = draw(st.permutations(range(n_features)))[: draw(st.integers(2, n_features))]
    return (
        array("q", indptr), array("q", indices), array("d", [1.0] * len(indices)), n_features,
        array("q", groups), array("d", reward), draw(st.integers(1, 20)),
        draw(st.integers(0, 2**64 - 1)), array("q", conjoin), draw(st.integers(0, 6)),
    )


@SETTINGS
@given(problem=binary_problems())
def test_conjunction_search_matches(
    both_backends: tuple[ModuleType, ModuleType], problem: tuple[Any, ...]
) -> None:
    same(both_backends, "within_group_scan", *problem, keep=scan_bytes)


def _with_and_columns(problem: tuple[Any, ...], pairs: list[tuple[int, int]]) -> tuple[Any, ...]:
    """The problem's matrix with one explicit AND column appended per pair."""
    indptr, indices, _values, n_features, *rest = problem
    new_ptr, new_idx = array("q", [0]), array("q")
    for i in range(len(indptr) - 1):
        row = list(indices[indptr[i] : indptr[i + 1]])
        row += [n_features + k for k, (a, b) in enumerate(pairs) if a in row and b in row]
        new_idx.extend(row)
        new_ptr.append(len(new_idx))
    return (new_ptr, new_idx, array("d", [1.0] * len(new_idx)), n_features + len(pairs), *rest)


def test_the_floor_repeats_the_conjunction_search(backend: ModuleType) -> None:
    # 40 asks x 6 rows, 6 binary features: the floor with the search lies between the plain
    # floor and the floor over every pair's AND column, and equals the latter when every
    # candidate is paired (top >= candidates; no candidate has rho exactly 0 here).
    rng = random.Random(5)
    n_features, asks, k = 6, 40, 6
    indptr, indices = array("q", [0]), array("q")
    for _ in range(asks * k):
        indices.extend(j for j in range(n_features) if rng.random() < 0.5)
        indptr.append(len(indices))
    groups = array("q", [a for a in range(asks) for _ in range(k)])
    reward = array("d", [float(rng.random() < 0.5) for _ in range(asks * k)])
    base = (indptr, indices, array("d", [1.0] * len(indices)), n_features, groups, reward, 30, 7)
    conjoin = [0, 2, 3, 5]
    plain = backend.within_group_scan(*base)
    every = backend.within_group_scan(*base, conjoin, 4)
    some = backend.within_group_scan(*base, conjoin, 2)
    pairs = [(a, b) for x, a in enumerate(conjoin) for b in conjoin[x + 1 :]]
    wide = backend.within_group_scan(*_with_and_columns(base, pairs))
    assert list(every[0]) == list(plain[0])
    assert list(every[2]) == list(plain[2])
    assert list(every[1]) == list(wide[1])
    assert all(p <= s <= e for p, s, e in zip(plain[1], some[1], every[1], strict=True))
    assert any(s > p for p, s in zip(plain[1], some[1], strict=True))
    assert list(backend.within_group_scan(*base, conjoin, 1)[1]) == list(plain[1])


def test_conjoin_errors_name_the_column(backend: ModuleType) -> None:
    ok = ([0, 1, 1], [0], [1.0], 2, [0, 0], [1.0, 0.0], 1, 0)
    with pytest.raises(ValueError, match=r"conjoin\[1\] = 2 is outside \[0, 2\)"):
        backend.within_group_scan(*ok, [0, 2])
    with pytest.raises(ValueError, match=r"conjoin\[1\] = 0 repeats an earlier column"):
        backend.within_group_scan(*ok, [0, 0], 2)
    with pytest.raises(TypeError, match="top must be an int, got float"):
        backend.within_group_scan(*ok, [0, 1], 2.0)
    with pytest.raises(ValueError, match="top must be at least 0, got -1"):
        backend.within_group_scan(*ok, [0, 1], -1)
