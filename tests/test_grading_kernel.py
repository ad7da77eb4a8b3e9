"""The resampling kernel: definition (one stream per replicate), both backends, edge cases."""

from __future__ import annotations

import math
from array import array
from types import ModuleType

import pytest
from hypothesis import given
from hypothesis import strategies as st

from _kernel_helpers import backend_settings
from whileai._pure.rng import Stream
from whileai.simulations.measure.stats import percentile


def _reference_means(values: list[float], n_resamples: int, seed: int) -> list[float]:
    out = []
    for r in range(n_resamples):
        stream = Stream(seed, r)
        total = 0.0
        for _ in values:
            total += values[stream.below(len(values))]
        out.append(total / len(values))
    return out


def _reference_flips(diffs: list[float], n_perm: int, seed: int) -> list[float]:
    out = []
    for p in range(n_perm):
        stream = Stream(seed, p)
        total = 0.0
        for d in diffs:
            total += -d if stream.next() >> 63 else d
        out.append(total / len(diffs))
    return out


VALUES = [0.1, 0.7, 1.0, 0.0, 0.35, 0.5, 0.9]


def test_bootstrap_means_follow_the_documented_streams(backend: ModuleType) -> None:
    got = backend.bootstrap_means(array("d", VALUES), 40, 11)
    assert list(got) == _reference_means(VALUES, 40, 11)


def test_bootstrap_mean_diff_continues_one_stream(backend: ModuleType) -> None:
    a, b = [0.0, 1.0, 1.0], [1.0, 0.5, 0.25, 0.0]
    got = backend.bootstrap_mean_diff(a, b, 25, 5)
    expected = []
    for r in range(25):
        stream = Stream(5, r)
        sa = 0.0
        for _ in a:
            sa += a[stream.below(len(a))]
        sb = 0.0
        for _ in b:
            sb += b[stream.below(len(b))]
        expected.append(sb / len(b) - sa / len(a))
    assert list(got) == expected


def test_sign_flip_means_use_the_top_bit(backend: ModuleType) -> None:
    got = backend.sign_flip_means(VALUES, 30, 3)
    assert list(got) == _reference_flips(VALUES, 30, 3)
    # each permutation is a signed mean, so its magnitude is bounded by mean(|d|)
    assert all(abs(m) <= sum(VALUES) / len(VALUES) + 1e-12 for m in got)


def test_order_of_replicates_never_matters(backend: ModuleType) -> None:
    many = backend.bootstrap_means(VALUES, 50, 9)
    few = backend.bootstrap_means(VALUES, 10, 9)
    assert list(many[:10]) == list(few)


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda b: b.bootstrap_means([], 10, 0), ValueError),
        (lambda b: b.bootstrap_means([1.0, math.nan], 10, 0), ValueError),
        (lambda b: b.bootstrap_means([1.0], -1, 0), ValueError),
        (lambda b: b.bootstrap_means([1.0], 10, 1.5), TypeError),
        (lambda b: b.sign_flip_means([], 10, 0), ValueError),
        (lambda b: b.bootstrap_mean_diff([1.0], [], 10, 0), ValueError),
    ],
)
def test_bad_input_is_a_clear_error(backend: ModuleType, call: object, error: type) -> None:
    with pytest.raises(error):
        call(backend)  # type: ignore[operator]


def test_zero_resamples_give_an_empty_buffer(backend: ModuleType) -> None:
    assert len(backend.bootstrap_means([1.0, 2.0], 0, 0)) == 0


def test_percentile_rule_matches_numpy_linear() -> None:
    xs = [5.0, 1.0, 4.0, 2.0, 3.0]
    assert percentile(xs, 0.0) == 1.0
    assert percentile(xs, 1.0) == 5.0
    assert percentile(xs, 0.1) == pytest.approx(1.4)
    np = pytest.importorskip("numpy")
    for q in (0.025, 0.5, 0.975, 0.333):
        assert percentile(xs, q) == pytest.approx(float(np.quantile(xs, q)), abs=1e-15)


finite = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e300, max_value=1e300)


@backend_settings(60)
@given(
    values=st.lists(finite | st.sampled_from([0.0, 1.0, 0.5, -0.0]), min_size=1, max_size=40),
    other=st.lists(finite, min_size=1, max_size=10),
    n=st.integers(min_value=0, max_value=30),
    seed=st.integers(min_value=-(2**70), max_value=2**70),
)
def test_native_equals_pure(
    both_backends: tuple[ModuleType, ModuleType],
    values: list[float],
    other: list[float],
    n: int,
    seed: int,
) -> None:
    native, pure = both_backends
    for name, args in (
        ("bootstrap_means", (values, n, seed)),
        ("sign_flip_means", (values, n, seed)),
        ("bootstrap_mean_diff", (values, other, n, seed)),
    ):
        got, want = getattr(native, name)(*args), getattr(pure, name)(*args)
        assert [math.copysign(1, x) for x in got] == [math.copysign(1, x) for x in want]
        assert list(got) == list(want), name
