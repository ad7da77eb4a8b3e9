"""Bench the within-ask scan kernel (the core of hack_scan), pure Python vs Rust.

16,000 rows (2,000 asks x 8 rollouts), about 200 sparse features (binary words, a few counts),
100 permutations for the noise floor. Prints ``name,size,python_s,rust_s,speedup`` (the rust
columns are empty until the native module has ``within_group_scan``); the backends must agree
exactly or the bench stops. Times are the best of several repeats.

    .venv/bin/python benches/bench_scan.py [--asks 2000] [--k 8] [--features 200] [--perms 100]
"""

from __future__ import annotations

import argparse
import importlib
import random
import sys
import time
from array import array
from collections.abc import Callable
from typing import Any


def make_inputs(asks: int, k: int, n_features: int, seed: int = 0) -> tuple[Any, ...]:
    """A seeded CSR matrix, group ids and 0/1 rewards with one feature driving reward."""
    rng = random.Random(seed)
    indptr, indices, values = array("q", [0]), array("q"), array("d")
    groups, reward = array("q"), array("d")
    density = [rng.uniform(0.02, 0.5) for _ in range(n_features)]
    for ask in range(asks):
        for _ in range(k):
            cells = []
            for j in range(n_features):
                if j < 5:
                    cells.append((j, float(rng.randint(1, 400))))  # counts (length-like)
                elif rng.random() < density[j]:
                    cells.append((j, 1.0))
            driver = any(j == 7 for j, _ in cells)
            for j, v in cells:
                indices.append(j)
                values.append(v)
            indptr.append(len(indices))
            groups.append(ask)
            reward.append(1.0 if rng.random() < (0.7 if driver else 0.3) else 0.0)
    return indptr, indices, values, n_features, groups, reward


def best_of(repeats: int, fn: Callable[[], Any]) -> float:
    """The fastest of ``repeats`` wall-clock timings of ``fn()``."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--asks", type=int, default=2000)
    parser.add_argument("--k", type=int, default=8)
    parser.add_argument("--features", type=int, default=200)
    parser.add_argument("--perms", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--python-repeats", type=int, default=1)
    args = parser.parse_args()

    pure = importlib.import_module("whileai._pure")
    try:
        native: Any = importlib.import_module("whileai._native")
        if not hasattr(native, "within_group_scan"):
            native = None
    except ImportError:
        native = None
    inputs = make_inputs(args.asks, args.k, args.features)
    call = (*inputs, args.perms, 0)
    expected = pure.within_group_scan(*call)
    python_s = best_of(args.python_repeats, lambda: pure.within_group_scan(*call))
    rust_s: float | None = None
    if native is not None:
        if tuple(list(x) for x in native.within_group_scan(*call)) != tuple(
            list(x) for x in expected
        ):
            sys.exit("backends disagree: the bench is void")
        rust_s = best_of(args.repeats, lambda: native.within_group_scan(*call))
    size = f"{args.asks * args.k}x{args.features}x{args.perms}"
    print("name,size,python_s,rust_s,speedup")
    rust = "" if rust_s is None else f"{rust_s:.4f}"
    speed = "" if rust_s is None else f"{python_s / rust_s:.1f}"
    print(f"scan,{size},{python_s:.4f},{rust},{speed}")


if __name__ == "__main__":
    main()
