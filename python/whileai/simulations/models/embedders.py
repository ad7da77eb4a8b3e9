"""Text embedders for prompt selection and near-copy checks: the built-in hash embedder or yours.

``resolve_embedder("hash")`` gives the deterministic ``hash-v2`` embedder (word unigrams and
adjacent bigrams hashed into ``dim`` buckets, L2-normalised; docs/kernels.md). Its ``name``
records the algorithm version and the dim (``"hash-v2:256"``), so stored vectors say what made
them, and resolving that name again gives the same embedder. A callable ``texts -> vectors`` is
accepted too and wrapped with a shape check.

>>> embedder = resolve_embedder("hash", dim=8)
>>> embedder.name
'hash-v2:8'
>>> vectors = embedder.embed(["order 4412 shipped", ""])
>>> vectors.shape, vectors.rows()[1] == [0.0] * 8
((2, 8), True)
>>> counts = embedder.counts(["the cat sat", "the cat sat", ""])
>>> same, empty = counts.row(0), counts.row(2)
>>> cosine_from_counts(same, counts.row(1)), cosine_from_counts(same, empty)
(1.0, 0.0)
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from whileai import _backend
from whileai.errors import ConfigError

__all__ = [
    "EMBEDDER_SPECS",
    "HASH_VERSION",
    "CallableEmbedder",
    "Counts",
    "Embedder",
    "Embedding",
    "HashEmbedder",
    "cosine_from_counts",
    "resolve_embedder",
]

HASH_VERSION = "hash-v2"
DEFAULT_DIM = 256
EMBEDDER_SPECS = ("hash", HASH_VERSION, f"{HASH_VERSION}:<dim>", "a callable texts -> vectors")


@dataclass(frozen=True, slots=True, kw_only=True)
class Embedding:
    """Row-major float64 vectors: ``data`` holds ``shape[0] * shape[1]`` values."""

    name: str
    data: array[float]
    shape: tuple[int, int]

    def row(self, i: int) -> list[float]:
        """Return vector ``i`` as a list."""
        n, dim = self.shape
        if not -n <= i < n:
            raise IndexError(f"row {i} is out of range for {n} vectors")
        start = (i % n) * dim
        return self.data[start : start + dim].tolist()

    def rows(self) -> list[list[float]]:
        """Return every vector as a list of floats."""
        dim = self.shape[1]
        return [self.data[s : s + dim].tolist() for s in range(0, len(self.data), dim)]


@dataclass(frozen=True, slots=True, kw_only=True)
class Counts:
    """Row-major integer bucket counts of the hash embedder: ``shape[0] * shape[1]`` values."""

    name: str
    data: array[int]
    shape: tuple[int, int]

    def row(self, i: int) -> list[int]:
        """Return the counts of text ``i`` as a list."""
        n, dim = self.shape
        if not -n <= i < n:
            raise IndexError(f"row {i} is out of range for {n} texts")
        start = (i % n) * dim
        return self.data[start : start + dim].tolist()

    def rows(self) -> list[list[int]]:
        """Return the counts of every text as lists of ints."""
        dim = self.shape[1]
        return [self.data[s : s + dim].tolist() for s in range(0, len(self.data), dim)]


@dataclass(frozen=True, slots=True, kw_only=True)
class HashEmbedder:
    """The deterministic ``hash-v2`` embedder with ``dim`` buckets (the same in both backends)."""

    dim: int = DEFAULT_DIM

    @property
    def name(self) -> str:
        """The versioned name stored beside the vectors, e.g. ``"hash-v2:256"``."""
        return f"{HASH_VERSION}:{self.dim}"

    def embed(self, texts: Iterable[str]) -> Embedding:
        """Return the L2-normalised vectors of ``texts`` (an empty text gives the zero vector)."""
        items = list(texts)
        data = _backend.embed(items, self.dim)
        return Embedding(name=self.name, data=data, shape=(len(items), self.dim))

    def counts(self, texts: Iterable[str]) -> Counts:
        """Return the integer bucket counts of ``texts`` (the input of exact cosines)."""
        items = list(texts)
        data = _backend.embed_counts(items, self.dim)
        return Counts(name=self.name, data=data, shape=(len(items), self.dim))

    def __call__(self, texts: Iterable[str]) -> list[list[float]]:
        """Return the vectors as lists, so the embedder fits wherever a callable one does."""
        return self.embed(texts).rows()


@dataclass(frozen=True, slots=True, kw_only=True)
class CallableEmbedder:
    """A user function ``texts -> vectors``, checked for one finite vector per text."""

    fn: Callable[[list[str]], Any]
    name: str

    def embed(self, texts: Iterable[str]) -> Embedding:
        """Call the function and check its output: one equal-length finite vector per text."""
        items = list(texts)
        vectors = list(self.fn(items))
        if len(vectors) != len(items):
            raise ConfigError(
                f"embedder {self.name!r} returned {len(vectors)} vectors for {len(items)} texts; "
                "it must return one vector per text, in order"
            )
        dim = len(vectors[0]) if vectors else 0
        data = array("d")
        for i, vector in enumerate(vectors):
            values = [float(x) for x in vector]
            if len(values) != dim:
                raise ConfigError(
                    f"embedder {self.name!r} returned vectors of lengths {dim} and "
                    f"{len(values)} (text {i}); every vector must have the same length"
                )
            if not all(math.isfinite(x) for x in values):
                raise ConfigError(
                    f"embedder {self.name!r} returned a non-finite value for text {i}; "
                    "return finite floats (the zero vector for an empty text)"
                )
            data.extend(values)
        return Embedding(name=self.name, data=data, shape=(len(items), dim))

    def __call__(self, texts: Iterable[str]) -> list[list[float]]:
        """Return the checked vectors as lists."""
        return self.embed(texts).rows()


Embedder = HashEmbedder | CallableEmbedder


def _check_dim(dim: object, where: str) -> int:
    if isinstance(dim, bool) or not isinstance(dim, int) or dim < 1:
        raise ConfigError(f"{where}: dim must be an int of at least 1, got {dim!r}")
    return dim


def resolve_embedder(spec: object = "hash", *, dim: int = DEFAULT_DIM) -> Embedder:
    """Turn an embedder setting into an embedder.

    Args:
        spec: ``"hash"`` or ``"hash-v2"`` (the built-in embedder with ``dim`` buckets), a stored
            name such as ``"hash-v2:512"`` (its own dim wins), an embedder object (returned as
            is), or a callable ``texts -> vectors``.
        dim: the number of hash buckets, an int >= 1.

    Raises:
        ConfigError: an unknown spec (the message lists the accepted ones) or a bad dim.

    >>> resolve_embedder("hash-v2:64").dim
    64
    >>> resolve_embedder(lambda texts: [[1.0, 0.0] for _ in texts]).embed(["a"]).shape
    (1, 2)
    """
    if isinstance(spec, HashEmbedder | CallableEmbedder):
        return spec
    if isinstance(spec, str):
        key = spec.strip().lower()
        if key in ("hash", HASH_VERSION):
            return HashEmbedder(dim=_check_dim(dim, f"resolve_embedder({spec!r})"))
        prefix = f"{HASH_VERSION}:"
        if key.startswith(prefix) and key[len(prefix) :].isdigit():
            return HashEmbedder(dim=_check_dim(int(key[len(prefix) :]), f"embedder {spec!r}"))
    elif callable(spec):
        name = getattr(spec, "__qualname__", None) or type(spec).__name__
        return CallableEmbedder(fn=spec, name=f"callable:{name}")
    accepted = ", ".join(EMBEDDER_SPECS)
    raise ConfigError(f"unknown embedder {spec!r}: use one of {accepted}")


def cosine_from_counts(a: Sequence[int], b: Sequence[int]) -> float:
    """Cosine similarity of two rows of hash counts, exactly as both backends compute it.

    The dot product and squared norms are exact integers; then one multiplication, one
    ``sqrt`` and one division in floating point. A zero row gives 0.0.

    >>> cosine_from_counts([1, 2, 0], [2, 4, 0])
    1.0
    >>> cosine_from_counts([0, 0], [1, 1])
    0.0
    """
    if len(a) != len(b):
        raise ValueError(f"count rows differ in length ({len(a)} and {len(b)}); use one dim")
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm_a = sum(x * x for x in a)
    norm_b = sum(y * y for y in b)
    if norm_a == 0 or norm_b == 0:
        return 0.0
    return dot / math.sqrt(float(norm_a * norm_b))
