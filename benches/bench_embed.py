"""Bench the hash embedder: Rust vs the pure-Python reference vs scikit-learn's HashingVectorizer.

Prints one CSV line per size: ``name,size,python_s,rust_s,speedup,sklearn_ratio`` where
``speedup = python_s / rust_s`` and ``sklearn_ratio = sklearn_s / rust_s`` (empty when
scikit-learn is not installed). Times are the best of several repeats, measured in one run.
Targets (20,000 texts of 10-60 words): speedup >= 40, sklearn_ratio >= 5.

    .venv/bin/python benches/bench_embed.py [--sizes 2000,20000] [--repeats 5]
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
    "Zürich café naïve Привет заказ 注文 確認 Σίσυφος"
)
WORDS = tuple(_VOCABULARY.split())
DIM = 256


def make_texts(n: int, seed: int = 0) -> list[str]:
    """``n`` seeded texts of 10-60 words, with numbers and punctuation mixed in."""
    rng = random.Random(seed)
    texts = []
    for _ in range(n):
        words = []
        for _ in range(rng.randint(10, 60)):
            r = rng.random()
            if r < 0.08:
                words.append(str(rng.randint(0, 99999)))
            elif r < 0.12:
                words.append(rng.choice(WORDS).capitalize() + rng.choice(",.?!"))
            else:
                words.append(rng.choice(WORDS))
        texts.append(" ".join(words))
    return texts


def best_of(repeats: int, fn: Callable[[], Any]) -> float:
    """The fastest of ``repeats`` wall-clock timings of ``fn()``."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def sklearn_embed() -> Callable[[list[str]], Any] | None:
    """HashingVectorizer with unigrams and bigrams into 256 buckets, or None if absent."""
    try:
        from sklearn.feature_extraction.text import HashingVectorizer
    except ImportError:
        return None
    vectorizer = HashingVectorizer(ngram_range=(1, 2), n_features=DIM)
    return vectorizer.transform


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="2000,20000")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--python-repeats", type=int, default=2)
    args = parser.parse_args()

    pure = importlib.import_module("whileai._pure")
    try:
        native = importlib.import_module("whileai._native")
    except ImportError:
        sys.exit("whileai._native is not built: run `make build` first")
    sklearn = sklearn_embed()

    print("name,size,python_s,rust_s,speedup,sklearn_ratio")
    for size in (int(s) for s in args.sizes.split(",")):
        texts = make_texts(size)
        if native.embed(texts, DIM) != pure.embed(texts, DIM):
            sys.exit(f"backends disagree on {size} texts: the bench is void")
        rust_s = best_of(args.repeats, lambda t=texts: native.embed(t, DIM))
        python_s = best_of(args.python_repeats, lambda t=texts: pure.embed(t, DIM))
        ratio = ""
        if sklearn is not None:
            sklearn_s = best_of(args.repeats, lambda t=texts: sklearn(t))
            ratio = f"{sklearn_s / rust_s:.1f}"
        print(f"embed,{size},{python_s:.4f},{rust_s:.4f},{python_s / rust_s:.1f},{ratio}")


if __name__ == "__main__":
    main()
