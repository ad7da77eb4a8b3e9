"""Block partials of the scan (docs/kernels.md, "Scan"): the same on both backends, and added in
block order by ``scan_from_partials`` they give the single-process scan, whichever worker summed
which blocks."""

from __future__ import annotations

from array import array
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from _kernel_helpers import as_bytes, backend_settings
from whileai._pure.scan import BLOCK
from whileai.simulations.clean.scan_blocks import add_partials, and_columns, scan_from_partials

SETTINGS = backend_settings(60)
values = st.sampled_from([0.0, 1.0, 0.5, -2.0, 3.0, 0.1, 1e-9])
rewards = st.sampled_from([0.0, 1.0, 0.5, -2.25, 0.1, 0.3])


@st.composite
def problems(draw: st.DrawFn) -> tuple[Any, ...]:
    """A column-major matrix whose asks spread over a few blocks, rows of asks interleaved."""
    asks = draw(st.lists(st.integers(0, 4 * BLOCK), min_size=1, max_size=12, unique=True))
    groups = draw(st.lists(st.sampled_from(asks), min_size=2, max_size=40))
    n_rows = len(groups)
    reward = draw(st.lists(rewards, min_size=n_rows, max_size=n_rows))
    ptr, rows, vptr, cells = [0], [], [0], []
    for _ in range(draw(st.integers(1, 6))):
        col = sorted(draw(st.sets(st.integers(0, n_rows - 1), max_size=n_rows)))
        rows.extend(col)
        ptr.append(len(rows))
        if draw(st.booleans()):
            cells.extend(draw(values) for _ in col)
        vptr.append(len(cells))
    return (
        array("q", ptr), array(draw(st.sampled_from("iq")), rows), array("q", vptr),
        array("d", cells), array("q", groups), array("d", reward),
    )


def take(matrix: tuple[Any, ...], keep: list[int]) -> tuple[Any, ...]:
    """The rows ``keep`` (in order) of a column-major matrix, renumbered from 0."""
    ptr, rows, vptr, cells, groups, reward = matrix
    new = {r: k for k, r in enumerate(keep)}
    out_ptr, out_rows, out_vptr, out_cells = [0], array("q"), [0], array("d")
    for j in range(len(ptr) - 1):
        for k in range(ptr[j], ptr[j + 1]):
            if rows[k] in new:
                out_rows.append(new[rows[k]])
                if vptr[j + 1] > vptr[j]:
                    out_cells.append(cells[vptr[j] + k - ptr[j]])
        out_ptr.append(len(out_rows))
        out_vptr.append(len(out_cells))
    return (array("q", out_ptr), out_rows, array("q", out_vptr), out_cells,
            array("q", [groups[i] for i in keep]), array("d", [reward[i] for i in keep]))


