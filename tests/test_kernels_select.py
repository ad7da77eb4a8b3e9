"""Diversity selection on both backends: identical picks (ties, noise, anchors) and errors."""

from __future__ import annotations

from array import array
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from _kernel_helpers import backend_settings, golden, golden_params, same

GOLDEN = golden("select")["cases"]
SETTINGS = backend_settings(200)


@st.composite
def problems(draw: st.DrawFn) -> tuple[Any, ...]:
    """Small count matrices with many exact ties and zero rows."""
    dim = draw(st.integers(1, 6))
    n = draw(st.integers(0, 12))
    counts = draw(st.lists(st.integers(-2, 3), min_size=n * dim, max_size=n * dim))
    k = draw(st.integers(0, n + 2))
    seed = draw(st.integers(-(2**70), 2**70))
    noise = draw(st.sampled_from([0.0, -0.0, 0.05, 1.0, 1e-12]))
    selected = draw(st.one_of(st.none(), st.lists(st.integers(0, max(n - 1, 0)), max_size=3)))
    if n == 0:
        selected = None
    return array("q", counts), dim, k, seed, noise, selected


@SETTINGS
@given(problem=problems())
def test_picks_match(
    both_backends: tuple[ModuleType, ModuleType], problem: tuple[Any, ...]
) -> None:
    same(both_backends, "select_diverse", *problem)


@SETTINGS
@given(
    problem=problems(),
    which=st.integers(1, 5),
    junk=st.sampled_from([-1, 0, 10**30, 2.5, float("nan"), float("inf"), True, None, "x"]),
)
def test_bad_arguments_raise_the_same_error(
    both_backends: tuple[ModuleType, ModuleType], problem: tuple[Any, ...], which: int, junk: Any
) -> None:
    args = list(problem)
    if which == 1 and junk == 10**30:
        junk = 4099  # the pure reference allocates one column list per bucket, even for no rows
    args[which] = [junk] if which == 5 else junk
    same(both_backends, "select_diverse", *args)


def test_embedded_texts_pick_the_odd_ones_out(backend: ModuleType) -> None:
    texts = ["refund my order", "refund my order please", "where is my parcel", "reset password"]
    counts = backend.embed_counts(texts, 64)
    picks = backend.select_diverse(counts, 64, 3, 0)
    assert picks[0] == 0  # all distances start equal: the lowest index wins
    assert 1 not in picks  # the near-duplicate of the first pick is never preferred
    # "reset password" shares no word with the anchors; "where is my parcel" shares "my".
    assert backend.select_diverse(counts, 64, 2, 0, 0.0, [0, 1]) == [3, 2]


def test_errors_say_what_is_wrong(backend: ModuleType) -> None:
    counts = array("q", [1, 0, 0, 1])
    with pytest.raises(ValueError, match="not a multiple of dim=3"):
        backend.select_diverse(counts, 3, 1, 0)
    with pytest.raises(ValueError, match=r"selected\[1\] = 7 is out of range for 2 candidates"):
        backend.select_diverse(counts, 2, 1, 0, 0.0, [0, 7])
    with pytest.raises(ValueError, match="noise must be a finite number >= 0, got nan"):
        backend.select_diverse(counts, 2, 1, 0, float("nan"))
    with pytest.raises(TypeError, match="k must be an int, got float"):
        backend.select_diverse(counts, 2, 1.0, 0)


def test_golden_file_holds_every_case() -> None:
    assert len(GOLDEN) == 3


@pytest.mark.parametrize("case", golden_params(GOLDEN, lambda c: f"k{c['args'][2]}"))
def test_golden_vectors(backend: ModuleType, case: dict[str, Any]) -> None:
    assert backend.select_diverse(*case["args"]) == case["picks"]


def test_small_arrays_read_in_place_pick_as_copied_inputs_do(
    both_backends: tuple[ModuleType, ModuleType],
) -> None:
    """Native reads a small array('q') in place and copies lists and large arrays; same picks."""
    native, pure = both_backends
    import random

    rng = random.Random(7)
    for n, dim in ((40, 16), (300, 256)):  # 640 values (in place) and 76,800 (copied)
        counts = array("q", (rng.choice((0, 0, 0, 1, 2)) for _ in range(n * dim)))
        args = (dim, 12, 3, 0.02, [0, 5])
        expected = pure.select_diverse(counts, *args)
        assert native.select_diverse(counts, *args) == expected
        assert native.select_diverse(list(counts), *args) == expected


def test_an_array_changed_while_it_is_read_is_refused(
    both_backends: tuple[ModuleType, ModuleType],
) -> None:
    native, _ = both_backends
    counts = array("q", [1, 0, 0, 1])

    def selected() -> Any:
        counts.extend([1, 1])  # runs while the native side checks `selected`
        yield 0

    with pytest.raises(ValueError, match="counts changed"):
        native.select_diverse(counts, 2, 1, 0, 0.0, selected())
