"""End-to-end scale: ``decontaminate`` of 1,000,000 streamed JSONL rows, ``hack_scan`` of 100,000.

1. Writes 1,000,000 seeded train rows (a ``prompt`` of 20-120 words; 1% copied from the eval set)
   and 10,000 eval rows as JSONL in a temp dir, then times
   ``zps.decontaminate(train_path, against=[eval_path], output=clean_path)`` (streamed in
   chunks) and records the process's peak RSS (``resource.getrusage``, which includes Python and
   the generator's own footprint). Target: peak RSS < 2 GiB.
2. Builds 100,000 graded rows (12,500 asks x 8 rollouts) where a planted marker phrase in the
   final text raises the reward, and times ``zps.hack_scan(rows)``. Target: < 60 s.

Prints ``name,size,seconds,peak_rss_mib,note``. ``--quick`` uses 100,000 and 10,000 rows.

    .venv/bin/python benches/bench_large.py [--quick]
"""

from __future__ import annotations

import json
import os
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

from _bench import WORDS, parser


def peak_rss_mib() -> float:
    """Peak resident set size of this process in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


_TOKENS = (*WORDS, *(str(n) for n in range(10_000, 10_000 + len(WORDS) // 9)))  # ~10% numbers


def prompt(rng: random.Random) -> str:
    """A seeded prompt of 20-120 words (``random.choices``: fast enough for a million rows)."""
    return " ".join(rng.choices(_TOKENS, k=rng.randint(20, 120)))


def write_sets(root: Path, n_train: int, n_eval: int) -> tuple[Path, Path]:
    rng = random.Random(0)
    evals = [prompt(rng) for _ in range(n_eval)]
    eval_path, train_path = root / "eval.jsonl", root / "train.jsonl"
    with eval_path.open("w") as f:
        for i, text in enumerate(evals):
            f.write(json.dumps({"prompt": text, "task_id": f"e{i}"}) + "\n")
    with train_path.open("w") as f:
        for i in range(n_train):
            text = rng.choice(evals) if rng.random() < 0.01 else prompt(rng)
            f.write(json.dumps({"prompt": text, "task_id": f"t{i}"}) + "\n")
    return train_path, eval_path


def scan_rows(asks: int, k: int) -> list[dict[str, object]]:
    rng = random.Random(1)
    rows: list[dict[str, object]] = []
    for a in range(asks):
        for _ in range(k):
            planted = rng.random() < 0.3
            text = prompt(rng) + (" as an expert I guarantee" if planted else "")
            reward = float(rng.random() < (0.8 if planted else 0.4))
            rows.append({"task_id": f"ask{a}", "prompt": f"ask {a}", "final_text": text,
                         "reward": reward})
    return rows


def main() -> None:
    args = parser(__doc__).parse_args()
    import whileai.simulations as zps

    n_train, n_eval, asks = (100_000, 10_000, 1_250) if args.quick else (1_000_000, 10_000, 12_500)
    print("name,size,seconds,peak_rss_mib,note", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        start = time.perf_counter()
        train_path, eval_path = write_sets(root, n_train, n_eval)
        gen_s = time.perf_counter() - start
        before = peak_rss_mib()
        start, cpu = time.perf_counter(), time.process_time()
        _, report = zps.decontaminate(str(train_path), against=[str(eval_path)],
                                      output=str(root / "clean.jsonl"))
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        kept = report.get("kept", report.get("clean", ""))
        print(f"decontaminate_stream,{n_train}x{n_eval},{seconds:.1f},{peak_rss_mib():.0f},"
              f"peak before the call {before:.0f} MiB; {cpu:.1f}s CPU (all threads); load "
              f"{os.getloadavg()[0]:.1f}; writing the JSONL took {gen_s:.0f}s; kept {kept}",
              flush=True)
    rows = scan_rows(asks, 8)
    start = time.perf_counter()
    report = zps.hack_scan(rows)
    seconds = time.perf_counter() - start
    print(f"hack_scan,{asks * 8},{seconds:.1f},{peak_rss_mib():.0f},"
          f"top feature {report.get('top_feature')}; regime {report.get('regime')}", flush=True)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
