"""Bench the resampling kernel: Rust vs the pure-Python reference vs a numpy bootstrap.

Prints one CSV line per size: ``name,size,python_s,rust_s,speedup,numpy_ratio`` where
``speedup = python_s / rust_s`` and ``numpy_ratio = numpy_s / rust_s`` (numpy draws with its
own generator, so it is a speed peer, not an equality check; empty when numpy is absent).
Times are the best of several repeats, measured in one run; the backends must agree first.

    .venv/bin/python benches/bench_resample.py [--sizes 200,2000] [--resamples 2000]
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


def best_of(repeats: int, fn: Callable[[], Any]) -> float:
    """The fastest of ``repeats`` wall-clock timings of ``fn()``."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def numpy_bootstrap() -> Callable[[Any, int], Any] | None:
    """Bootstrap means with numpy (index draws + row means), or None if numpy is absent."""
    try:
        import numpy as np
    except ImportError:
        return None

    def run(values: Any, n_resamples: int) -> Any:
        data = np.asarray(values)
        rng = np.random.default_rng(0)
        idx = rng.integers(0, len(data), size=(n_resamples, len(data)))
        return data[idx].mean(axis=1)

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="200,2000")
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    pure = importlib.import_module("whileai._pure")
    try:
        native = importlib.import_module("whileai._native")
    except ImportError:
        sys.exit("whileai._native is not built: run `make build` first")
    peer = numpy_bootstrap()
    r = args.resamples
    print("name,size,python_s,rust_s,speedup,numpy_ratio")
    for size in (int(s) for s in args.sizes.split(",")):
        rng = random.Random(size)
        values = array("d", (float(rng.random() < 0.7) for _ in range(size)))
        diffs = array("d", (rng.choice((-1.0, 0.0, 0.0, 1.0)) for _ in range(size)))
        jobs: list[tuple[str, Callable[[Any], Any], Any]] = [
            ("bootstrap_means", lambda m, v=values: m.bootstrap_means(v, r, 0), values),
            ("sign_flip_means", lambda m, d=diffs: m.sign_flip_means(d, r, 0), None),
        ]
        for name, call, peer_input in jobs:
            if call(native) != call(pure):
                sys.exit(f"backends disagree on {name} at size {size}: the bench is void")
            rust_s = best_of(args.repeats, lambda c=call: c(native))
            python_s = best_of(1, lambda c=call: c(pure))
            ratio = ""
            if peer is not None and peer_input is not None:
                peer_s = best_of(args.repeats, lambda v=peer_input: peer(v, r))
                ratio = f"{peer_s / rust_s:.1f}"
            print(f"{name},{size},{python_s:.4f},{rust_s:.4f},{python_s / rust_s:.1f},{ratio}")


if __name__ == "__main__":
    main()
