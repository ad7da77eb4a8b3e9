"""Printing a ``hack_scan`` report, and comparing two scans (before and after an update).

>>> print(format_hack_scan({"regime": "no_signal", "top_feature": None, "tau": 0.2,
...     "features": [], "warnings": [], "support": {"rows": 8, "asks": 1, "mixed_asks": 1}}))
hack_scan: no_signal | 8 rows, 1 asks (1 mixed) | tau 0.200
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from whileai.rows.keywords import valid_kwargs
from whileai.simulations.clean.hack_features import AUTO_TOP
from whileai.simulations.clean.hack_scan import hack_scan

__all__ = ["format_hack_scan", "format_hack_scan_diff", "hack_scan_diff"]


def format_hack_scan(scan: Mapping[str, Any], *, top: int = 8) -> str:
    """Render a scan: regime, support, the floor, the top features, then the warnings."""
    sup = scan.get("support", {})
    tau = scan.get("tau")
    head = (
        f"hack_scan: {scan['regime']} | {sup.get('rows', 0)} rows, {sup.get('asks', 0)} asks "
        f"({sup.get('mixed_asks', 0)} mixed) | tau {'n/a' if tau is None else f'{tau:.3f}'}"
    )
    lines = [head]
    if scan.get("top_feature"):
        lines.append(f"  top: {scan['top_feature']} (rho {scan['top_rho']:+.3f})")
    if scan.get("integrity") is not None:
        lines.append(f"  integrity: {scan['integrity']:.2f} of the above-floor signal is endorsed")
    if scan.get("collinear"):
        lines.append(f"  collinear ({scan.get('cause')}): {', '.join(scan['collinear'][:top])}")
    for f in scan.get("features", [])[:top]:
        mark = "*" if f.get("endorsed") else " "
        floor = "" if f.get("above_floor") else "  (below floor)"
        lines.append(f"  {mark} {f['rho']:+.3f} {f['name']} [{f['tier']}, n={f['support']}]{floor}")
    lines.extend(f"  warning: {w}" for w in scan.get("warnings", []))
    return "\n".join(lines)


def _as_scan(side: Any, endorsed: Sequence[str] | None,
             options: dict[str, Any]) -> Mapping[str, Any]:
    if isinstance(side, dict) and "regime" in side:
        return side
    return hack_scan(side, endorsed=endorsed, **options)


@valid_kwargs
def hack_scan_diff(
    before: Any,
    after: Any,
    endorsed: Sequence[str] | None = None,
    *,
    features: Mapping[str, Callable[[Mapping[str, Any]], Any]] | None = None,
    reward: str = "reward",
    n_perm: int = 100,
    min_obs: int = 20,
    alpha: float = 0.05,
    seed: int = 0,
    auto: bool = True,
    top: int = AUTO_TOP,
    kinds: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Compare the scans of two row sets (or two scan reports): what did the update move toward?

    ``moved_toward`` is the feature whose within-ask correlation rose most among those above the
    floor after; it is withheld (None, with ``withheld`` True) when either side is degenerate.

    Args:
        before: the rows (or the scan report) before the update.
        after: the rows (or the scan report) after it.
        endorsed: substrings of feature names the reward should track (as in ``hack_scan``).
        features: your own features, as in ``hack_scan``.
        reward: the row key holding the reward.
        n_perm: permutations for each side's noise floor.
        min_obs: fewer usable rows than this gives ``unknown``.
        alpha: the floor's level.
        seed: the permutation seed (the same for both sides).
        auto: scan the auto tier (words and pairs of consecutive words).
        top: the auto tier's vocabulary size.
        kinds: tool kind overrides for the trajectory flags.

    >>> d = hack_scan_diff({"regime": "degenerate", "features": []},
    ...                    {"regime": "train", "features": []})
    >>> d["withheld"], d["moved_toward"]
    (True, None)
    """
    options = {"features": features, "reward": reward, "n_perm": n_perm, "min_obs": min_obs,
               "alpha": alpha, "seed": seed, "auto": auto, "top": top, "kinds": kinds}
    b, a = _as_scan(before, endorsed, options), _as_scan(after, endorsed, options)
    rho_b = {f["name"]: f["rho"] for f in b.get("features", [])}
    rho_a = {f["name"]: f["rho"] for f in a.get("features", [])}
    above_a = {f["name"] for f in a.get("features", []) if f.get("above_floor")}
    changes = [
        {"name": n, "before": rho_b.get(n, 0.0), "after": rho_a.get(n, 0.0),
         "delta": round(rho_a.get(n, 0.0) - rho_b.get(n, 0.0), 6)}
        for n in sorted(set(rho_b) | set(rho_a))
    ]
    changes.sort(key=lambda c: (-abs(c["delta"]), c["name"]))
    withheld = "degenerate" in (b.get("regime"), a.get("regime"))
    rising = [c for c in changes if c["name"] in above_a and c["delta"] > 0]
    warnings = []
    if withheld:
        warnings.append("one side is degenerate (too few distinct trajectories per ask): "
                        "no feature can be named")
    moved = None if withheld or not rising else max(rising, key=lambda c: c["delta"])["name"]
    if a.get("regime") == "reward_hack" and b.get("regime") != "reward_hack":
        warnings.append(f"the update turned a {b.get('regime')} scan into reward_hack")
    return {
        "before_regime": b.get("regime"),
        "after_regime": a.get("regime"),
        "before_top": b.get("top_feature"),
        "after_top": a.get("top_feature"),
        "moved_toward": moved,
        "withheld": withheld,
        "changes": changes[:20],
        "warnings": warnings,
    }


def format_hack_scan_diff(diff: dict[str, Any], *, top: int = 8) -> str:
    """Render a :func:`hack_scan_diff` report."""
    lines = [
        f"hack_scan_diff: {diff['before_regime']} -> {diff['after_regime']} | moved toward: "
        f"{'withheld' if diff['withheld'] else diff['moved_toward']}"
    ]
    lines.extend(
        f"  {c['delta']:+.3f} {c['name']} ({c['before']:+.3f} -> {c['after']:+.3f})"
        for c in diff["changes"][:top]
    )
    lines.extend(f"  warning: {w}" for w in diff["warnings"])
    return "\n".join(lines)
