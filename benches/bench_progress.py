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
Prints ``name,size,off_cpu_s,on_cpu_s,overhead_pct,off_wall_s,on_wall_s,lines_drawn,inside_pct,
note``. ``overhead_pct`` is the on/off difference of the process's CPU time (all its threads),
which other load disturbs less than wall time but still by several percent on a busy machine;
``inside_pct`` is what the progress code costs, counted instead of differenced: how often an
"on" run calls each ``Progress`` method (and how many items pass through ``counted`` and how
many lines are summed for the file estimate), times each call's CPU cost from a tight loop,
over the run's CPU time with progress off; other load on the machine cannot blur it. Target:
under 2%. The note lists the call counts; a last line gives each call's CPU cost.
``--quick`` uses a tenth of the sizes.

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


def accounted(job: Callable[[bool], Any], extra: dict[str, int]) -> dict[str, int]:
    """How often one "on" run calls each ``Progress`` method (plus ``extra`` counts: items
    through ``counted``, lines summed for the file estimate)."""
    from whileai.rows.progress import Progress
    calls = dict.fromkeys(("update", "advance", "estimate", "stage", "finish", "_draw"), 0)
    originals = {name: getattr(Progress, name) for name in calls}

    def counting(name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            calls[name] += 1
            return method(*args, **kwargs)
        return wrapper

    for name, method in originals.items():
        setattr(Progress, name, counting(name, method))
    try:
        with contextlib.redirect_stderr(Sink()):
            job(True)
    finally:
        for name, method in originals.items():
            setattr(Progress, name, method)
    return {**calls, **extra}


def cpu_costs(n: int = 200_000) -> dict[str, float]:
    """CPU seconds of one call of each kind, on an enabled terminal line (tight loops)."""
    from whileai.rows.progress import Progress
    def cpu(fn: Callable[[], Any]) -> float:
        start = time.process_time()
        fn()
        return (time.process_time() - start) / n

    line = Progress("bench", n, enabled=True, stream=Sink())
    items = list(range(n))
    lines = [b'{"prompt": "a line of about the usual length for these rows"}\n'] * 4096

    def plain() -> None:
        for _ in items:
            pass

    def wrapped() -> None:
        for _ in Progress("bench", n, enabled=True, stream=Sink()).counted(items):
            pass

    def updates() -> None:
        for i in items:
            line.update(i, dropped=i)

    def estimates() -> None:
        for _ in items:
            line.estimate(0.5)

    def draws() -> None:
        for _ in range(n // 100):
            line._draw(line.render())

    def sums() -> None:
        for _ in range(max(1, n // 4096)):
            sum(map(len, lines))

    return {
        "advance": cpu(lambda: [line.advance() for _ in items]),
        "counted": max(cpu(wrapped) - cpu(plain), 0.0),
        "update": cpu(updates), "estimate": cpu(estimates), "stage": cpu(updates),
        "finish": cpu(updates), "_draw": cpu(draws) * 100,
        "line_summed": cpu(sums) * n / (max(1, n // 4096) * 4096),
    }


def overhead_pct(calls: dict[str, int], costs: dict[str, float], job_cpu_s: float) -> float:
    """The CPU the progress code costs a run, in % of the run's CPU time with progress off."""
    return 100 * sum(costs[k] * v for k, v in calls.items() if k in costs) / job_cpu_s


def main() -> None:
    args = parser(__doc__).parse_args()
    import whileai.simulations as zps

    scale = 10 if args.quick else 1
    n_train, n_eval, n_export = 300_000 // scale, 5_000 // scale, 100_000 // scale
    print("name,size,off_cpu_s,on_cpu_s,overhead_pct,off_wall_s,on_wall_s,lines_drawn,"
          "inside_pct,note", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        train_path, eval_path, train = write_sets(root, n_train, n_eval)
        index = zps.build_eval_index([str(eval_path)])
        export_rows = [{"prompt": f"where is order {i}?", "final_text": f"order {i} ships today",
                        "scenario_id": f"s{i}"} for i in range(n_export)]
        jobs: list[tuple[str, int, Callable[[bool], Any], dict[str, int]]] = [
            ("decontaminate_file", n_train, lambda p: zps.decontaminate(
                str(train_path), against=index, output=root / "clean.jsonl", progress=p),
             {"line_summed": n_train}),
            ("decontaminate_rows", n_train, lambda p: zps.decontaminate(
                train, against=index, progress=p), {}),
            ("export", n_export, lambda p: zps.export_dataset(
                export_rows, root / "sft.jsonl", progress=p), {"counted": 2 * n_export}),
        ]
        costs = cpu_costs()
        for name, size, job, extra in jobs:
            cpu, wall, draws = on_off(job, args.repeats)
            calls = accounted(job, extra)
            print(f"{name},{size},{cpu[False]:.3f},{cpu[True]:.3f},"
                  f"{100 * (cpu[True] - cpu[False]) / cpu[False]:+.2f},{wall[False]:.3f},"
                  f"{wall[True]:.3f},{draws[True]},{overhead_pct(calls, costs, cpu[False]):.3f},"
                  f"{' '.join(f'{k}={v}' for k, v in calls.items() if v)}", flush=True)
    print(f"per_call,,,,,,,,,{'; '.join(f'{k} {v * 1e9:.0f} ns' for k, v in costs.items())}",
          flush=True)


if __name__ == "__main__":
    main()
