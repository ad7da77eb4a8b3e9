"""Differential property tests: the Rust kernels equal the pure-Python reference exactly."""

from __future__ import annotations

from types import ModuleType
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from _kernel_helpers import backend_settings, same

SETTINGS = backend_settings(200)

huge_ints = st.one_of(
    st.integers(min_value=-(2**64), max_value=2**64),
    st.integers(min_value=-(2**200), max_value=2**200),
    st.sampled_from([0, 1, -1, 2**63, 2**63 - 1, 2**64 - 1, 2**64, -(2**63)]),
)
bad_scalars = st.one_of(
    st.floats(allow_nan=True),
    st.booleans(),
    st.none(),
    st.text(max_size=3),
    st.just([1]),
)
# Words from several scripts, digits and separators, so that texts have real structure.
pieces = st.sampled_from(
    ["order", "Σίσυφος", "注文", "Ёлка", "4412", "٣٤", "café", "🎉", " ", ", ", "\n", "x1", "ß"]
)
# What the normaliser and the confusable fold act on: ignorables, marks (in and out of canonical
# order), compatibility forms, Hangul jamo, Cyrillic and Greek lookalikes in either case.
evasion_pieces = st.sampled_from(
    ["\u200b", "\u00ad", "\u200d", "\ufe0f", "\ufeff", "e\u0301", "\u0301", "\u0323", "\u0302",
     "\uff4f\uff52", "\ufb01", "\u00bd", "\u00b2", "\u00a0", "\u1100", "\u1161", "\u11a8",
     "\uac00", "\u0b47", "\u0b3e", "\u043e", "\u041e", "\u0441", "\u03bd", "\u039d", "\u03c3",
     "\u0434", "ord", "er", "ǅ", "\u212a", "\u0f73", "\u0344"]
)
structured_text = st.lists(st.one_of(pieces, evasion_pieces), max_size=30).map("".join)
any_text = st.one_of(st.text(), structured_text)


@SETTINGS
@given(seed=huge_ints, unit=huge_ints, count=st.integers(0, 50))
def test_streams_match(
    both_backends: tuple[ModuleType, ModuleType], seed: int, unit: int, count: int
) -> None:
    same(both_backends, "splitmix64_stream", seed, unit, count)
    same(both_backends, "uniform_floats", seed, unit, count)


@SETTINGS
@given(
    seed=huge_ints,
    unit=huge_ints,
    bound=st.one_of(st.integers(-3, 40), st.integers(2**62, 2**64 + 2), huge_ints),
    count=st.integers(-2, 40),
)
def test_bounded_ints_match(
    both_backends: tuple[ModuleType, ModuleType], seed: int, unit: int, bound: int, count: int
) -> None:
    same(both_backends, "bounded_ints", seed, unit, bound, count)


@SETTINGS
@given(
    seed=st.one_of(huge_ints, bad_scalars),
    unit=st.one_of(huge_ints, bad_scalars),
    bound=st.one_of(st.integers(-2, 5), bad_scalars),
    count=st.one_of(st.integers(-2, 5), bad_scalars),
)
def test_argument_errors_match(
    both_backends: tuple[ModuleType, ModuleType], seed: Any, unit: Any, bound: Any, count: Any
) -> None:
    same(both_backends, "splitmix64_stream", seed, unit, count)
    same(both_backends, "uniform_floats", seed, unit, count)
    same(both_backends, "bounded_ints", seed, unit, bound, count)


@SETTINGS
@given(text=any_text, numbers=st.booleans())
def test_tokenize_and_hash_match(
    both_backends: tuple[ModuleType, ModuleType], text: str, numbers: bool
) -> None:
    same(both_backends, "tokenize", text, numbers)
    same(both_backends, "tokenize", text, numbers=numbers)
    same(both_backends, "hash64", text)


@SETTINGS
@given(
    text=st.text(
        alphabet=st.one_of(
            st.characters(codec=None, categories=None),
            st.characters(categories=["Cs"]),  # lone surrogates, rare in the line above
        ),
        max_size=20,
    )
)
def test_full_range_text_including_surrogates_matches(
    both_backends: tuple[ModuleType, ModuleType], text: str
) -> None:
    same(both_backends, "tokenize", text, True)
    same(both_backends, "hash64", text)
    same(both_backends, "embed_counts", [text, "x " + text], 7)


@SETTINGS
@given(value=st.one_of(bad_scalars, st.binary(max_size=3), st.integers()))
def test_non_string_text_errors_match(
    both_backends: tuple[ModuleType, ModuleType], value: Any
) -> None:
    same(both_backends, "tokenize", value)
    same(both_backends, "hash64", value)


@SETTINGS
@given(texts=st.lists(any_text, max_size=12), dim=st.integers(1, 1000))
def test_embed_matches(
    both_backends: tuple[ModuleType, ModuleType], texts: list[str], dim: int
) -> None:
    native, pure = both_backends
    counts = native.embed_counts(texts, dim)
    assert counts == pure.embed_counts(texts, dim)
    assert native.embed(texts, dim) == pure.embed(texts, dim)
    assert len(counts) == len(texts) * dim


@SETTINGS
@given(
    texts=st.one_of(
        st.lists(st.one_of(any_text, bad_scalars, st.integers()), max_size=5),
        bad_scalars,
        st.text(max_size=3),
    ),
    dim=st.one_of(st.integers(-5, 40), bad_scalars),
)
def test_embed_errors_match(
    both_backends: tuple[ModuleType, ModuleType], texts: Any, dim: Any
) -> None:
    same(both_backends, "embed", texts, dim)
    same(both_backends, "embed_counts", texts, dim)
