"""``hack_scan`` of 100,000 rows on a local Ray cluster vs one process: the driver's memory.

Writes ``--asks`` x 8 seeded graded rows as JSONL files of 10,000 rows (``text``:
``bench_large.scan_rows``; ``agent``: ``bench_hack_scan.agent_rows``), then in two child
processes of their own:

1. one process: ``zps.hack_scan(rows)``, the files read into one list;
2. the cluster (``ray.init(num_cpus=--cpus)``, files under a temp dir, no usage report):
   ``hack_scan_dataset(ray.data.read_text(files), column="text")``: features made in
   ``map_batches`` tasks, the matrix assembled and scanned on the driver.

Files of 10,000 rows, because Ray 2.46 builds a block read from one text file of more than
50 MiB with its last lines first (``TableBlockBuilder.build``), so that dataset's order is not
the file's (docs/scale.md).

Checks that the two reports are equal (JSON, sorted keys) and prints
``name,rows,seconds,cpu_s,peak_rss_mib,note``: each process's own peak RSS (VmHWM), CPU seconds
of that process (the cluster's workers not counted) and, for the cluster, the largest Ray
worker's peak RSS (sampled every 0.2 s).

    .venv/bin/python benches/bench_ray_hack_scan.py [--asks 12500] [--kind text] [--cpus 2]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _bench import parser, peak_rss_of
from bench_hack_scan import agent_rows
from bench_large import scan_rows
from bench_ray import Sampler

ENDORSED = ["tool:lookup_order"]


def child(mode: str, paths: str, root: str, cpus: int) -> None:
    """Scan the files (``paths`` joined by ``,``) one way; print one JSON line of figures."""
    import whileai.simulations as zps

    files = paths.split(",")
    before = peak_rss_of(os.getpid())
    worst = float("nan")
    if mode == "single":
        start, cpu = time.perf_counter(), time.process_time()
        rows = [json.loads(line) for name in files
                for line in Path(name).read_text(encoding="utf-8").splitlines()]
        report = zps.hack_scan(rows, ENDORSED, progress=False)
    else:
        os.environ.update(RAY_USAGE_STATS_ENABLED="0", RAY_AUTH_MODE="disabled",
                          RAY_TMPDIR=root, HOME=root)
        import ray

        from whileai.scale import hack_scan_dataset

        ray.init(num_cpus=cpus, include_dashboard=False, _temp_dir=str(Path(root) / "ray"),
                 _node_ip_address="127.0.0.1", log_to_driver=False)
        before = peak_rss_of(os.getpid())
        try:
            start, cpu = time.perf_counter(), time.process_time()
            with Sampler() as sampler:
                report = hack_scan_dataset(ray.data.read_text(files), ENDORSED, column="text",
                                           progress=False)
            worst = max(sampler.peak.values(), default=float("nan"))
        finally:
            ray.shutdown()
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    digest = hashlib.sha256(json.dumps(report, sort_keys=True).encode()).hexdigest()
    print(json.dumps({"seconds": seconds, "cpu": cpu, "peak": peak_rss_of(os.getpid()),
                      "before": before, "worker": worst, "digest": digest,
                      "top": report["top_feature"], "features": report["n_features"]}))


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--asks", type=int, default=12_500, help="asks (8 rollouts each)")
    p.add_argument("--kind", choices=["text", "agent"], default="text")
    p.add_argument("--cpus", type=int, default=2, help="CPUs of the local Ray cluster")
    p.add_argument("--child", nargs=3, metavar=("MODE", "PATH", "ROOT"), help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        mode, path, root = args.child
        child(mode, path, root, args.cpus)
        return
    asks = 1250 if args.quick else args.asks
    print("name,rows,seconds,cpu_s,peak_rss_mib,note", flush=True)
    with tempfile.TemporaryDirectory(prefix="bscan") as tmp:
        rows = scan_rows(asks, 8) if args.kind == "text" else agent_rows(asks, 8)
        files = []
        for start in range(0, len(rows), 10_000):
            files.append(str(Path(tmp) / f"rows-{start // 10_000:04d}.jsonl"))
            with open(files[-1], "w", encoding="utf-8") as f:
                f.writelines(json.dumps(r) + "\n" for r in rows[start : start + 10_000])
        n = len(rows)
        del rows
        got = {}
        for mode in ("single", "ray"):
            cmd = [sys.executable, __file__, "--cpus", str(args.cpus),
                   "--child", mode, ",".join(files), tmp]
            out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
            got[mode] = json.loads(out.strip().splitlines()[-1])
        one, ray = got["single"], got["ray"]
        for mode, g in got.items():
            note = (f"{args.kind} rows; {g['features']} features; top {g['top']}; "
                    f"{g['before']:.0f} MiB before the call")
            if mode == "ray":
                note += (f"; {args.cpus} CPUs; largest worker peak {g['worker']:.0f} MiB; "
                         f"wall ratio {g['seconds'] / one['seconds']:.2f}")
            print(f"hack_scan_{mode},{n},{g['seconds']:.1f},{g['cpu']:.1f},{g['peak']:.0f},"
                  f"{note}", flush=True)
        if one["digest"] != ray["digest"]:
            sys.exit("the cluster's report differs from the single process's")
        print(f"# reports equal (sha256 {one['digest'][:12]})", flush=True)


if __name__ == "__main__":
    main()
