"""Bench the within-ask scan kernel (the core of hack_scan): pure Python vs Rust vs numpy dense.

16,000 rows (2,000 asks x 8 rollouts), 200 sparse features (binary words, a few counts), 100
permutations for the noise floor (``--quick``: 200 asks). Prints
``name,size,python_s,rust_s,speedup,numpy_ratio,note``. The numpy peer is a dense
implementation: mixed groups only, centring by group with ``np.bincount``, correlations by one
matrix product, and all permutations at once (within-group shuffles by argsort of
``group + uniform key``, then one ``(features x rows) @ (rows x perms)`` product). The
permutations are independent units (stream ``(seed, p)`` each), so the pure time is
``t(0 perms) + (t(P) - t(0)) * perms / P`` with ``P = --pure-perms`` (the note says so; the first
``P`` floor values are checked equal to the native ones). Targets: speedup >= 50, numpy >= 1.
A second line, ``scan_conjoin``, adds hack_scan's conjunction search to every permutation (the
195 binary columns as ``conjoin``, ``top=12``); it has no numpy peer.

    .venv/bin/python benches/bench_scan.py [--quick] [--pure-perms 10] [--repeats 3]
"""

from __future__ import annotations

import random
from array import array
from collections.abc import Callable
from typing import Any

from _bench import agree, backends, best_of, header, line, parser


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


def numpy_peer(inputs: tuple[Any, ...], n_perm: int) -> Callable[[], Any] | None:
    """Dense within-group scan with a permutation floor, or None if numpy is absent."""
    try:
        import numpy as np
    except ImportError:
        return None
    indptr, indices, values, n_features, groups, reward = inputs
    indptr_a, indices_a = np.asarray(indptr), np.asarray(indices)
    values_a, groups_a, reward_a = np.asarray(values), np.asarray(groups), np.asarray(reward)

    def run() -> Any:
        rows = np.repeat(np.arange(len(groups_a)), np.diff(indptr_a))
        x = np.zeros((len(groups_a), n_features))
        x[rows, indices_a] = values_a
        g = groups_a
        size = np.bincount(g)
        rsum, rsq = np.bincount(g, reward_a), np.bincount(g, reward_a * reward_a)
        mixed = (size >= 2) & (rsq * size - rsum * rsum > 0)
        keep = mixed[g]
        x, gk, r = x[keep], g[keep], reward_a[keep]
        _, gk = np.unique(gk, return_inverse=True)
        cnt = np.bincount(gk).astype(float)
        xsum = np.zeros((cnt.size, n_features))
        np.add.at(xsum, gk, x)
        xc = x - (xsum / cnt[:, None])[gk]
        rc = r - (np.bincount(gk, r) / cnt)[gk]
        sx = np.sqrt((xc * xc).sum(axis=0))
        sx[sx == 0] = np.inf
        rho = (xc.T @ rc) / (sx * np.sqrt(rc @ rc))
        rng = np.random.default_rng(0)
        keys = gk[None, :] + rng.random((n_perm, gk.size))
        perm = np.argsort(keys, axis=1)
        rp = rc[perm].T  # rows x perms
        floor = np.abs((xc.T @ rp) / (sx[:, None] * np.sqrt((rp * rp).sum(axis=0)))).max(axis=0)
        return rho, floor

    return run


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--pure-perms", type=int, default=10)
    args = p.parse_args()
    pure, native = backends()
    asks, k, features, perms = (200 if args.quick else 2000), 8, 200, 100
    inputs = make_inputs(asks, k, features)
    rust_s, out = best_of(lambda: native.within_group_scan(*inputs, perms, 0), args.repeats)
    base_s, _ = best_of(lambda: pure.within_group_scan(*inputs, 0, 0), 1)
    part_s, expected = best_of(lambda: pure.within_group_scan(*inputs, args.pure_perms, 0), 1)
    agree([out[0], out[1][: args.pure_perms], out[2]], expected, "within_group_scan")
    python_s = base_s + (part_s - base_s) * perms / args.pure_perms
    peer = numpy_peer(inputs, perms)
    peer_s = None if peer is None else best_of(peer, args.repeats)[0]
    header(["numpy"])
    note = f"pure = t(0) + (t({args.pure_perms}) - t(0)) x {perms / args.pure_perms:g}"
    line("scan", f"{asks * k}x{features}x{perms}", python_s, rust_s, [peer_s], note)
    search = (list(range(5, features)), 12)
    rust_s, out = best_of(
        lambda: native.within_group_scan(*inputs, perms, 0, *search), args.repeats
    )
    part_s, expected = best_of(
        lambda: pure.within_group_scan(*inputs, args.pure_perms, 0, *search), 1
    )
    agree([out[0], out[1][: args.pure_perms], out[2]], expected, "within_group_scan (conjoin)")
    python_s = base_s + (part_s - base_s) * perms / args.pure_perms
    line("scan_conjoin", f"{asks * k}x{features}x{perms}", python_s, rust_s, [None], note)


if __name__ == "__main__":
    main()
