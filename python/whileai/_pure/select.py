"""Diversity selection: greedy farthest-point choice over hash-embedding counts (docs/kernels.md).

Cosine similarity comes from exact integer dot products and squared norms, so the result is the
same in every backend. Each candidate's noise is the first float of its own stream
``Stream(seed, index)``, so the answer does not depend on evaluation order.

>>> from array import array
>>> counts = array("q", [1, 0, 0,  1, 0, 0,  0, 1, 0,  0, 0, 1])
>>> select_diverse(counts, 3, 3, 0)
[0, 2, 3]
>>> select_diverse(counts, 3, 1, 0, 0.0, [0])
[2]
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from whileai._pure.embed import check_dim
from whileai._pure.rng import Stream, check_seed

__all__ = ["select_diverse"]


def _check_int(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be an int, got {type(value).__name__}")
    return value


def select_diverse(
    counts: Sequence[int],
    dim: int,
    k: int,
    seed: int,
    noise: float = 0.0,
    selected: Sequence[int] | None = None,
) -> list[int]:
    """Pick up to ``k`` candidates, each the farthest (cosine) from everything chosen so far.

    Args:
        counts: integer bucket counts, row-major, ``n * dim`` (``embed_counts``).
        dim: buckets per row.
        k: how many to pick; fewer come back when fewer candidates remain.
        seed: noise stream seed (candidate ``i`` uses ``Stream(seed, i)``).
        noise: scale of the uniform noise added to each candidate's score (>= 0).
        selected: indices already chosen: they repel, and are never returned.

    Returns:
        Candidate indices in the order they were picked.

    Raises:
        ValueError: bad ``dim``/``k``/``noise``, a ragged buffer, or an out-of-range index.
        TypeError: ``seed``, ``k`` or an index is not an int.
    """
    dim = check_dim(dim)
    k = _check_int(k, "k")
    seed = check_seed(seed)
    if k < 0:
        raise ValueError(f"k must be at least 0, got {k}")
    noise = float(noise)
    if not noise >= 0.0 or math.isinf(noise):
        raise ValueError(f"noise must be a finite number >= 0, got {noise}")
    if len(counts) % dim:
        raise ValueError(f"counts has {len(counts)} values, not a multiple of dim={dim}")
    n = len(counts) // dim
    chosen = [False] * n
    anchors: list[int] = []
    for pos, index in enumerate(selected or ()):
        index = _check_int(index, f"selected[{pos}]")
        if not 0 <= index < n:
            raise ValueError(f"selected[{pos}] = {index} is out of range for {n} candidates")
        if not chosen[index]:
            chosen[index] = True
            anchors.append(index)
    # Sparse rows and columns: exact integers, so every dot equals the dense one.
    rows: list[list[tuple[int, int]]] = []
    norms: list[int] = []
    # Only buckets some row uses get a column: memory follows the data, not dim.
    columns: dict[int, list[tuple[int, int]]] = {}
    for i in range(n):
        base = i * dim
        row = [(b, c) for b, c in enumerate(counts[base : base + dim]) if c]
        rows.append(row)
        norms.append(sum(c * c for _, c in row))
        for b, c in row:
            columns.setdefault(b, []).append((i, c))
    jitter = [Stream(seed, i).uniform() * noise if noise else 0.0 for i in range(n)]
    nearest = [1.0] * n  # distance to the nearest chosen row; 1.0 = nothing chosen yet

    def absorb(pick: int) -> None:
        pnorm = norms[pick]
        dots = [0] * n
        for b, c in rows[pick]:
            for j, cj in columns[b]:
                dots[j] += c * cj
        for j in range(n):
            if chosen[j]:
                continue
            if pnorm == 0 or norms[j] == 0:
                distance = 1.0
            else:
                distance = 1.0 - dots[j] / math.sqrt(float(pnorm * norms[j]))
            if distance < nearest[j]:
                nearest[j] = distance

    for anchor in anchors:
        absorb(anchor)
    picks: list[int] = []
    while len(picks) < k:
        best, best_score = -1, -math.inf
        for j in range(n):
            if not chosen[j]:
                score = nearest[j] + jitter[j]
                if score > best_score:
                    best, best_score = j, score
        if best < 0:
            break
        chosen[best] = True
        picks.append(best)
        absorb(best)
    return picks
