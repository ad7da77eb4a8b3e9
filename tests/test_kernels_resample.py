"""The resampling kernel on both backends: bit-identical floats, identical errors, sane values."""

from __future__ import annotations

import math
import statistics
from array import array
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from _kernel_helpers import backend_settings, bits, golden, golden_params, same

GOLDEN = golden("resample")["cases"]
SETTINGS = backend_settings(150)
finite = st.floats(allow_nan=False, allow_infinity=False, width=64)
values_st = st.lists(st.one_of(finite, st.integers(-(10**6), 10**6)), max_size=40)
seeds = st.one_of(st.integers(-(2**70), 2**70), st.sampled_from([0, 2**64 - 1, -1]))
bad = st.one_of(st.floats(), st.booleans(), st.none(), st.text(max_size=2))


def same_bits(both: tuple[ModuleType, ModuleType], name: str, *args: Any) -> None:
    """The same floats bit for bit (-0.0 and 0.0 differ), or the same error."""
    same(both, name, *args, keep=array.tobytes)


@SETTINGS
@given(values=values_st, count=st.integers(0, 30), seed=seeds)
def test_bootstrap_means_match(
    both_backends: tuple[ModuleType, ModuleType], values: list[float], count: int, seed: int
) -> None:
    same_bits(both_backends, "bootstrap_means", values, count, seed)
    same_bits(both_backends, "sign_flip_means", values, count, seed)


@SETTINGS
@given(a=values_st, b=values_st, count=st.integers(0, 20), seed=seeds)
def test_bootstrap_mean_diff_matches(
    both_backends: tuple[ModuleType, ModuleType],
    a: list[float],
    b: list[float],
    count: int,
    seed: int,
) -> None:
    same_bits(both_backends, "bootstrap_mean_diff", a, b, count, seed)
    same_bits(both_backends, "bootstrap_mean_diff", array("d", a), array("d", b), count, seed)


@SETTINGS
@given(
    values=st.lists(st.one_of(st.floats(), st.text(max_size=1)), max_size=5),
    count=st.one_of(st.integers(-3, 3), bad),
    seed=st.one_of(seeds, bad),
)
def test_bad_input_raises_the_same_error(
    both_backends: tuple[ModuleType, ModuleType], values: list[Any], count: Any, seed: Any
) -> None:
    same_bits(both_backends, "bootstrap_means", values, count, seed)
    same_bits(both_backends, "sign_flip_means", values, count, seed)
    same_bits(both_backends, "bootstrap_mean_diff", values, [1.0], count, seed)
    same_bits(both_backends, "bootstrap_mean_diff", [1.0], values, count, seed)


def test_errors_name_what_and_where(backend: ModuleType) -> None:
    with pytest.raises(ValueError, match=r"values\[1\] is not finite \(nan\)"):
        backend.bootstrap_means([1.0, math.nan], 3, 0)
    with pytest.raises(ValueError, match="values is empty"):
        backend.bootstrap_means([], 3, 0)
    with pytest.raises(ValueError, match="diffs is empty"):
        backend.sign_flip_means([], 3, 0)
    with pytest.raises(ValueError, match="must both be non-empty"):
        backend.bootstrap_mean_diff([1.0], [], 3, 0)
    with pytest.raises(TypeError, match="seed must be an int, got float"):
        backend.bootstrap_means([1.0], 3, math.nan)
    with pytest.raises(ValueError, match="n_resamples must be at least 0, got -1"):
        backend.bootstrap_means([1.0], -1, 0)


def test_bootstrap_mean_centres_on_the_sample_mean(backend: ModuleType) -> None:
    data = [float(x % 7) for x in range(50)]
    means = backend.bootstrap_means(data, 2000, 3)
    # The bootstrap distribution of the mean centres on the sample mean with sd ~ s/sqrt(n).
    sd = statistics.pstdev(data) / math.sqrt(len(data))
    assert abs(statistics.fmean(means) - statistics.fmean(data)) < 0.2 * sd
    assert 0.8 * sd < statistics.pstdev(means) < 1.2 * sd


def test_sign_flips_are_symmetric_and_keep_the_magnitude(backend: ModuleType) -> None:
    flips = backend.sign_flip_means([1.0, 1.0, 1.0], 400, 5)
    assert set(flips) <= {1.0, 1 / 3, -1 / 3, -1.0}
    assert 0.35 < sum(1 for m in flips if m > 0) / len(flips) < 0.65


def test_replicate_r_does_not_depend_on_the_count(backend: ModuleType) -> None:
    few = backend.bootstrap_mean_diff([1.0, 4.0], [2.0, 9.0, 3.0], 3, 8)
    many = backend.bootstrap_mean_diff([1.0, 4.0], [2.0, 9.0, 3.0], 50, 8)
    assert list(few) == list(many[:3])


def test_golden_file_holds_every_case() -> None:
    assert len(GOLDEN) >= 10


@pytest.mark.parametrize("case", golden_params(GOLDEN, lambda c: c["kernel"]))
def test_golden_vectors(backend: ModuleType, case: dict[str, Any]) -> None:
    got = getattr(backend, case["kernel"])(*case["args"])
    assert bits(got) == case["bits"], case["kernel"]
