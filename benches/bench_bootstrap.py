"""Bench the resampling kernel: bootstrap means and sign-flip means, pure Python vs Rust.

Builds seeded per-task pass rates, checks that the backends agree exactly where both exist,
times each with several repeats, and prints one CSV line per size:
``name,size,python_s,rust_s,speedup,numpy_ratio,scipy_ratio``. ``rust_s``/``speedup`` stay empty
until the native module has the kernel; the peer columns (numpy batched resampling, and
``scipy.stats.bootstrap`` percentile) are ``peer_s / rust_s`` (or ``/ python_s`` when there is no
native kernel), empty when the peer is not installed. Peers use their own RNG, so their
intervals differ slightly; only the timings are compared.

    .venv/bin/python benches/bench_bootstrap.py [--sizes 200x2000,2000x10000] [--repeats 3]

The 2,000 tasks x 10,000 resamples size is the one the issue names; in pure Python it takes
tens of seconds per repeat.
"""

from __future__ import annotations

import argparse
import importlib
import random
import sys
import time
from collections.abc import Callable
from typing import Any


def best_of(repeats: int, fn: Callable[[], Any]) -> tuple[float, Any]:
    """The fastest of ``repeats`` timings of ``fn()`` and its last result."""
    best, out = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def values(n: int, seed: int = 0) -> list[float]:
    """Per-task pass rates over 8 repeats, as the pass@1 bootstrap sees them."""
    rng = random.Random(seed)
    return [sum(rng.random() < p for _ in range(8)) / 8 for p in (rng.random() for _ in range(n))]


def numpy_peer(xs: list[float], n_resamples: int) -> Callable[[], Any] | None:
    try:
        import numpy as np
    except ImportError:
        return None
    arr = np.asarray(xs)
    rng = np.random.default_rng(0)

    def run() -> Any:
        out = np.empty(n_resamples)
        step = max(1, 20_000_000 // max(1, len(arr)))  # batches that fit in memory
        for start in range(0, n_resamples, step):
            stop = min(n_resamples, start + step)
            idx = rng.integers(0, len(arr), size=(stop - start, len(arr)))
            out[start:stop] = arr[idx].mean(axis=1)
        return out

    return run


def scipy_peer(xs: list[float], n_resamples: int) -> Callable[[], Any] | None:
    try:
        import numpy as np
        from scipy import stats
    except ImportError:
        return None
    arr = np.asarray(xs)

    def run() -> Any:
        return stats.bootstrap(
            (arr,),
            np.mean,
            n_resamples=n_resamples,
            method="percentile",
            random_state=0,
            vectorized=True,
            batch=200,
        )

    return run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes", default="200x2000,2000x2000,2000x10000", help="comma-separated TASKSxRESAMPLES"
    )
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    pure = importlib.import_module("whileai._pure")
    try:
        native = importlib.import_module("whileai._native")
    except ImportError:
        native = None
    has_native = native is not None and hasattr(native, "bootstrap_means")
    print("name,size,python_s,rust_s,speedup,numpy_ratio,scipy_ratio")
    for size in args.sizes.split(","):
        n_tasks, n_resamples = (int(x) for x in size.split("x"))
        xs = values(n_tasks)
        for name in ("bootstrap_means", "sign_flip_means"):
            py_fn = getattr(pure, name)
            repeats = 1 if n_tasks * n_resamples > 5_000_000 else args.repeats
            py_s, py_out = best_of(repeats, lambda f=py_fn, x=xs, r=n_resamples: f(x, r, 7))
            rust_s: float | None = None
            if has_native:
                rs_fn = getattr(native, name)
                rust_s, rs_out = best_of(
                    args.repeats, lambda f=rs_fn, x=xs, r=n_resamples: f(x, r, 7)
                )
                if list(rs_out) != list(py_out):
                    print(f"{name}: backends disagree at {size}", file=sys.stderr)
                    return 1
            base = rust_s if rust_s is not None else py_s
            ratios = []
            for peer in (numpy_peer, scipy_peer):
                run = peer(xs, n_resamples) if name == "bootstrap_means" else None
                ratios.append("" if run is None else f"{best_of(args.repeats, run)[0] / base:.2f}")
            speed = f"{py_s / rust_s:.1f}" if rust_s else ""
            rust_text = f"{rust_s:.4f}" if rust_s is not None else ""
            print(f"{name},{size},{py_s:.4f},{rust_text},{speed},{ratios[0]},{ratios[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
