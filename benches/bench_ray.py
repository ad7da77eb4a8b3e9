"""``decontaminate`` of generated rows on a local Ray cluster vs one process: ratio and memory.

Writes ``--rows`` seeded train rows (default 5,000,000; a prompt of 20-120 words, 1% copied from
the eval set, the generator of ``bench_large.py``) and 10,000 eval rows as JSONL, then runs each
side in a child process of its own (so one's peak memory is not the other's):

1. ``single``: ``zps.decontaminate(train.jsonl, against=[eval.jsonl], output=clean.jsonl)``;
2. ``ray``: ``ray.init(num_cpus=--cpus)`` (files under a temp dir, no usage report), then
   ``decontaminate_dataset(train.jsonl, index, output=<dir>)``: one task per 32 MiB span of the
   file, kept rows written as Parquet by the tasks;
3. ``dataset`` (with ``--dataset``): the same through ``ray.data.read_text`` and
   ``map_batches`` (a Dataset's path; its example row numbers follow Ray's order, see
   docs/scale.md).

Checks that the reports are equal (but for ``output``) and that the kept rows are the same
multiset, then prints ``name,rows,seconds,cpu_s,ratio,driver_peak_mib,worker_peak_mib,
worker_uss_mib,note``. For the cluster: the driver's peak RSS (VmHWM); the largest VmHWM of
any Ray worker process; and the largest private memory (USS: Private_Clean + Private_Dirty of
``/proc/<pid>/smaps_rollup``) any worker held, sampled every 0.2 s. VmHWM counts the shared
object-store pages a worker touched; USS does not count pages another process maps too. CPU
seconds: the process's own, plus for the cluster every Ray worker's (last sample). On 2 cores
no speed-up is expected; the point is memory per worker that stays flat as the rows grow.

    .venv/bin/python benches/bench_ray.py [--rows 1000000] [--cpus 2] [--dataset] [--quick]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from _bench import cpu_seconds_of, parser, peak_rss_of
from bench_large import write_sets


def _parent(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def _ray_workers(root: int) -> list[int]:
    """Pids of the Ray worker processes (named ``ray::...``) descended from process ``root``.

    Only this cluster's: another Ray cluster on the machine (another user's job) is not ours.
    """
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmd = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if cmd.startswith(b"ray::"):
                pid = int(entry.name)
                while pid > 1 and pid != root:
                    pid = _parent(pid)
                if pid == root:
                    pids.append(int(entry.name))
    return pids


def private_mib(pid: int) -> float:
    """Private_Clean + Private_Dirty of a process (its USS), in MiB; NaN once it is gone."""
    try:
        text = Path(f"/proc/{pid}/smaps_rollup").read_text()
    except OSError:
        return float("nan")
    kib = sum(int(line.split()[1]) for line in text.splitlines()
              if line.startswith(("Private_Clean:", "Private_Dirty:")))
    return kib / 1024


class Sampler:
    """Polls the Ray workers until stopped: largest VmHWM and USS, last CPU seconds, per pid."""

    def __init__(self) -> None:
        self.peak: dict[int, float] = {}
        self.uss: dict[int, float] = {}
        self.cpu: dict[int, float] = {}
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self.done.wait(0.2):
            for pid in _ray_workers(os.getpid()):
                for table, value in ((self.peak, peak_rss_of(pid)), (self.uss, private_mib(pid)),
                                     (self.cpu, cpu_seconds_of(pid))):
                    if value == value:  # not NaN: the process was still there
                        table[pid] = max(table.get(pid, 0.0), value)

    def __enter__(self) -> Sampler:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        self.thread.join()


def _digest(lines: Any) -> int:
    """An order-free digest of a multiset of lines (sum of their sha256, mod 2**256)."""
    total = 0
    for line in lines:
        total += int.from_bytes(hashlib.sha256(line.encode()).digest(), "big")
    return total % (1 << 256)


def _child(mode: str, root: Path, cpus: int) -> dict[str, Any]:
    """Run one side in this (child) process; return its timings, memory, report and digest."""
    import whileai.simulations as zps

    train, evals = root / "train.jsonl", root / "eval.jsonl"
    if mode == "single":
        start, cpu = time.perf_counter(), time.process_time()
        _, report = zps.decontaminate(str(train), against=[str(evals)],
                                      output=str(root / "clean.jsonl"), progress=False)
        seconds, cpu_s = time.perf_counter() - start, time.process_time() - cpu
        with (root / "clean.jsonl").open(encoding="utf-8") as f:
            digest = _digest(line.rstrip("\n") for line in f)
        return {"seconds": seconds, "cpu_s": cpu_s, "report": report, "digest": str(digest),
                "driver": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    os.environ.update(RAY_USAGE_STATS_ENABLED="0", RAY_AUTH_MODE="disabled",
                      RAY_TMPDIR=str(root), HOME=str(root))
    import ray

    from whileai.scale import decontaminate_dataset

    ray.init(num_cpus=cpus, include_dashboard=False, _temp_dir=str(root / "ray"),
             _node_ip_address="127.0.0.1", log_to_driver=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    try:
        index = zps.build_eval_index([str(evals)])
        start, cpu = time.perf_counter(), time.process_time()
        with Sampler() as sampler:
            rows = ray.data.read_text(str(train)) if mode == "dataset" else str(train)
            _, report = decontaminate_dataset(rows, index, column="text" if mode == "dataset"
                                              else None, output=root / f"kept-{mode}",
                                              progress=False)
            seconds = time.perf_counter() - start
        driver = peak_rss_of(os.getpid())  # before the check below reads the kept rows back
        cpu_s = time.process_time() - cpu + sum(sampler.cpu.values())
    finally:
        ray.shutdown()
    import pyarrow.parquet as pq

    texts = pq.read_table(str(root / f"kept-{mode}"), columns=["text"]).column("text")
    digest = _digest(text for chunk in texts.chunks for text in chunk.to_pylist())
    return {"seconds": seconds, "cpu_s": cpu_s, "report": report, "digest": str(digest),
            "driver": driver, "workers": len(sampler.peak),
            "peak": max(sampler.peak.values(), default=0.0),
            "uss": max(sampler.uss.values(), default=0.0)}


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--rows", type=int, default=5_000_000, help="train rows")
    p.add_argument("--cpus", type=int, default=2, help="CPUs of the local Ray cluster")
    p.add_argument("--dataset", action="store_true", help="also the ray.data.read_text path")
    p.add_argument("--data", help="a folder to keep the generated files in (reused if there)")
    p.add_argument("--child", choices=("single", "ray", "dataset"), help=argparse.SUPPRESS)
    p.add_argument("--root", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        result = _child(args.child, Path(args.root), args.cpus)
        Path(args.root, f"{args.child}.json").write_text(json.dumps(result), encoding="utf-8")
        return
    rows = 100_000 if args.quick else args.rows
    print("name,rows,seconds,cpu_s,ratio,driver_peak_mib,worker_peak_mib,worker_uss_mib,note",
          flush=True)
    with tempfile.TemporaryDirectory(prefix="bray") as tmp:
        root = Path(tmp)
        data = Path(args.data) if args.data else root
        marker = data / f"rows-{rows}"
        if not marker.exists():
            start = time.perf_counter()
            data.mkdir(parents=True, exist_ok=True)
            write_sets(data, rows, 10_000)
            marker.touch()
            print(f"# wrote {rows} rows in {time.perf_counter() - start:.1f} s", file=sys.stderr)
        for name in ("train.jsonl", "eval.jsonl"):
            if data != root:
                (root / name).symlink_to((data / name).resolve())
        modes = ("single", "ray", "dataset") if args.dataset else ("single", "ray")
        results: dict[str, dict[str, Any]] = {}
        for mode in modes:
            subprocess.run([sys.executable, __file__, "--child", mode, "--root", str(root),
                            "--cpus", str(args.cpus)], check=True)
            results[mode] = json.loads((root / f"{mode}.json").read_text(encoding="utf-8"))
            _line(mode, rows, results, args.cpus)
    if any(results[m]["digest"] != results["single"]["digest"] for m in modes):
        sys.exit("the cluster kept other rows than the single process")
    if results["ray"]["report"] != {**results["single"]["report"],
                                    "output": results["ray"]["report"]["output"]}:
        sys.exit("the cluster's report differs from the single process's")


def _line(mode: str, rows: int, results: dict[str, dict[str, Any]], cpus: int) -> None:
    got, single = results[mode], results["single"]
    same = {**got["report"], "output": None} == {**single["report"], "output": None}
    ratio = got["seconds"] / single["seconds"]
    if mode == "single":
        print(f"decontaminate_single,{rows},{got['seconds']:.1f},{got['cpu_s']:.1f},1.00,"
              f"{got['driver']:.0f},,,one process (streamed JSONL in and out)", flush=True)
        return
    what = "JSONL path, spans" if mode == "ray" else "read_text Dataset, map_batches"
    print(f"decontaminate_{mode},{rows},{got['seconds']:.1f},{got['cpu_s']:.1f},{ratio:.2f},"
          f"{got['driver']:.0f},{got['peak']:.0f},{got['uss']:.0f},{what}; {cpus} CPUs; "
          f"max over {got['workers']} workers; report equal {same}; kept rows equal "
          f"{got['digest'] == single['digest']}", flush=True)


if __name__ == "__main__":
    main()
