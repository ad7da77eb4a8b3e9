"""Bench the hash embedder: Rust vs the pure-Python reference vs scikit-learn's HashingVectorizer.

20,000 seeded texts of 10-60 words into 256 buckets, unigrams and bigrams (``--quick``: 2,000).
Prints ``name,size,python_s,rust_s,speedup,sklearn_ratio,note`` (``sklearn_ratio`` is
HashingVectorizer(ngram_range=(1, 2), n_features=256).transform time / Rust time; empty when
scikit-learn is absent). Targets: speedup >= 40, sklearn_ratio >= 5.

    .venv/bin/python benches/bench_embed.py [--quick] [--repeats 3]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from _bench import backends, best_of, header, line, make_texts, parser

DIM = 256


def sklearn_embed() -> Callable[[list[str]], Any] | None:
    """HashingVectorizer with unigrams and bigrams into 256 buckets, or None if absent."""
    try:
        from sklearn.feature_extraction.text import HashingVectorizer
    except ImportError:
        return None
    return HashingVectorizer(ngram_range=(1, 2), n_features=DIM).transform


def main() -> None:
    args = parser(__doc__).parse_args()
    pure, native = backends()
    sklearn = sklearn_embed()
    size = 2000 if args.quick else 20000
    texts = make_texts(size)
    header(["sklearn"])
    rust_s, out = best_of(lambda: native.embed(texts, DIM), args.repeats)
    python_s, expected = best_of(lambda: pure.embed(texts, DIM), 1)
    if out != expected:
        raise SystemExit("backends disagree on embed: the bench is void")
    peer = None if sklearn is None else best_of(lambda: sklearn(texts), args.repeats)[0]
    line("embed", size, python_s, rust_s, [peer])


if __name__ == "__main__":
    main()
