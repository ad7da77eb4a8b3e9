"""The user-facing embedders (`resolve_embedder`) and the exact count cosine."""

from __future__ import annotations

import importlib
import math
from array import array

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from whileai import _backend
from whileai.errors import ConfigError
from whileai.simulations.models.embedders import (
    CallableEmbedder,
    HashEmbedder,
    cosine_from_counts,
    resolve_embedder,
)


def test_hash_embedder_name_records_version_and_dim() -> None:
    embedder = resolve_embedder("hash")
    assert isinstance(embedder, HashEmbedder)
    assert embedder.dim == 256
    assert embedder.name == "hash-v2:256"
    assert resolve_embedder("hash-v2", dim=64).name == "hash-v2:64"
    # A stored name resolves back to the embedder that made the vectors.
    assert resolve_embedder(resolve_embedder("hash", dim=37).name) == HashEmbedder(dim=37)


def test_one_version_name_for_the_embedder_and_both_kernels() -> None:
    from whileai.simulations.clean.leakage import leakage_report
    from whileai.simulations.models.embedders import HASH_VERSION

    pure = importlib.import_module("whileai._pure.embed")
    assert HASH_VERSION == "hash-v2" == pure.EMBEDDER_NAME
    if _backend.BACKEND == "rust":
        assert importlib.import_module("whileai._native").EMBEDDER_NAME == HASH_VERSION
    report = leakage_report([{"prompt": "a b c"}], [{"prompt": "x y z"}])
    assert report["embedder"] == HASH_VERSION


def test_embed_gives_flat_data_shape_and_rows() -> None:
    texts = ["Order 4412 shipped", "", "注文を確認"]
    vectors = HashEmbedder(dim=16).embed(texts)
    assert vectors.shape == (3, 16)
    assert isinstance(vectors.data, array)
    assert vectors.data == _backend.embed(texts, 16)
    rows = vectors.rows()
    assert len(rows) == 3
    assert rows[1] == [0.0] * 16
    assert vectors.row(-1) == rows[2]
    assert math.isclose(sum(x * x for x in rows[0]), 1.0)
    assert HashEmbedder(dim=16)(texts) == rows
    with pytest.raises(IndexError, match="row 3 is out of range for 3 vectors"):
        vectors.row(3)


def test_counts_and_empty_input() -> None:
    counts = HashEmbedder(dim=4).counts(["a b", ""])
    assert counts.shape == (2, 4)
    assert sum(counts.row(0)) == 3  # two unigrams and one bigram
    assert counts.row(1) == [0, 0, 0, 0]
    assert HashEmbedder(dim=4).embed([]).rows() == []


def test_embedders_are_frozen() -> None:
    embedder = HashEmbedder(dim=8)
    with pytest.raises(AttributeError):
        embedder.dim = 9  # type: ignore[misc]


@pytest.mark.parametrize(
    "spec", ["bert", "hash-v1", "hash-v1:64", "hash-v2:0", "hash-v2:x", 3, None]
)
def test_unknown_spec_lists_the_accepted_ones(spec: object) -> None:
    with pytest.raises(ConfigError) as info:
        resolve_embedder(spec)
    message = str(info.value)
    assert "'hash'" in message or "dim" in message
    if "dim" not in message:
        assert repr(spec) in message
        assert "callable" in message


@pytest.mark.parametrize("dim", [0, -1, 2.5, True])
def test_bad_dim_is_a_config_error(dim: object) -> None:
    with pytest.raises(ConfigError, match="dim must be an int of at least 1"):
        resolve_embedder("hash", dim=dim)  # type: ignore[arg-type]


def test_callable_embedder_is_wrapped_and_checked() -> None:
    def two_dims(texts: list[str]) -> list[list[float]]:
        return [[float(len(t)), 1.0] for t in texts]

    embedder = resolve_embedder(two_dims)
    assert isinstance(embedder, CallableEmbedder)
    assert embedder.name.startswith("callable:")
    assert embedder.embed(["ab", "c"]).rows() == [[2.0, 1.0], [1.0, 1.0]]
    assert resolve_embedder(embedder) is embedder

    with pytest.raises(ConfigError, match="returned 1 vectors for 2 texts"):
        resolve_embedder(lambda texts: [[1.0]]).embed(["a", "b"])
    with pytest.raises(ConfigError, match="same length"):
        resolve_embedder(lambda texts: [[1.0], [1.0, 2.0]]).embed(["a", "b"])
    with pytest.raises(ConfigError, match="non-finite"):
        resolve_embedder(lambda texts: [[math.nan]]).embed(["a"])


def test_cosine_from_counts_definition() -> None:
    assert cosine_from_counts([1, 2, 0], [2, 4, 0]) == 1.0
    assert cosine_from_counts([1, 0], [0, 1]) == 0.0
    assert cosine_from_counts([0, 0], [0, 0]) == 0.0
    assert cosine_from_counts([3, 4], [4, 3]) == 24 / math.sqrt(float(25 * 25))
    with pytest.raises(ValueError, match="differ in length"):
        cosine_from_counts([1], [1, 2])


@settings(deadline=None, max_examples=100)
@given(a=st.text(max_size=60), b=st.text(max_size=60), dim=st.integers(1, 300))
def test_cosine_is_symmetric_bounded_and_one_on_itself(a: str, b: str, dim: int) -> None:
    counts = HashEmbedder(dim=dim).counts([a, b])
    ra, rb = counts.row(0), counts.row(1)
    c = cosine_from_counts(ra, rb)
    assert c == cosine_from_counts(rb, ra)
    assert 0.0 <= c <= 1.0 + 1e-12
    if any(ra):
        assert math.isclose(cosine_from_counts(ra, ra), 1.0, rel_tol=1e-12)

