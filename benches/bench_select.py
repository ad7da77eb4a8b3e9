"""Bench diversity selection: Rust vs the pure-Python reference vs numpy greedy farthest-point.

20,000 seeded texts embedded into 256 buckets (``embed_counts``; as unit vectors for numpy),
k = 1,000 picks (``--quick``: 2,000 texts, k = 100). Prints
``name,size,python_s,rust_s,speedup,numpy_ratio,note``. The numpy peer is the textbook
vectorised greedy farthest-point: unit-normalised float32 matrix, one matrix-vector product per
pick and an elementwise minimum update of each candidate's distance to the chosen set. The pure
time is measured in full (a greedy pick depends on the ones before it, so there are no
independent units to sample). Targets: speedup >= 200, numpy_ratio >= 1.

    .venv/bin/python benches/bench_select.py [--quick] [--repeats 3]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from _bench import backends, best_of, header, line, make_texts, parser

DIM = 256


def numpy_peer(counts: Any, n: int, k: int) -> Callable[[], Any] | None:
    """Greedy farthest-point over unit vectors with numpy, or None if numpy is absent."""
    try:
        import numpy as np
    except ImportError:
        return None
    x = np.asarray(counts, dtype=np.float32).reshape(n, DIM)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    x = x / np.where(norms == 0, 1.0, norms)

    def run() -> list[int]:
        nearest = np.ones(n, dtype=np.float32)
        open_ = np.ones(n, dtype=bool)
        picks: list[int] = []
        for _ in range(min(k, n)):
            pick = int(np.argmax(np.where(open_, nearest, -np.inf)))
            picks.append(pick)
            open_[pick] = False
            np.minimum(nearest, 1.0 - x @ x[pick], out=nearest)
        return picks

    return run


def main() -> None:
    args = parser(__doc__).parse_args()
    pure, native = backends()
    n, k = (2000, 100) if args.quick else (20000, 1000)
    counts = native.embed_counts(make_texts(n, seed=1), DIM)
    header(["numpy"])
    rust_s, out = best_of(lambda: native.select_diverse(counts, DIM, k, 0), args.repeats)
    python_s, expected = best_of(lambda: pure.select_diverse(counts, DIM, k, 0), 1)
    if out != expected:
        raise SystemExit("backends disagree on select_diverse: the bench is void")
    peer = numpy_peer(counts, n, k)
    peer_s = None if peer is None else best_of(peer, args.repeats)[0]
    line("select", f"{n}x{DIM}k{k}", python_s, rust_s, [peer_s])


if __name__ == "__main__":
    main()
