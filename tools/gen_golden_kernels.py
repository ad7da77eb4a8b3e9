"""Write the golden vectors of the ported kernels (resample, scan, ngram, select) as JSON.

Values come from the pure-Python reference (docs/kernels.md). pytest checks both backends
against them and ``cargo test`` (rust/tests/golden_kernels.rs) checks the Rust kernels. Floats
are stored as their IEEE-754 bit patterns (u64), so "equal" means bit for bit. Re-run only when
a kernel's definition changes on purpose:

    python tools/gen_golden_kernels.py
"""

from __future__ import annotations

import json
import struct
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

from whileai._pure import bootstrap, scan  # noqa: E402
from whileai._pure.embed import embed_counts  # noqa: E402
from whileai._pure.ngram import NgramIndex  # noqa: E402
from whileai._pure.select import select_diverse  # noqa: E402

OUT = ROOT / "tests/golden"
MASK64 = (1 << 64) - 1


def bits(values: Any) -> list[int]:
    """The IEEE-754 bit pattern of each float."""
    return [struct.unpack("<Q", struct.pack("<d", float(v)))[0] for v in values]


def resample_cases() -> list[dict[str, Any]]:
    samples = [
        [0.0, 1.0, 1.0, 0.0, 1.0],
        [3.25],
        [0.1 * k - 2.0 for k in range(37)],
        [1e300, -1e300, 5e-324, 2.5],
    ]
    seeds = [0, 7, MASK64, 2**63 + 1]
    cases: list[dict[str, Any]] = []
    for i, values in enumerate(samples):
        seed = seeds[i % len(seeds)]
        for kernel in ("bootstrap_means", "sign_flip_means"):
            out = getattr(bootstrap, kernel)(values, 25, seed)
            cases.append({"kernel": kernel, "args": [values, 25, seed], "bits": bits(out)})
    for a, b in [(samples[0], samples[2]), (samples[1], samples[3]), (samples[2], samples[1])]:
        out = bootstrap.bootstrap_mean_diff(a, b, 25, 11)
        cases.append({"kernel": "bootstrap_mean_diff", "args": [a, b, 25, 11], "bits": bits(out)})
    return cases


def scan_cases() -> list[dict[str, Any]]:
    """Small CSR problems: mixed and uniform groups, duplicate columns, constant features."""
    problems: list[tuple[Any, ...]] = [
        # (indptr, indices, values, n_features, groups, reward, n_perm, seed)
        ([0, 1, 1, 1, 2], [0, 0], [1.0, 1.0], 1, [0, 0, 1, 1], [1.0, 0.0, 0.0, 1.0], 5, 0),
        (
            [0, 2, 3, 5, 5, 7, 8, 8, 9],
            [0, 2, 1, 0, 0, 2, 1, 3, 3],
            [1.0, 0.5, 2.0, -1.0, 3.0, 1.0, 0.25, 1.0, 1.0],
            4,
            [2, 2, 2, 0, 0, 5, 5, 7],
            [1.0, 0.0, 0.5, 1.0, 0.0, 0.25, 0.75, 1.0],
            20,
            MASK64,
        ),
        ([0, 1, 2, 3], [0, 0, 0], [1.0, 1.0, 1.0], 2, [0, 0, 0], [1.0, 1.0, 1.0], 3, 9),
    ]
    # With a conjunction search (conjoin, top): binary features over three asks of five rows.
    rows = [[0, 1], [0], [1, 2], [0, 1, 2], [], [2], [0, 2], [1], [0, 1, 2], [1, 2],
            [0], [0, 1], [2], [1, 2], [0, 1]]
    indptr = [0]
    for r in rows:
        indptr.append(indptr[-1] + len(r))
    flat = [j for r in rows for j in r]
    groups = [0] * 5 + [1] * 5 + [2] * 5
    reward = [1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.5, 1.0, 0.0, 0.0, 1.0]
    for conjoin, top, seed in (([0, 1, 2], 3, 3), ([2, 0], 2, MASK64), ([1, 2, 0], 2, 11)):
        csr = (indptr, flat, [1.0] * len(flat), 3, groups, reward, 16, seed)
        problems.append((*csr, conjoin, top))
    cases = []
    for p in problems:
        rho, floor, support = scan.within_group_scan(*p)
        cases.append(
            {"args": list(p), "rho": bits(rho), "floor": bits(floor), "support": list(support)}
        )
    return cases


EVALS = [
    "Where is my order 4412? It was due yesterday.",
    "注文を確認してください。注文番号は４４１２です",
    "ΟΔΟΣ Σίσυφος went up the hill again",
    "",
    "reset my password please, the link expired",
    "Where is my order 4412? It was due yesterday.",
]
PROBES = [
    "hi, where is my order 4412? it was due",
    "注文を確認して",
    "Σίσυφος went up the hill",
    "nothing shared here at all",
    "RESET my password please the link expired!",
    "",
    # Evasions: zero-width space, soft hyphen, full-width letters, Cyrillic "о", NFD accents.
    "hi, where is my ord\u200ber 4412? it was d\u043ee",
    "\uff52\uff45\uff53\uff45\uff54 my pass\u00adword please, the link expired",
    "\u039f\u0394\u039f\u03a3 \u03a3\u03b9\u0301\u03c3\u03c5\u03c6\u03bf\u03c2 went up",
]


def ngram_cases() -> list[dict[str, Any]]:
    cases = []
    for n in (1, 2, 3, 8):
        index = NgramIndex(EVALS, n)
        best, covered, total, shared = index.scan(PROBES)
        cases.append(
            {
                "evals": EVALS,
                "n": n,
                "probes": PROBES,
                "best": list(best),
                "covered": list(covered),
                "total": list(total),
                "shared": shared,
                "exact": list(index.exact(PROBES)),
                "state_hex": index.to_bytes().hex(),
            }
        )
    return cases


def select_cases() -> list[dict[str, Any]]:
    texts = EVALS + PROBES
    cases = []
    for dim, k, seed, noise, selected in [
        (16, 5, 0, 0.0, []),
        (64, 12, MASK64, 0.05, [0]),
        (7, 4, 3, 0.5, [2, 2, 9]),
    ]:
        counts = list(embed_counts(texts, dim))
        picks = select_diverse(counts, dim, k, seed, noise, selected)
        cases.append({"args": [counts, dim, k, seed, noise, selected], "picks": picks})
    return cases


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    named = [
        ("resample", resample_cases()),
        ("scan", scan_cases()),
        ("ngram", ngram_cases()),
        ("select", select_cases()),
    ]
    for name, cases in named:
        path = OUT / f"{name}.json"
        path.write_text(json.dumps({"cases": cases}, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)} ({len(cases)} cases)", file=sys.stderr)


if __name__ == "__main__":
    main()
