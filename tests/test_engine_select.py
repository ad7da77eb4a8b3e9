"""The diversity kernel (both backends), novelty, and the near-duplicate measure."""

from __future__ import annotations

import math
import random
from array import array
from types import ModuleType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from whileai._pure.rng import Stream
from whileai.simulations.generate.diversity import (
    near_duplicate_share,
    novelty,
    pick_per_group,
)


def oracle(counts: list[int], dim: int, k: int, seed: int, noise: float,
           selected: list[int]) -> list[int]:
    """Textbook greedy farthest-point selection, dense, straight from docs/kernels.md."""
    n = len(counts) // dim
    rows = [counts[i * dim:(i + 1) * dim] for i in range(n)]

    def dist(a: int, b: int) -> float:
        na = sum(x * x for x in rows[a])
        nb = sum(x * x for x in rows[b])
        if na == 0 or nb == 0:
            return 1.0
        dot = sum(x * y for x, y in zip(rows[a], rows[b], strict=True))
        return 1.0 - dot / math.sqrt(float(na * nb))

    chosen = list(dict.fromkeys(selected))
    jitter = [Stream(seed, i).uniform() * noise if noise else 0.0 for i in range(n)]
    picks: list[int] = []
    while len(picks) < k:
        best, best_score = -1, -math.inf
        for j in range(n):
            if j in chosen:
                continue
            near = min([dist(j, c) for c in chosen] + [1.0])
            if near + jitter[j] > best_score:
                best, best_score = j, near + jitter[j]
        if best < 0:
            break
        chosen.append(best)
        picks.append(best)
    return picks


def test_picks_farthest_first_and_ties_go_to_the_lowest_index(backend: ModuleType) -> None:
    counts = array("q", [1, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1])
    assert backend.select_diverse(counts, 3, 3, 0) == [0, 2, 3]
    assert backend.select_diverse(counts, 3, 1, 0, 0.0, [0]) == [2]
    assert backend.select_diverse(counts, 3, 9, 0) == [0, 2, 3, 1]  # k clipped to what is left
    assert backend.select_diverse(counts, 3, 0, 0) == []


def test_zero_vectors_are_maximally_far(backend: ModuleType) -> None:
    counts = array("q", [2, 1, 0, 0, 2, 1])
    assert backend.select_diverse(counts, 2, 2, 0, 0.0, [0]) == [1, 2][:2]


def test_noise_is_seeded_per_candidate(backend: ModuleType) -> None:
    rnd = random.Random(5)
    counts = array("q", [rnd.randrange(3) for _ in range(40 * 16)])
    a = backend.select_diverse(counts, 16, 10, 7, 0.5)
    assert a == backend.select_diverse(counts, 16, 10, 7, 0.5)
    assert a != backend.select_diverse(counts, 16, 10, 8, 0.5)


@settings(deadline=None, max_examples=60)
@given(
    n=st.integers(0, 12),
    dim=st.integers(1, 6),
    k=st.integers(0, 14),
    seed=st.integers(-(2**63), 2**64 - 1),
    noise=st.sampled_from([0.0, 0.01, 0.3, 2.0]),
    data=st.data(),
)
def test_matches_the_textbook_oracle(n: int, dim: int, k: int, seed: int, noise: float,
                                     data: st.DataObject) -> None:
    from whileai import _backend

    counts = data.draw(st.lists(st.integers(0, 3), min_size=n * dim, max_size=n * dim))
    selected = data.draw(st.lists(st.integers(0, max(n - 1, 0)), max_size=3)) if n else []
    got = _backend.select_diverse(array("q", counts), dim, k, seed, noise, selected)
    assert got == oracle(counts, dim, k, seed & (2**64 - 1), noise, selected)


def test_native_equals_pure(both_backends: tuple[ModuleType, ModuleType]) -> None:
    native, pure = both_backends
    rnd = random.Random(1)
    counts = array("q", [rnd.randrange(4) for _ in range(60 * 32)])
    for seed, noise in ((0, 0.0), (3, 0.02), (2**63, 1.0)):
        assert native.select_diverse(counts, 32, 20, seed, noise, [1, 5]) == \
            pure.select_diverse(counts, 32, 20, seed, noise, [1, 5])


def test_errors_name_the_problem(backend: ModuleType) -> None:
    counts = array("q", [1, 0, 0, 1])
    with pytest.raises(ValueError, match="not a multiple of dim=3"):
        backend.select_diverse(counts, 3, 1, 0)
    with pytest.raises(ValueError, match="dim must be at least 1, got 0"):
        backend.select_diverse(counts, 0, 1, 0)
    with pytest.raises(ValueError, match="k must be at least 0, got -1"):
        backend.select_diverse(counts, 2, -1, 0)
    with pytest.raises(ValueError, match="noise must be a finite number"):
        backend.select_diverse(counts, 2, 1, 0, float("nan"))
    with pytest.raises(ValueError, match=r"selected\[0\] = 2 is out of range for 2 candidates"):
        backend.select_diverse(counts, 2, 1, 0, 0.0, [2])
    with pytest.raises(TypeError, match="seed must be an int, got float"):
        backend.select_diverse(counts, 2, 1, 0.5)


def test_pick_per_group_keeps_one_per_slot_and_fills_empty_slots() -> None:
    texts = ["cancel my order 12", "please cancel order 12 now", "where is my refund",
             "refund status please", "reset my password", "password reset link"]
    chosen, fills, kept = pick_per_group(texts, [0, 0, 1, 1, 2, 2], seed=0)
    assert len(chosen) == 3
    assert [i // 2 for i in chosen] == [0, 1, 2]
    assert set(fills) <= {0, 1, 2}
    assert len(kept) == 3
    assert all(len(row) == 256 for row in kept)
    # an anchor identical to a candidate pushes the pick to the other wording
    chosen2, _, _ = pick_per_group(texts[:2], [0, 0], anchors=[texts[0]], seed=0)
    assert chosen2 == [1]


def test_a_slot_left_empty_gets_its_farthest_wording_in_a_later_round() -> None:
    texts = ["reset my password now", "track my parcel please",
             "cancel my order", "cancel my order today"]
    chosen, later, _ = pick_per_group(texts, [0, 0, 1, 1], anchors=["cancel my order"],
                                      seed=0, noise=0.0)
    assert later == [1]  # round one spent both picks on slot 0
    assert chosen[1] == 3  # not the copy of the anchor


def test_novelty() -> None:
    assert novelty("cancel my order", []) == 1.0
    assert novelty("cancel my order", ["cancel my order"]) == pytest.approx(0.0, abs=1e-12)
    far = novelty("reset my password please", ["cancel my order"])
    near = novelty("cancel my order today", ["cancel my order"])
    assert 0.0 < near < far <= 1.0
    assert novelty([1.0, 0.0], [[0.0, 2.0], [1.0, 1.0]]) == pytest.approx(1 - 1 / math.sqrt(2))


def test_near_duplicate_share_matches_brute_force() -> None:
    rnd = random.Random(3)
    words = [f"w{i}" for i in range(12)]
    texts = [" ".join(rnd.sample(words, rnd.randrange(1, 8))) for _ in range(120)]
    texts += texts[:5]

    def toks(t: str) -> set[str]:
        return set(t.split())

    flagged = set()
    for i in range(len(texts)):
        for j in range(i + 1, len(texts)):
            a, b = toks(texts[i]), toks(texts[j])
            if len(a & b) / len(a | b) >= 0.8:
                flagged |= {i, j}
    assert near_duplicate_share(texts) == len(flagged) / len(texts)
    assert near_duplicate_share([]) == 0.0
