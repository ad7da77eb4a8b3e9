"""Bench the resampling kernels: bootstrap percentile intervals, pure Python vs Rust vs numpy/scipy.

2,000 seeded per-task pass rates, 10,000 bootstrap resamples, a 95% percentile interval
(``--quick``: 200 x 2,000), plus ``sign_flip_means`` at the same size. Prints
``name,size,python_s,rust_s,speedup,numpy_ratio,scipy_ratio,note``: numpy is batched
resampling (``rng.integers`` into a (batch, n) index matrix, row means, ``np.percentile``),
scipy is ``scipy.stats.bootstrap(method="percentile", vectorized=True, batch=200)`` (its fastest
batch here). Peers use their own
RNG, so only their timings are compared. Every replicate is an independent unit with its own
stream ``(seed, r)``, so the pure time is measured on the first ``--pure-sample`` fraction of the
replicates (checked equal to the native ones) and scaled linearly; the note says so.
Targets: speedup >= 50, numpy_ratio >= 1, scipy_ratio >= 5.

    .venv/bin/python benches/bench_bootstrap.py [--quick] [--pure-sample 0.1] [--repeats 3]
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from _bench import agree, backends, best_of, header, line, parser
from whileai.simulations.measure.stats import percentile


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
        step = max(1, 4_000_000 // max(1, len(arr)))  # (batch, n) index matrices of ~32 MB
        for start in range(0, n_resamples, step):
            stop = min(n_resamples, start + step)
            idx = rng.integers(0, len(arr), size=(stop - start, len(arr)))
            out[start:stop] = arr[idx].mean(axis=1)
        return np.percentile(out, [2.5, 97.5])

    return run


def scipy_peer(xs: list[float], n_resamples: int) -> Callable[[], Any] | None:
    try:
        import numpy as np
        from scipy import stats
    except ImportError:
        return None
    arr = np.asarray(xs)

    def run() -> Any:
        return stats.bootstrap((arr,), np.mean, n_resamples=n_resamples, method="percentile",
                               confidence_level=0.95, random_state=0, vectorized=True,
                               batch=200).confidence_interval

    return run


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--pure-sample", type=float, default=0.1,
                   help="fraction of the replicates the pure backend runs (scaled linearly)")
    args = p.parse_args()
    pure, native = backends()
    n_tasks, n_resamples = (200, 2000) if args.quick else (2000, 10000)
    xs = values(n_tasks)
    sample = max(1, int(n_resamples * args.pure_sample))
    scale = n_resamples / sample
    note = "" if sample == n_resamples else f"pure on {sample} replicates x{scale:g}"
    header(["numpy", "scipy"])

    def interval(means: Any) -> tuple[float, float]:
        ordered = sorted(means)  # one sort; percentile's own sort of a sorted list is linear
        return percentile(ordered, 0.025), percentile(ordered, 0.975)

    size = f"{n_tasks}x{n_resamples}"
    for name in ("bootstrap_means", "sign_flip_means"):
        nfn, pfn = getattr(native, name), getattr(pure, name)
        rust_s, _ = best_of(lambda f=nfn: interval(f(xs, n_resamples, 7)), args.repeats)
        py_s, expected = best_of(lambda f=pfn: f(xs, sample, 7), 1)
        agree(nfn(xs, n_resamples, 7)[:sample], expected, name)
        peers: list[float | None] = [None, None]
        if name == "bootstrap_means":
            for i, peer in enumerate((numpy_peer, scipy_peer)):
                run = peer(xs, n_resamples)
                peers[i] = None if run is None else best_of(run, args.repeats)[0]
        line(name, size, py_s * scale, rust_s, peers, note)


if __name__ == "__main__":
    main()
