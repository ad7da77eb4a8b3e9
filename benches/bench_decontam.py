"""Bench decontamination: the n-gram index scan, pure Python vs Rust, and words per second.

5,000 seeded eval prompts and 50,000 train prompts of 20-120 words (``--quick``: 500 x 5,000),
~2% of the train prompts copied (upper-cased) and ~3% lightly edited from the eval set. The index
is built once; the timed work is ``NgramIndex.scan`` over every train prompt (tokenising,
hashing, n-gram lookups, overlap counts), which is what ``decontaminate`` spends its time on.
Prints ``name,size,python_s,rust_s,speedup,rust_words_per_s,note``. Train rows are independent
units, so the pure time is measured on the first ``--pure-sample`` fraction of the rows (checked
equal to the native result for them) and scaled linearly; the note says so. Target: speedup >= 40.

    .venv/bin/python benches/bench_decontam.py [--quick] [--pure-sample 0.2] [--repeats 3]
"""

from __future__ import annotations

import random

from _bench import agree, backends, best_of, header, line, make_texts, parser

N = 8


def make_sets(n_train: int, n_eval: int, seed: int = 0) -> tuple[list[str], list[str]]:
    """Train prompts (some copies and light edits of eval prompts) and eval prompts."""
    rng = random.Random(seed)
    evals = make_texts(n_eval, seed + 1, 20, 120)
    train = make_texts(n_train, seed + 2, 20, 120)
    for i in range(n_train):
        r = rng.random()
        if r < 0.02:
            train[i] = rng.choice(evals).upper()
        elif r < 0.05:
            words = rng.choice(evals).split()
            words[rng.randrange(len(words))] = "changed"
            train[i] = " ".join(words)
    return train, evals


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--pure-sample", type=float, default=0.2)
    args = p.parse_args()
    pure, native = backends()
    n_train, n_eval = (5000, 500) if args.quick else (50000, 5000)
    train, evals = make_sets(n_train, n_eval)
    words = sum(len(t.split()) for t in train)
    sample = max(1, int(n_train * args.pure_sample))
    n_index, p_index = native.NgramIndex(evals, N), pure.NgramIndex(evals, N)
    rust_s, out = best_of(lambda: n_index.scan(train), args.repeats)
    py_s, expected = best_of(lambda: p_index.scan(train[:sample]), 1)
    agree(native.NgramIndex(evals, N).scan(train[:sample]), expected, "NgramIndex.scan")
    hits = sum(1 for b in out[0] if b >= 0)
    header(["rust_words_per_s"])
    note = "" if sample == n_train else f"pure on {sample} rows x{n_train / sample:g}"
    note += f"; {words} words; {hits} rows share an {N}-gram"
    # The words/s column is an absolute figure, not a ratio (line() divides by rust_s).
    line("decontam_scan", f"{n_train}x{n_eval}", py_s * n_train / sample, rust_s, [words], note)


if __name__ == "__main__":
    main()