@SETTINGS
@given(matrix=problems(), n_perm=st.integers(0, 19), seed=st.integers(0, 2**64 - 1))
def test_partials_match_across_backends(
    both_backends: tuple[ModuleType, ModuleType], matrix: tuple[Any, ...], n_perm: int, seed: int
) -> None:
    native, pure = both_backends
    got = native.within_group_scan_partials(*matrix, n_perm, seed)
    assert as_bytes(got) == as_bytes(pure.within_group_scan_partials(*matrix, n_perm, seed))
    blocks = got[0]
    assert list(blocks) == sorted({g // BLOCK for g in matrix[4]})


@SETTINGS
@given(
    matrix=problems(), n_perm=st.integers(0, 19), seed=st.integers(0, 2**64 - 1),
    top=st.integers(0, 4), worker_of=st.lists(st.integers(0, 2), min_size=5, max_size=5),
)
def test_partials_of_any_split_of_blocks_give_the_scan(
    backend: ModuleType, matrix: tuple[Any, ...], n_perm: int, seed: int, top: int,
    worker_of: list[int],
) -> None:
    groups = matrix[4]
    n_features = len(matrix[0]) - 1
    conjoin = array("q", range(n_features))
    want = backend.within_group_scan_columns(*matrix, n_perm, seed, conjoin, top)
    # Each block goes to one of three workers; a worker gets its blocks' rows in order.
    shares = [[i for i, g in enumerate(groups) if worker_of[g // BLOCK] == w] for w in range(3)]
    subs = [take(matrix, keep) for keep in shares if keep]
    parts = [backend.within_group_scan_partials(*sub, n_perm, seed) for sub in subs]

    def pair_partials(pairs: list[tuple[int, int]]) -> list[Any]:
        return [
            backend.within_group_scan_partials(*and_columns(*sub[:4], pairs), *sub[4:], n_perm,
                                               seed)
            for sub in subs
        ]

    got = scan_from_partials(parts, n_features, n_perm, conjoin, top, pair_partials)
    assert as_bytes(got) == as_bytes(want)


def test_asks_in_other_blocks_change_the_sum_order_not_the_meaning(backend: ModuleType) -> None:
    # The same rows with asks renumbered across blocks: rho and support stay (up to rounding).
    groups = [0, 0, 1, 1, 2, 2]
    args = ([0, 3], [0, 2, 4], [0, 0], [], groups, [1.0, 0.0, 1.0, 0.0, 0.5, 0.0])
    near = backend.within_group_scan_columns(*args)
    far = backend.within_group_scan_columns(*args[:4], [g * BLOCK for g in groups], args[5])
    assert list(near[0]) == pytest.approx(list(far[0]))
    assert list(near[2]) == list(far[2]) == [6]


def test_partials_name_bad_arguments_like_the_scan(
    both_backends: tuple[ModuleType, ModuleType],
) -> None:
    for args in (
        ([0, 2], [0, 3], [0, 0], [], [0, 0, 1], [1.0, 0.0, 0.0, 1.0]),
        ([0, 2], [0, 3], [0, 0], [], [0, 0, 1, 1], [1.0, 0.0, 0.0, 1.0], -1),
        ([0, 2], [0, 3], [0, 0], [], [0, 0, 1, 1], [1.0, 0.0, 0.0, 1.0], 2, 1.5),
    ):
        errors = []
        for backend in both_backends:
            with pytest.raises((ValueError, TypeError)) as info:
                backend.within_group_scan_partials(*args)
            errors.append((info.type, str(info.value)))
        assert errors[0] == errors[1]


def test_a_block_given_twice_is_refused(backend: ModuleType) -> None:
    part = backend.within_group_scan_partials([0, 1], [0], [0, 0], [], [0, 0], [1.0, 0.0])
    with pytest.raises(ValueError, match="block 0 is given twice"):
        add_partials([part, part], 1, 0)


def _one_per_block(backend: ModuleType, n_perm: int) -> list[Any]:
    """Partials of three blocks, one call each (as three workers would send them)."""
    out = []
    for b, reward in enumerate(([1.0, 0.0], [0.25, 1.0], [0.0, 0.5])):
        ask = b * BLOCK
        out.append(backend.within_group_scan_partials([0, 1], [0], [0, 0], [], [ask, ask],
                                                      reward, n_perm, 7))
    return out


def test_partials_add_to_the_same_totals_in_any_arrival_order(backend: ModuleType) -> None:
    parts = _one_per_block(backend, 3)
    want = add_partials(parts, 1, 3)
    for order in ([0, 1, 2], [2, 1, 0], [1, 2, 0]):
        got = add_partials(iter([parts[k] for k in order]), 1, 3, expected=[0, 1, 2])
        assert got == want
    held_back = add_partials(iter([parts[2], parts[0]]), 1, 3, expected=[0, 1, 2])
    assert held_back == add_partials([parts[0], parts[2]], 1, 3)  # block 1 never came
    with pytest.raises(ValueError, match="block 2 is not one of the expected blocks"):
        add_partials(parts, 1, 3, expected=[0, 1])


def test_partials_arriving_in_block_order_are_added_at_once(backend: ModuleType) -> None:
    parts = _one_per_block(backend, 3)
    want = add_partials(parts, 1, 3)

    def arriving() -> Any:
        for part in parts:
            yield part
            for column in part[1:]:  # spoil what was sent: only a part still held would show it
                for i in range(len(column)):
                    column[i] = 99
    assert add_partials(arriving(), 1, 3, expected=[0, 1, 2]) == want
