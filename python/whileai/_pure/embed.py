"""The hash embedder ``hash-v2``: unigram and bigram counts hashed into ``dim`` buckets.

>>> vectors = embed(["order 4412 shipped", ""], 8)
>>> len(vectors), sum(vectors[8:])
(16, 0.0)
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable

from whileai._pure.hash import hash64, pair64
from whileai._pure.tokenize import check_texts, tokenize

__all__ = ["EMBEDDER_NAME", "check_dim", "embed", "embed_counts"]

EMBEDDER_NAME = "hash-v2"


def check_dim(dim: object) -> int:
    """Return ``dim`` if it is an int >= 1, else raise the error both backends raise."""
    if isinstance(dim, bool) or not isinstance(dim, int):
        raise TypeError(f"dim must be an int, got {type(dim).__name__}")
    if dim < 1:
        raise ValueError(f"dim must be at least 1, got {dim}")
    return dim


def embed_counts(texts: Iterable[str], dim: int = 256) -> array[int]:
    """Return the integer bucket counts of every text, row-major (``len(texts) * dim``)."""
    items = check_texts(texts)
    dim = check_dim(dim)
    counts = array("q", bytes(8 * dim * len(items)))
    cache: dict[str, int] = {}
    for row, text in enumerate(items):
        base = row * dim
        previous: int | None = None
        for token in tokenize(text, numbers=True):
            h = cache.get(token)
            if h is None:
                h = cache[token] = hash64(token)
            counts[base + h % dim] += 1
            if previous is not None:
                counts[base + pair64(previous, h) % dim] += 1
            previous = h
    return counts


def embed(texts: Iterable[str], dim: int = 256) -> array[float]:
    """Return the L2-normalised float64 embeddings of every text, row-major."""
    counts = embed_counts(texts, dim)  # checks texts, then dim (the order both backends keep)
    dim = check_dim(dim)
    out = array("d", bytes(8 * len(counts)))
    for base in range(0, len(counts), dim):
        row = counts[base : base + dim]
        norm_sq = sum(c * c for c in row)
        if norm_sq:
            norm = math.sqrt(float(norm_sq))
            for i, c in enumerate(row):
                if c:
                    out[base + i] = c / norm
    return out
