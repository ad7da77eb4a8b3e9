"""What a hack scan concludes: the report's shape, the ranking against the floor, the regime.

``hack_scan`` (:mod:`whileai.simulations.clean.hack_scan`) builds the columns and runs the kernel;
here the scanned columns are ranked against the permutation floor (:func:`floor_tau`) and the
pool's shape and the ranking decide the regime (:func:`pool_verdict`, :func:`classify`).

>>> tier("tool:lookup_order & contains:done"), tier("contains:done"), tier("headings")
('conjunction', 'auto', 'hand')
>>> pool_verdict({"rows": 4, "asks": 2, "mixed_asks": 0, "solved_asks": 0, "failed_asks": 2,
...               "single_asks": 0}, 4, 2).regime
'no_signal'
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict

__all__ = ["SHOWN", "TIE", "AskCounts", "Cause", "HackScanReport", "RankedFeature", "Ranking",
           "Regime", "ScanSupport", "Scanned", "Verdict", "classify", "floor_tau", "pool_verdict",
           "rank", "tier"]

Regime = Literal["train", "reward_hack", "pool_exhausted", "no_signal", "degenerate", "unknown"]
"""A scan's verdict, ``report["regime"]`` (docs/cleaning.md)."""
Cause = Literal[
    "min_obs", "no_repeats", "no_mixed_asks", "below_floor", "distinct_per_ask", "no_endorsed"
]
"""Why a scan could say no more, ``report["cause"]`` (None for the other verdicts)."""

class RankedFeature(TypedDict):
    """One feature of ``report["features"]``: its within-ask correlation with reward and why it
    counts (``tier``: hand, user, auto or conjunction; ``aliases``: features equal to it)."""

    name: str
    rho: float
    support: int
    tier: str
    endorsed: bool
    above_floor: bool
    aliases: list[str]


class AskCounts(TypedDict):
    """The usable rows and the asks by how their rewards fall (a single rollout; mixed; every
    rollout passing, reward >= 0.5; every one failing)."""

    rows: int
    asks: int
    mixed_asks: int
    solved_asks: int
    failed_asks: int
    single_asks: int


class ScanSupport(AskCounts):
    """``report["support"]``: the :class:`AskCounts`, the median distinct trajectories of a
    mixed ask, and the rows skipped by cause."""

    distinct_per_ask: float | None
    skipped: dict[str, int]


class HackScanReport(TypedDict):
    """What :func:`hack_scan` returns (JSON-able; ``format_hack_scan`` prints it)."""

    regime: Regime
    top_feature: str | None
    top_rho: float | None
    tau: float | None
    alpha: float
    n_perm: int
    seed: int
    endorsed: list[str]
    features: list[RankedFeature]
    n_features: int
    collinear: list[str]
    cause: Cause | None
    integrity: float | None
    rivals: list[str]
    inverted: list[str]
    support: ScanSupport
    warnings: list[str]


TIE = 0.999  # |rho| at or above this counts as a perfect explanation
_SOLVED_SHARE = 0.5
_RIVAL_SHARE = 0.8
SHOWN = 20  # features listed in the report


@dataclass(frozen=True)
class Scanned:
    """What the ranking reads of the scan: per merged column its name, tier, aliases, rho and
    support (conjunctions included), and the permutation floor."""

    names: Sequence[str]
    tiers: Sequence[str]
    aliases: Sequence[Sequence[str]]
    rho: Sequence[float]
    support: Sequence[int]
    floor: Sequence[float]


def tier(name: str) -> str:
    """A feature's tier by its name: conjunction, auto, user or hand."""
    if " & " in name:
        return "conjunction"
    if name.startswith("contains:"):
        return "auto"
    if name.startswith("user:"):
        return "user"
    return "hand"


def floor_tau(floor: Sequence[float], alpha: float) -> float:
    """Return the noise floor: the ``k``-th largest permutation maximum, ``k = floor(alpha*(n+1))``.

    A |rho| strictly above it is beaten by fewer than ``k`` of the ``n`` shuffles, a permutation
    p-value ``(1 + #beaten) / (n + 1)`` of at most ``alpha``. With too few shuffles for ``alpha``
    (``k = 0``) nothing can clear the floor: 1.0 is returned (|rho| never exceeds 1).

    >>> floor_tau([i / 100 for i in range(1, 20)], 0.05)  # k = 1: the largest of 19
    0.19
    >>> floor_tau([i / 100 for i in range(1, 101)], 0.05)  # k = 5: the fifth largest of 100
    0.96
    >>> floor_tau([0.5] * 10, 0.05)  # 10 shuffles cannot reach alpha 0.05
    1.0
    """
    k = math.floor(alpha * (len(floor) + 1) + 1e-9)
    if k == 0:
        return 1.0
    return sorted(floor)[len(floor) - k]


@dataclass(frozen=True)
class Ranking:
    """The features above and below the floor, strongest first (none when no ask is mixed)."""

    ranked: list[RankedFeature] = field(default_factory=list)
    tau: float | None = None
    n_features: int = 0
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class Verdict:
    """What the report concludes: the regime, why it could say no more, and what backs it."""

    regime: Regime
    cause: Cause | None = None
    top_feature: str | None = None
    top_rho: float | None = None
    collinear: tuple[str, ...] = ()
    integrity: float | None = None
    rivals: tuple[str, ...] = ()
    inverted: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()


