"""Diversity: pick the most spread-out candidate asks, one per task slot; novelty; near-duplicates.

>>> chosen, fills, _ = pick_per_group(["cancel order 1", "cancel order 1 now",
...                                     "where is my refund"], [0, 0, 1], seed=0)
>>> chosen, fills
([1, 2], [])
>>> round(novelty("cancel my order", ["cancel my order"]), 6)
0.0
"""

from __future__ import annotations

import math
import re
from array import array
from collections import Counter
from collections.abc import Sequence
from operator import mul

from whileai import _backend

__all__ = ["DIM", "NOISE", "near_duplicate_share", "novelty", "pick_per_group"]

DIM = 256
_WORD = re.compile(r"\w+")
NOISE = 0.02  # a little seeded noise, so equal-looking candidates do not always resolve alike


def pick_per_group(
    texts: Sequence[str],
    groups: Sequence[int],
    *,
    anchors: Sequence[str] = (),
    anchor_counts: Sequence[Sequence[int]] = (),
    seed: int,
    noise: float = NOISE,
    dim: int = DIM,
) -> tuple[list[int], list[int], list[Sequence[int]]]:
    """Choose one candidate per group, farthest-first from the anchors and from each other.

    ``groups[i]`` is the task slot of ``texts[i]`` (0..g-1). Anchors (earlier asks) repel;
    pass them as texts or, cheaper, as their hash-embedding counts. Farthest-point selection
    runs over the candidates of the groups still empty, with everything chosen so far as
    anchors, round after round, keeping each group's first pick, until every group has one.

    Returns:
        (chosen candidate per group, the groups filled after the first round, the chosen
        candidates' counts, to pass back as ``anchor_counts``).
    """
    n_groups = max(groups, default=-1) + 1
    if not texts:
        return [], [], []
    fixed = array("q")
    for row in anchor_counts:
        fixed.extend(row)
    if anchors:
        fixed.extend(_backend.embed_counts(list(anchors), dim))
    counts = _backend.embed_counts(list(texts), dim)
    rows = [counts[i * dim : (i + 1) * dim] for i in range(len(texts))]
    chosen: list[int | None] = [None] * n_groups
    later: list[int] = []
    round_no = 0
    while any(c is None for c in chosen):
        open_groups = {g for g, c in enumerate(chosen) if c is None}
        candidates = [i for i, g in enumerate(groups) if g in open_groups]
        offset = len(fixed) // dim
        buffer = array("q", fixed)
        for i in candidates:
            buffer.extend(rows[i])
        picks = _backend.select_diverse(buffer, dim, len(open_groups),
                                        (seed + round_no) & ((1 << 64) - 1), noise,
                                        list(range(offset)))
        for pick in picks:
            index = candidates[pick - offset]
            g = groups[index]
            if chosen[g] is None:
                chosen[g] = index
                fixed.extend(rows[index])
                if round_no:
                    later.append(g)
        round_no += 1
    final = [c if c is not None else 0 for c in chosen]
    return final, sorted(later), [rows[i] for i in final]


def _is_counts(v: Sequence[float]) -> bool:
    return (isinstance(v, array) and v.typecode == "q") or all(isinstance(x, int) for x in v)


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    if _is_counts(a) and _is_counts(b):
        # Integer sums are exact in any order, so C-level map/sum gives the same value.
        na, nb = sum(map(mul, a, a)), sum(map(mul, b, b))
        if na == 0 or nb == 0:
            return 0.0
        return float(sum(map(mul, a, b))) / math.sqrt(float(na * nb))
    fa, fb = math.fsum(x * x for x in a), math.fsum(x * x for x in b)
    if fa == 0.0 or fb == 0.0:
        return 0.0
    return math.fsum(x * y for x, y in zip(a, b, strict=False)) / math.sqrt(fa * fb)


def novelty(
    vec: str | Sequence[float], tested: Sequence[str | Sequence[float]], *, dim: int = DIM
) -> float:
    """How new ``vec`` is against ``tested``: 1 - the highest cosine similarity (1.0 if none).

    Texts are embedded with the hash embedder (all in one call); vectors are used as given.

    >>> novelty([1.0, 0.0], [[0.0, 1.0]])
    1.0
    >>> round(novelty("where is my refund", ["where is my refund today", [0.0] * 256]), 2)
    0.1
    """
    if not tested:
        return 1.0
    items: list[str | Sequence[float]] = [vec, *tested]
    texts = {i: item for i, item in enumerate(items) if isinstance(item, str)}
    if texts:
        counts = _backend.embed_counts(texts.values(), dim)
        for k, i in enumerate(texts):
            items[i] = counts[k * dim : (k + 1) * dim]
    base = items[0]
    best = max(_cosine(base, item) for item in items[1:])  # type: ignore[arg-type]
    return max(0.0, 1.0 - best)


def near_duplicate_share(texts: Sequence[str], threshold: float = 0.8) -> float:
    """Share of texts that sit in at least one pair with token Jaccard >= ``threshold``.

    Tokens are lowercased runs of word characters. Exact, and fast on thousands of texts:
    texts are visited shortest first, and only pairs that share a token of their rarest-first
    prefix and whose sizes allow the threshold are compared (prefix and length filtering).

    >>> round(near_duplicate_share(["a b c d e", "a b c d e", "x y z"]), 4)
    0.6667
    """
    sets = [frozenset(_WORD.findall(t.lower())) for t in texts]
    freq = Counter(tok for s in sets for tok in s)
    order = sorted(range(len(sets)), key=lambda i: len(sets[i]))
    index: dict[str, list[int]] = {}
    start: dict[str, int] = {}
    flagged: set[int] = set()
    empty: list[int] = []
    for i in order:
        s = sets[i]
        if not s:  # two empty texts are identical
            if empty:
                flagged.update((i, *empty))
            empty.append(i)
            continue
        size = len(s)
        ordered = sorted(s, key=lambda tok: (freq[tok], tok))
        probe = size - math.ceil(threshold * size) + 1
        # texts already indexed are no longer than this one, so a shorter index prefix suffices
        indexed = size - math.ceil(2 * threshold / (1 + threshold) * size) + 1
        seen: set[int] = set()
        for position, tok in enumerate(ordered[:probe]):
            entries = index.setdefault(tok, [])
            first = start.get(tok, 0)
            while first < len(entries) and len(sets[entries[first]]) < threshold * size:
                first += 1  # shorter texts only get shorter relative to what comes next
            start[tok] = first
            for j in entries[first:]:
                if j in seen:
                    continue
                seen.add(j)
                other = sets[j]
                inter = len(s & other)
                if inter / (size + len(other) - inter) >= threshold:
                    flagged.update((i, j))
            if position < indexed:
                entries.append(i)
    return len(flagged) / len(texts) if texts else 0.0
