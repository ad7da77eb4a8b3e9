"""Bench what the progress line costs: the same job with ``progress=True`` and ``progress=False``.

Three jobs, each run once to warm up, then with progress on and off back to back (``--repeats``
pairs, the order swapped every pair, best of each side), in one process on the native backend:

- ``decontaminate_file``: 300,000 streamed JSONL train rows (a prompt of 20-120 words, 1% copied
  from the eval set) against 5,000 eval rows, ``output=`` a file: the per-chunk update and the
  bytes-read estimate;
- ``decontaminate_rows``: the same rows as an in-memory list (the per-chunk update only);
- ``export``: ``export_dataset`` of 100,000 short rows (a per-row ``advance`` while building
  and while writing, the finest-grained use).

stderr is replaced by a stream that says it is a terminal and throws the text away, so the "on"
runs take the terminal path (redrawn at most five times a second), the costlier of the two.
Prints ``name,size,off_cpu_s,on_cpu_s,overhead_pct,off_wall_s,on_wall_s,lines_drawn,note``:
the overhead is taken on the process's CPU time (all its threads), which other load on the
machine disturbs far less than wall time. Target: overhead < 2%. A last line gives the cost of
one ``advance()`` and one ``update()`` call. ``--quick`` uses a tenth of the sizes.

    .venv/bin/python benches/bench_progress.py [--quick] [--repeats 5]
"""

from __future__ import annotations

import contextlib
import io
import json
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _bench import WORDS, parser


class Sink(io.StringIO):
    """A terminal that forgets what it is shown; counts the redraws."""

    draws = 0

    def isatty(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.draws += text.count("\r")
        return len(text)


def _prompt(rng: random.Random) -> str:
    return " ".join(rng.choices(WORDS, k=rng.randint(20, 120)))


def write_sets(root: Path, n_train: int, n_eval: int) -> tuple[Path, Path, list[dict[str, Any]]]:
    rng = random.Random(0)
    evals = [{"prompt": _prompt(rng), "task_id": f"e{i}"} for i in range(n_eval)]
    train = [{"prompt": rng.choice(evals)["prompt"] if rng.random() < 0.01 else _prompt(rng),
              "task_id": f"t{i}"} for i in range(n_train)]
    for path, rows in ((root / "eval.jsonl", evals), (root / "train.jsonl", train)):
        with path.open("w") as handle:
            handle.writelines(json.dumps(row) + "\n" for row in rows)
    return root / "train.jsonl", root / "eval.jsonl", train


def on_off(job: Callable[[bool], Any], repeats: int) -> tuple[dict[bool, float], ...]:
    """Best-of CPU and wall seconds with progress off and on, and the redraws of an "on" run."""
    cpu = {False: float("inf"), True: float("inf")}
    wall = dict(cpu)
    draws = 0
    with contextlib.redirect_stderr(Sink()):
        job(False)  # warm up: caches, the allocator, the index
    for rep in range(max(1, repeats)):
        for progress in (False, True) if rep % 2 == 0 else (True, False):
            sink = Sink()
            with contextlib.redirect_stderr(sink):
                start, start_cpu = time.perf_counter(), time.process_time()
                job(progress)
                cpu[progress] = min(cpu[progress], time.process_time() - start_cpu)
                wall[progress] = min(wall[progress], time.perf_counter() - start)
            draws = sink.draws if progress else draws
    return cpu, wall, {True: draws}


def per_call_ns(calls: int = 1_000_000) -> tuple[float, float]:
    """Nanoseconds per ``advance()`` and per ``update()`` on an enabled terminal line."""
    from whileai.simulations.progress import Progress

    line = Progress("bench", calls, enabled=True, stream=Sink())
    start = time.perf_counter()
    for _ in range(calls):
        line.advance()
    advance = (time.perf_counter() - start) / calls * 1e9
    start = time.perf_counter()
    for i in range(calls):
        line.update(i, dropped=i)
    return advance, (time.perf_counter() - start) / calls * 1e9


def main() -> None:
    args = parser(__doc__).parse_args()
    import whileai.simulations as zps

    scale = 10 if args.quick else 1
    n_train, n_eval, n_export = 300_000 // scale, 5_000 // scale, 100_000 // scale
    print("name,size,off_cpu_s,on_cpu_s,overhead_pct,off_wall_s,on_wall_s,lines_drawn,note",
          flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        train_path, eval_path, train = write_sets(root, n_train, n_eval)
        index = zps.build_eval_index([str(eval_path)])
        jobs: list[tuple[str, int, Callable[[bool], Any]]] = [
            ("decontaminate_file", n_train, lambda p: zps.decontaminate(
                str(train_path), against=index, output=root / "clean.jsonl", progress=p)),
            ("decontaminate_rows", n_train, lambda p: zps.decontaminate(
                train, against=index, progress=p)),
        ]
        export_rows = [{"prompt": f"where is order {i}?", "final_text": f"order {i} ships today",
                        "scenario_id": f"s{i}"} for i in range(n_export)]
        jobs.append(("export", n_export, lambda p: zps.export_dataset(
            export_rows, root / "sft.jsonl", progress=p)))
        for name, size, job in jobs:
            cpu, wall, draws = on_off(job, args.repeats)
            print(f"{name},{size},{cpu[False]:.3f},{cpu[True]:.3f},"
                  f"{100 * (cpu[True] - cpu[False]) / cpu[False]:+.2f},{wall[False]:.3f},"
                  f"{wall[True]:.3f},{draws[True]}", flush=True)
    advance, update = per_call_ns()
    print(f"per_call,1000000,,,,,,,advance {advance:.0f} ns; update {update:.0f} ns", flush=True)


if __name__ == "__main__":
    main()
