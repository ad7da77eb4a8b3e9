"""The hash embedder kernel (`hash-v2`) on both backends: golden vectors and its definition."""

from __future__ import annotations

import math
from array import array
from types import ModuleType
from typing import Any

import pytest

from _kernel_helpers import golden, golden_params

GOLDEN = golden("embed")


@pytest.mark.parametrize("case", golden_params(GOLDEN["cases"], lambda c: f"dim{c['dim']}"))
def test_golden_embeddings(backend: ModuleType, case: dict[str, Any]) -> None:
    assert GOLDEN["name"] == "hash-v2"
    texts = case.get("texts", GOLDEN["texts"])
    counts = backend.embed_counts(texts, case["dim"])
    vectors = backend.embed(texts, case["dim"])
    assert isinstance(counts, array)
    assert counts.typecode == "q"
    assert isinstance(vectors, array)
    assert vectors.typecode == "d"
    assert counts.tolist() == case["counts"]
    assert vectors.tolist() == case["vectors"]


def test_counts_are_unigrams_plus_adjacent_bigrams(backend: ModuleType) -> None:
    # With one bucket everything collides: 3 unigrams + 2 bigrams, then 1 unigram, then nothing.
    assert backend.embed_counts(["a b c", "a", ""], 1).tolist() == [5, 1, 0]


def test_rows_are_unit_length_and_empty_is_zero(backend: ModuleType) -> None:
    dim = 32
    vectors = backend.embed(["order 4412 shipped to Zürich", "", "注文"], dim)
    assert len(vectors) == 3 * dim
    assert math.isclose(sum(x * x for x in vectors[:dim]), 1.0, rel_tol=1e-12)
    assert all(x == 0.0 for x in vectors[dim : 2 * dim])
    assert math.isclose(sum(x * x for x in vectors[2 * dim :]), 1.0, rel_tol=1e-12)


def test_normalisation_is_count_over_sqrt_of_integer_norm(backend: ModuleType) -> None:
    texts = ["the cat sat on the mat", "a a a b"]
    dim = 16
    counts = backend.embed_counts(texts, dim)
    vectors = backend.embed(texts, dim)
    for row in range(len(texts)):
        block = counts[row * dim : (row + 1) * dim]
        norm = math.sqrt(float(sum(c * c for c in block)))
        assert vectors[row * dim : (row + 1) * dim].tolist() == [c / norm for c in block]


def test_digits_share_one_token_and_case_is_ignored(backend: ModuleType) -> None:
    assert backend.embed(["Order 1"], 64) == backend.embed(["order 998877"], 64)
    assert backend.embed(["Order A"], 64) != backend.embed(["order b"], 64)


def test_default_dim_is_256_and_empty_input_is_empty(backend: ModuleType) -> None:
    assert len(backend.embed(["x"])) == 256
    assert len(backend.embed_counts(("x", "y"))) == 512
    assert backend.embed([], 8).tolist() == []
    assert backend.embed_counts(iter([]), 8).tolist() == []


def test_texts_may_be_any_iterable_of_str(backend: ModuleType) -> None:
    assert backend.embed(iter(["a b", "c"]), 8) == backend.embed(["a b", "c"], 8)


@pytest.mark.parametrize(
    ("texts", "dim", "error", "message"),
    [
        (["ok", b"bytes"], 8, TypeError, "texts[1] must be str, got bytes"),
        ("a string", 8, TypeError, "texts must be a list of str, got str"),
        (None, 8, TypeError, "texts must be a list of str, got NoneType"),
        (["ok"], 0, ValueError, "dim must be at least 1, got 0"),
        (["ok"], -7, ValueError, "dim must be at least 1, got -7"),
        (["ok"], float("nan"), TypeError, "dim must be an int, got float"),
        (["ok"], True, TypeError, "dim must be an int, got bool"),
        (["ok"], None, TypeError, "dim must be an int, got NoneType"),
        ([], None, TypeError, "dim must be an int, got NoneType"),
        ([1], 0, TypeError, "texts[0] must be str, got int"),
    ],
)
def test_bad_input_same_error_on_both(
    backend: ModuleType, texts: object, dim: object, error: type[Exception], message: str
) -> None:
    for function in (backend.embed, backend.embed_counts):
        with pytest.raises(error) as info:
            function(texts, dim)
        assert type(info.value) is error
        assert str(info.value) == message
