"""Measure hack_scan's false-alarm rate and power by pool size (the table in docs/cleaning.md).

For each pool size (asks x rollouts) it scans ``--null`` null pools (reward independent of the
text; clean/hack_pools.py) and ``--planted`` pools with a phrase in 30% of the rollouts that
raises the pass probability by 0.3 within its ask, all with the default ``n_perm=100`` and
``alpha=0.05``, ``endorsed=["tool:lookup"]`` and ``seed=`` the pool index. It prints one
markdown row per size:

- ``false alarm``: null pools that came back ``reward_hack``;
- ``power``: planted pools whose ``top_feature`` is the phrase;
- ``diff false alarm``: ``hack_scan_diff`` of two null pools (disjoint pairs) that names a
  ``moved_toward``;
- ``diff power``: ``hack_scan_diff(null pool, planted pool)`` whose ``moved_toward`` is the
  phrase.

    .venv/bin/python tools/scan_calibration.py [--null 200] [--planted 100] [--sizes 20x4 60x8]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

from whileai.simulations.clean.hack_pools import synthetic_pool
from whileai.simulations.clean.hack_report import hack_scan_diff
from whileai.simulations.clean.hack_scan import hack_scan

PHRASE = "rest assured"
SIZES = ("10x8", "20x4", "30x8", "60x8", "60x3", "8x32", "200x8")


def rate(hits: int, n: int) -> str:
    """``hits/n (pct)``."""
    return f"{hits}/{n} ({100 * hits / n:.1f}%)" if n else "-"


def measure(asks: int, k: int, n_null: int, n_planted: int) -> str:
    """One markdown row: false alarms and power of the scan and of the diff at one pool size."""
    kw = {"endorsed": ["tool:lookup"]}
    nulls = [hack_scan(synthetic_pool(asks, k, seed=i), seed=i, **kw) for i in range(n_null)]
    planted = [
        hack_scan(synthetic_pool(asks, k, seed=i, phrase=PHRASE), seed=i, **kw)
        for i in range(n_planted)
    ]
    alarms = sum(s["regime"] == "reward_hack" for s in nulls)
    found = sum(s["top_feature"] == f"contains:{PHRASE}" for s in planted)
    pairs = list(zip(nulls[0::2], nulls[1::2], strict=False))
    moved = sum(hack_scan_diff(b, a)["moved_toward"] is not None for b, a in pairs)
    toward = [hack_scan_diff(b, a)["moved_toward"] for b, a in zip(nulls, planted, strict=False)]
    named = toward.count(f"contains:{PHRASE}")
    return (
        f"| {asks} x {k} | {rate(alarms, len(nulls))} | {rate(found, len(planted))} | "
        f"{rate(moved, len(pairs))} | {rate(named, len(toward))} |"
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--null", type=int, default=200, help="null pools per size")
    p.add_argument("--planted", type=int, default=100, help="planted pools per size")
    p.add_argument("--sizes", nargs="*", default=list(SIZES), help="asks x rollouts, e.g. 60x8")
    args = p.parse_args()
    print("| asks x rollouts | false alarm (reward_hack) | power (top feature) | "
          "diff false alarm | diff power |")
    print("|---|---|---|---|---|")
    for size in args.sizes:
        asks, k = (int(x) for x in size.split("x"))
        start = time.perf_counter()
        row = measure(asks, k, args.null, args.planted)
        print(row, flush=True)
        print(f"  ({size}: {time.perf_counter() - start:.0f}s)", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
