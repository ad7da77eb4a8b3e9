"""Bench decontamination: the n-gram index scan, pure Python vs Rust, and words per second.

5,000 seeded eval prompts and 50,000 train prompts of 20-120 words (``--quick``: 500 x 5,000),
~2% of the train prompts copied (upper-cased) and ~3% lightly edited from the eval set. The index
is built once; the timed work is ``NgramIndex.scan`` over every train prompt (tokenising,
hashing, n-gram lookups, overlap counts), which is what ``decontaminate`` spends its time on.
Prints ``name,size,python_s,rust_s,speedup,rust_words_per_s,note``. Train rows are independent
units, so the pure time is measured on the first ``--pure-sample`` fraction of the rows (checked
equal to the native result for them) and scaled linearly; the note says so. Target: speedup >= 40.

A second line, ``decontaminate``, times the public call end to end on 20,000 train rows against
2,000 eval rows (``--quick``: 2,000 x 200), the same kind of texts: native in this process, pure
in full in a child process with ``WHILEAI_PURE=1``; the two reports and kept rows must hash the
same. Target: speedup >= 100.

A third line with ``--stream``, ``decontaminate_stream``: a JSONL file of 1,000,000 train rows
against 10,000 eval rows (``bench_large.py``'s data; ``--quick``: 100,000) to a JSONL file,
native only, once (time, CPU time, yardstick, load, report sha256). Target: <= 5 s.

    .venv/bin/python benches/bench_decontam.py [--quick] [--pure-sample 0.2] [--repeats 3]
    .venv/bin/python benches/bench_decontam.py --stream [--quick]
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
import sys
import time
from typing import Any

from _bench import agree, backends, best_of, header, line, make_texts, parser, yardstick_ms

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


def make_vocab_sets(n_train: int, n_eval: int, vocab: int,
                    seed: int = 0) -> tuple[list[str], list[str]]:
    """Texts of 20-120 words drawn from ``vocab`` seeded words; 5% of the train texts are
    planted copies of eval texts (issue 38's workload)."""
    rng = random.Random(seed)
    words = [f"w{rng.getrandbits(40):x}" for _ in range(vocab)]

    def text() -> str:
        return " ".join(rng.choices(words, k=rng.randint(20, 120)))

    evals = [text() for _ in range(n_eval)]
    train = [rng.choice(evals) if rng.random() < 0.05 else text() for _ in range(n_train)]
    return train, evals


def e2e_rows(quick: bool, vocab: int = 0) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Train and eval rows of the end-to-end line (task ids never shared); ``vocab`` > 0
    draws the words from that many (:func:`make_vocab_sets`)."""
    sizes = (2000, 200) if quick else (20000, 2000)
    train, evals = make_vocab_sets(*sizes, vocab, seed=3) if vocab else make_sets(*sizes, seed=3)
    return (
        [{"prompt": t, "task_id": f"t{i}"} for i, t in enumerate(train)],
        [{"prompt": t, "task_id": f"e{i}"} for i, t in enumerate(evals)],
    )


def run_e2e(quick: bool, vocab: int = 0) -> tuple[float, str, dict[str, Any], float]:
    """Time ``decontaminate`` on this process's backend, after a first call: (seconds, digest,
    report, CPU seconds)."""
    import whileai.simulations as zps

    rows, evals = e2e_rows(quick, vocab)
    zps.decontaminate(rows[:200], against=evals[:20])
    cpu, start = time.process_time(), time.perf_counter()
    clean, report = zps.decontaminate(rows, against=evals)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    blob = json.dumps([clean, report], sort_keys=True).encode()
    return seconds, hashlib.sha256(blob).hexdigest(), report, cpu


def e2e_line(args: Any) -> None:
    if args.e2e_child:
        seconds, digest, _, _ = run_e2e(args.quick, args.vocab)
        print(json.dumps({"seconds": seconds, "digest": digest}))
        return
    native_s, digest, report, cpu = min(run_e2e(args.quick, args.vocab)
                                        for _ in range(max(1, args.repeats)))
    child = [sys.executable, __file__, "--e2e-child", "--vocab", str(args.vocab),
             *(["--quick"] if args.quick else [])]
    env = {**os.environ, "WHILEAI_PURE": "1"}
    out = subprocess.run(child, env=env, capture_output=True, text=True, check=True).stdout
    pure = json.loads(out.strip().splitlines()[-1])
    if pure["digest"] != digest:
        sys.exit("backends disagree on decontaminate: the bench is void")
    size = "2000x200" if args.quick else "20000x2000"
    note = (f"end to end; {report['dropped']} dropped; report sha256 {digest[:12]}; "
            f"native cpu {cpu:.4f}s; yardstick {yardstick_ms():.1f} ms; "
            f"load {os.getloadavg()[0]:.2f}")
    name = f"decontaminate_v{args.vocab}" if args.vocab else "decontaminate"
    line(name, size, pure["seconds"], native_s, [None], note)


def stream_line(quick: bool) -> None:
    """Time the streamed file-to-file call once (native), on ``bench_large.py``'s data."""
    import tempfile
    from pathlib import Path

    import whileai.simulations as zps
    from bench_large import write_sets

    n_train, n_eval = (100_000, 10_000) if quick else (1_000_000, 10_000)
    with tempfile.TemporaryDirectory() as tmp:
        train, evals = write_sets(Path(tmp), n_train, n_eval)
        cpu, start = time.process_time(), time.perf_counter()
        _, report = zps.decontaminate(str(train), against=[str(evals)],
                                      output=str(Path(tmp) / "clean.jsonl"), progress=False)
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    report = {k: v for k, v in report.items() if k != "output"}  # a temp path
    digest = hashlib.sha256(json.dumps(report, sort_keys=True).encode()).hexdigest()
    print(f"decontaminate_stream,{n_train}x{n_eval},,{seconds:.3f},,,{report['dropped']} "
          f"dropped; report sha256 {digest[:12]}; cpu {cpu:.2f}s; yardstick "
          f"{yardstick_ms():.1f} ms; load {os.getloadavg()[0]:.2f}")


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--pure-sample", type=float, default=0.2)
    p.add_argument("--e2e-child", action="store_true", help=argparse_hidden())
    p.add_argument("--only-e2e", action="store_true", help="print the end-to-end line only")
    p.add_argument("--vocab", type=int, default=0,
                   help="end to end on texts from this many words, 5%% planted copies "
                        "(issue 38: 5000); 0: the mixed texts of the scan line")
    p.add_argument("--stream", action="store_true",
                   help="time the streamed JSONL file line (1,000,000 x 10,000) only")
    args = p.parse_args()
    if args.stream:
        header(["rust_words_per_s"])
        stream_line(args.quick)
        return
    if args.e2e_child or args.only_e2e:
        if args.only_e2e:
            header(["rust_words_per_s"])
        e2e_line(args)
        return
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
    e2e_line(args)


def argparse_hidden() -> str:
    import argparse

    return argparse.SUPPRESS


if __name__ == "__main__":
    main()
