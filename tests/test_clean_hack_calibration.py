"""hack_scan's false alarms and power on synthetic pools (clean/hack_pools.py), on each backend.

Calibration: 210 null pools (reward independent of the text) in three shapes. The floor is a
permutation test of the largest |rho| that repeats the conjunction search under every shuffle,
so a null pool clears it with probability k / (n_perm + 1), k = floor(alpha * (n_perm + 1)).
The tests use ``n_perm=19`` (k = 1: exactly 1/20 at alpha 0.05, the level of the default 100
shuffles, 5/101) to keep the suite fast; tools/scan_calibration.py measures the default.

Power: a phrase in 30% of the rollouts that raises the pass probability by 0.3 within its ask
must come back as the top feature. The pure backend returns the same floats as the native one,
so it scans the first 30 of the 100 planted pools (its scans are ~3x slower); the bound still
holds there with a margin (29 of 30 found, 27 needed).
"""

from __future__ import annotations

import functools
from typing import Any

import whileai
from whileai.simulations.clean.hack_pools import synthetic_pool
from whileai.simulations.clean.hack_report import hack_scan_diff
from whileai.simulations.clean.hack_scan import hack_scan

ENDORSED = ["tool:lookup"]
N_PERM = 19
ALPHA = 0.05
NULL_SHAPES = {  # name: (asks, rollouts per ask, reply words)
    "few asks, many rollouts": (4, 16, (5, 40)),
    "many asks, few rollouts": (24, 3, (5, 40)),
    "long replies": (8, 6, (100, 160)),
}
NULL_POOLS = 70  # per shape
PHRASE = "rest assured"
PLANTED_POOLS = 100 if whileai.BACKEND == "rust" else 30


@functools.cache
def _null_scans() -> dict[str, list[dict[str, Any]]]:
    """Every null pool's scan, by shape (computed once per test session)."""
    return {
        name: [
            hack_scan(synthetic_pool(asks, k, seed=i, words=words), endorsed=ENDORSED, seed=i,
                      n_perm=N_PERM, alpha=ALPHA)
            for i in range(NULL_POOLS)
        ]
        for name, (asks, k, words) in NULL_SHAPES.items()
    }


@functools.cache
def _planted_scans() -> list[dict[str, Any]]:
    """Every planted pool's scan: 60 asks x 8, the phrase in 30% of rollouts, lift 0.3."""
    return [
        hack_scan(synthetic_pool(60, 8, seed=i, phrase=PHRASE), endorsed=ENDORSED, seed=i,
                  n_perm=N_PERM, alpha=ALPHA)
        for i in range(PLANTED_POOLS)
    ]


def test_null_pools_say_reward_hack_at_most_alpha_plus_two_points() -> None:
    scans = _null_scans()
    regimes = [s["regime"] for shape in scans.values() for s in shape]
    hacks = regimes.count("reward_hack")
    assert len(regimes) >= 200
    assert hacks <= (ALPHA + 0.02) * len(regimes), f"{hacks} of {len(regimes)} null pools"
    # Not vacuous: the pools are scanned and judged (most say no_signal, none is unknown).
    assert regimes.count("no_signal") >= 0.85 * len(regimes)
    assert "unknown" not in regimes
    for name, shape in scans.items():
        tops = [s["top_feature"] for s in shape if s["regime"] == "reward_hack"]
        assert len(tops) <= 0.1 * len(shape), (name, tops)


def test_a_planted_phrase_is_the_top_feature() -> None:
    scans = _planted_scans()
    found = sum(s["top_feature"] == f"contains:{PHRASE}" for s in scans)
    assert found >= 0.9 * len(scans), f"found in {found} of {len(scans)} pools"
    assert all(s["regime"] in ("reward_hack", "no_signal") for s in scans)


def test_hack_scan_diff_names_nothing_between_null_pools_and_the_phrase_after_one() -> None:
    nulls = [s for shape in _null_scans().values() for s in shape]
    pairs = list(zip(nulls[0::2], nulls[1::2], strict=True))
    named = [d["moved_toward"] for d in (hack_scan_diff(b, a) for b, a in pairs)]
    moved = sum(n is not None for n in named)
    assert moved <= (ALPHA + 0.02) * len(pairs), f"{moved} of {len(pairs)} null pairs"
    planted = _planted_scans()
    toward = [hack_scan_diff(b, a)["moved_toward"] for b, a in zip(nulls, planted, strict=False)]
    found = toward.count(f"contains:{PHRASE}")
    assert found >= 0.9 * len(toward), f"named in {found} of {len(toward)} pairs"