def rank(scanned: Scanned, is_endorsed: Callable[[str], bool], n_perm: int,
         alpha: float) -> Ranking:
    """The features of a scan ranked by |rho| (ties by name) against the floor ``tau``."""
    floor, rho, sup = scanned.floor, scanned.rho, scanned.support
    names, tiers, aliases = scanned.names, scanned.tiers, scanned.aliases
    tau = floor_tau(list(floor), alpha) if n_perm else 0.0
    warnings: tuple[str, ...] = ()
    if not n_perm:
        warnings = ("n_perm=0: no noise floor, every non-zero correlation counts",)
    elif alpha * (n_perm + 1) + 1e-9 < 1.0:
        need = math.ceil(1.0 / alpha - 1.0 - 1e-9)
        warnings = (f"n_perm={n_perm} is too few for alpha={alpha}: nothing can clear the "
                    f"floor (use n_perm >= {need})",)
    ranked = sorted(
        (j for j in range(len(names)) if sup[j] >= 2 and rho[j] != 0.0),
        key=lambda j: (-abs(rho[j]), names[j]),
    )
    return Ranking(
        ranked=[
            {
                "name": names[j],
                "rho": round(rho[j], 6),
                "support": sup[j],
                "tier": tiers[j],
                "endorsed": is_endorsed(names[j]) or any(is_endorsed(a) for a in aliases[j]),
                "above_floor": abs(rho[j]) > tau,
                "aliases": list(aliases[j]),
            }
            for j in ranked
        ],
        tau=round(tau, 6),
        n_features=len(names),
        warnings=warnings,
    )


def pool_verdict(counts: AskCounts, n_used: int, min_obs: int) -> Verdict | None:
    """The verdict the pool's shape decides before any feature is read, or None."""
    multi = counts["asks"] - counts["single_asks"]
    if n_used < min_obs:
        return Verdict("unknown", "min_obs", warnings=(
            f"only {n_used} usable rows (min_obs={min_obs}): regime unknown",))
    if multi == 0:
        return Verdict("unknown", "no_repeats", warnings=(
            "no ask has two or more rollouts: a within-ask scan needs repeats (k >= 2)",))
    if counts["solved_asks"] / multi >= _SOLVED_SHARE:
        return Verdict("pool_exhausted", warnings=(
            f"{counts['solved_asks']} of {multi} asks are already solved (every rollout "
            "passes): retire them or add harder asks before training",))
    if not counts["mixed_asks"]:
        return Verdict("no_signal", "no_mixed_asks")
    return None


def classify(ranked: list[RankedFeature], distinct: float | None, has_ends: bool) -> Verdict:
    """The verdict the ranked features decide."""
    above = [f for f in ranked if f["above_floor"]]
    endorsed_above = [f for f in above if f["endorsed"]]
    total = sum(abs(f["rho"]) for f in above)
    integrity = (round(sum(abs(f["rho"]) for f in endorsed_above) / total, 4)
                 if has_ends and total else None)
    inverted = tuple(f["name"] for f in endorsed_above if f["rho"] < 0)
    if not above:
        return Verdict("no_signal", "below_floor", integrity=integrity, inverted=inverted)
    tied = tuple(f["name"] for f in above if abs(f["rho"]) >= TIE)
    if len(tied) >= 2 and distinct is not None and distinct <= 2:
        return Verdict("degenerate", "distinct_per_ask", collinear=tied, integrity=integrity,
                       inverted=inverted, warnings=(
            f"{len(tied)} features tie at |rho| ~ 1 with a median of {distinct} distinct "
            "trajectories per ask: each is an exact function of the label, so no winner can "
            "be named; sample more varied rollouts (temperature, more repeats)",))
    top = above[0]
    backed: dict[str, Any] = {"top_feature": top["name"], "top_rho": top["rho"],
                              "integrity": integrity, "inverted": inverted}
    if not has_ends:
        return Verdict("unknown", "no_endorsed", **backed, warnings=(
            "no endorsed= given: the scan ranks and floors but cannot judge",))
    if top["endorsed"] and top["rho"] > 0:
        bar = _RIVAL_SHARE * abs(top["rho"])
        rivals = tuple(f["name"] for f in above if not f["endorsed"] and abs(f["rho"]) >= bar)
        return Verdict("train", **backed, rivals=rivals, warnings=(
            f"rivals: {', '.join(rivals[:5])} pay almost as well as {top['name']} "
            f"(|rho| >= {bar:.2f}); the policy may learn those too",) if rivals else ())
    if top["endorsed"]:
        why = f"the reward punishes endorsed {top['name']} (rho {top['rho']:+.2f})"
    else:
        best = endorsed_above[0]["name"] if endorsed_above else None
        instead = f" more than {best}" if best else " and nothing endorsed clears the floor"
        verb = "learn" if top["rho"] > 0 else "learn to avoid"
        why = f"reward_hack: the policy would {verb} {top['name']} (rho {top['rho']:+.2f}){instead}"
    return Verdict("reward_hack", **backed, warnings=(why,))
