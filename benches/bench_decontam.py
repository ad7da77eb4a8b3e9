"""Bench decontamination: the n-gram index scan, pure Python vs Rust, in words per second.

Builds 2,000 seeded eval prompts and 20,000 train prompts (10-60 words, some copied or lightly
edited from the eval set), builds the index once and scans every train prompt. Prints one CSV
line per size: ``name,size,words,python_s,rust_s,speedup,python_wps,rust_wps`` (the rust columns
are empty until the native module has ``NgramIndex``). Times are the best of several repeats.

    .venv/bin/python benches/bench_decontam.py [--train 20000] [--eval 2000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import importlib
import random
import sys
import time
from collections.abc import Callable
from typing import Any

_VOCABULARY = (
    "order refund shipped account password reset invoice delivery address update cancel "
    "subscription plan upgrade charge card payment failed support ticket status tracking "
    "package warehouse return label customer agent policy please thanks the a to of and "
    "my your is was will can could not need help when where why how what today tomorrow "
    "kettle lid cracked blue replacement weekend friday monday store manager receipt box "
    "Zürich café naïve Привет заказ 注文 確認 Σίσυφος"
)
WORDS = tuple(_VOCABULARY.split())
N = 8


def make_prompts(n: int, rng: random.Random) -> list[str]:
    """``n`` seeded prompts of 10-60 words with numbers mixed in."""
    out = []
    for _ in range(n):
        words = [str(rng.randint(0, 99999)) if rng.random() < 0.08 else rng.choice(WORDS)
                 for _ in range(rng.randint(10, 60))]
        out.append(" ".join(words))
    return out


def make_sets(n_train: int, n_eval: int, seed: int = 0) -> tuple[list[str], list[str]]:
    """Eval prompts, and train prompts of which ~2% are copies and ~3% light edits of eval ones."""
    rng = random.Random(seed)
    evals = make_prompts(n_eval, rng)
    train = make_prompts(n_train, rng)
    for i in range(n_train):
        r = rng.random()
        if r < 0.02:
            train[i] = rng.choice(evals).upper()
        elif r < 0.05:
            words = rng.choice(evals).split()
            words[rng.randrange(len(words))] = "changed"
            train[i] = " ".join(words)
    return train, evals


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
    parser.add_argument("--train", type=int, default=20000)
    parser.add_argument("--eval", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--python-repeats", type=int, default=1)
    args = parser.parse_args()

    pure = importlib.import_module("whileai._pure")
    try:
        native: Any = importlib.import_module("whileai._native")
        if not hasattr(native, "NgramIndex"):
            native = None
    except ImportError:
        native = None
    train, evals = make_sets(args.train, args.eval)
    words = sum(len(pure.tokenize(t)) for t in train)
    p_index = pure.NgramIndex(evals, N)
    python_s = best_of(args.python_repeats, lambda: p_index.scan(train))
    build_s = best_of(1, lambda: pure.NgramIndex(evals, N))
    hits = sum(1 for b in p_index.scan(train)[0] if b >= 0)
    rust_s: float | None = None
    if native is not None:
        n_index = native.NgramIndex(evals, N)
        if n_index.scan(train) != p_index.scan(train):
            sys.exit("backends disagree: the bench is void")
        rust_s = best_of(args.repeats, lambda: n_index.scan(train))
    print("name,size,words,python_s,rust_s,speedup,python_wps,rust_wps")
    rust = "" if rust_s is None else f"{rust_s:.4f}"
    speed = "" if rust_s is None else f"{python_s / rust_s:.1f}"
    rust_wps = "" if rust_s is None else f"{words / rust_s:.0f}"
    print(f"decontam_scan,{args.train}x{args.eval},{words},{python_s:.4f},{rust},{speed},"
          f"{words / python_s:.0f},{rust_wps}")
    print(f"# pure index build over {args.eval} eval prompts: {build_s:.3f}s; "
          f"{hits} train prompts share an {N}-gram", file=sys.stderr)


if __name__ == "__main__":
    main()
