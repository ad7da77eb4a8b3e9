"""Bench the ported kernels (scan, n-gram index, diversity selection): Rust vs pure Python.

Prints one CSV line per kernel and size: ``name,size,python_s,rust_s,speedup``. Inputs are
seeded; the backends must return the same answer before anything is timed. Times are the best
of several repeats (the pure backend once: it is the slow side), measured in one run.

    .venv/bin/python benches/bench_kernels.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import importlib
import random
import sys
import time
from array import array
from collections.abc import Callable
from types import ModuleType
from typing import Any

_VOCABULARY = (
    "order refund shipped account password reset invoice delivery address update cancel plan "
    "upgrade charge card payment failed support ticket status tracking package return label "
    "customer agent policy please thanks the a to of and my your is was will can not need help"
)
WORDS = tuple(_VOCABULARY.split())


def best_of(repeats: int, fn: Callable[[], Any]) -> float:
    """The fastest of ``repeats`` wall-clock timings of ``fn()``."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def texts(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(10, 60))) for _ in range(n)]


def scan_problem(n_rows: int, n_features: int, seed: int) -> tuple[Any, ...]:
    """A CSR matrix of ~10 binary features per row, asks of 8 rows, 0/1 rewards."""
    rng = random.Random(seed)
    indptr, indices = [0], []
    for _ in range(n_rows):
        indices.extend(sorted(rng.sample(range(n_features), 10)))
        indptr.append(len(indices))
    groups = array("q", (i // 8 for i in range(n_rows)))
    reward = array("d", (float(rng.random() < 0.5) for _ in range(n_rows)))
    values = array("d", [1.0] * len(indices))
    return array("q", indptr), array("q", indices), values, n_features, groups, reward, 200, 0


def jobs(size: int) -> list[tuple[str, Callable[[ModuleType], Any]]]:
    evals, train = texts(size, 1), texts(size, 2)
    # Make some train texts overlap an eval text, as contamination would.
    train = [t if i % 5 else evals[i] + " " + t for i, t in enumerate(train)]
    problem = scan_problem(size, 200, 3)
    return [
        ("ngram_build_scan", lambda m: m.NgramIndex(evals, 8).scan(train)),
        ("within_group_scan", lambda m: m.within_group_scan(*problem)),
        (
            "select_diverse",
            lambda m: m.select_diverse(m.embed_counts(evals, 256), 256, 100, 0, 0.01),
        ),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="2000")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    pure = importlib.import_module("whileai._pure")
    try:
        native = importlib.import_module("whileai._native")
    except ImportError:
        sys.exit("whileai._native is not built: run `make build` first")
    print("name,size,python_s,rust_s,speedup")
    for size in (int(s) for s in args.sizes.split(",")):
        for name, call in jobs(size):
            if call(native) != call(pure):
                sys.exit(f"backends disagree on {name} at size {size}: the bench is void")
            rust_s = best_of(args.repeats, lambda c=call: c(native))
            python_s = best_of(1, lambda c=call: c(pure))
            print(f"{name},{size},{python_s:.4f},{rust_s:.4f},{python_s / rust_s:.1f}")


if __name__ == "__main__":
    main()
