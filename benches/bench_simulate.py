"""Bench the offline engine: rows per second of ``simulate`` (template writer + seeded agent).

Runs ``explore`` and ``rl`` (``repeats=8``) on the 4-tool orders spec and the 14-tool spec at
a few sizes, once with the pure-Python kernels (``WHILEAI_PURE=1``) and once with the native
module (where it is built; a kernel it lacks is still served by Python). Each timing is the
best of several repeats in a fresh subprocess, and both backends must produce the same rows
(compared by a hash of the JSON rows at ``concurrency: 1``). Prints one CSV line per case:
``name,size,python_s,rust_s,speedup,python_rows_per_s,rust_rows_per_s,note`` (the note is the
backend that served ``select_diverse``).

The rows-per-second figure at several sizes shows whether engine overhead grows faster than
the rows (it should stay flat).

    .venv/bin/python benches/bench_simulate.py [--sizes 500,2000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _bench import header  # noqa: E402

SPECS = ("orders", "wide")
MODES = ("explore", "rl")


def worker(spec_name: str, mode: str, size: int, concurrency: int) -> None:
    """Run one simulation and print ``seconds,rows,hash,select_backend`` (subprocess side)."""
    import engine_specs
    import whileai.simulations as zps
    from whileai import _backend

    tools, policy = {
        "orders": (engine_specs.ORDERS_TOOLS, engine_specs.ORDERS_POLICY),
        "wide": (engine_specs.WIDE_TOOLS, engine_specs.WIDE_POLICY),
    }[spec_name]
    knobs: dict = {"mode": mode, "budget": size, "simulator": False, "progress": False}
    if concurrency:  # 0: the product's default (rollouts on the calling thread for this agent)
        knobs["advanced"] = {"concurrency": concurrency}
    if mode == "rl":
        knobs["repeats"] = 8
    start = time.perf_counter()
    data = zps.simulate(zps.seeded_agent(tools), tools=tools, system_prompt=policy, **knobs)
    seconds = time.perf_counter() - start
    digest = hashlib.sha256(json.dumps(data.trajectories, sort_keys=True).encode()).hexdigest()
    backend = _backend.KERNEL_BACKENDS.get("select_diverse", "python")
    print(f"{seconds},{len(data)},{digest[:16]},{backend}")


def timed(spec: str, mode: str, size: int, *, pure: bool, repeats: int,
          concurrency: int) -> tuple[float, str, str] | None:
    env = dict(os.environ)
    env.pop("WHILEAI_PURE", None)
    if pure:
        env["WHILEAI_PURE"] = "1"
    best, digest, backend = float("inf"), "", ""
    for _ in range(repeats):
        out = subprocess.run(
            [sys.executable, __file__, "--worker", spec, mode, str(size), str(concurrency)],
            capture_output=True, text=True, env=env, check=False)
        if out.returncode != 0:
            print(out.stderr, file=sys.stderr)
            return None
        seconds, rows, digest, backend = out.stdout.strip().split(",")
        if int(rows) != size:
            raise SystemExit(f"{spec}/{mode}/{size}: got {rows} rows")
        best = min(best, float(seconds))
    return best, digest, backend


def native_available() -> bool:
    try:
        import whileai._native  # noqa: F401
    except ImportError:
        return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="500,2000")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=0,
                        help="advanced['concurrency'] to force (default: simulate's own choice)")
    parser.add_argument("--worker", nargs=4, metavar=("SPEC", "MODE", "SIZE", "CONC"))
    args = parser.parse_args()
    if args.worker:
        spec, mode, size, conc = args.worker
        worker(spec, mode, int(size), int(conc))
        return
    sizes = [int(s) for s in args.sizes.split(",")]
    native = native_available()
    header(["python_rows_per_s", "rust_rows_per_s"])  # the note column: select backend
    for spec in SPECS:
        for mode in MODES:
            for size in sizes:
                py = timed(spec, mode, size, pure=True, repeats=args.repeats,
                           concurrency=args.concurrency)
                rs = timed(spec, mode, size, pure=False, repeats=args.repeats,
                           concurrency=args.concurrency) if native else None
                if py and rs:
                    # same rows from both backends (checked where the order is fixed)
                    same_py = timed(spec, mode, min(size, 200), pure=True, repeats=1,
                                    concurrency=1)
                    same_rs = timed(spec, mode, min(size, 200), pure=False, repeats=1,
                                    concurrency=1)
                    if same_py and same_rs and same_py[1] != same_rs[1]:
                        raise SystemExit(f"{spec}/{mode}: backends disagree on the rows")
                py_s = f"{py[0]:.3f}" if py else ""
                rs_s = f"{rs[0]:.3f}" if rs else ""
                speed = f"{py[0] / rs[0]:.2f}" if py and rs else ""
                py_rate = f"{size / py[0]:.0f}" if py else ""
                rs_rate = f"{size / rs[0]:.0f}" if rs else ""
                backend = (rs or py or (0.0, "", ""))[2]
                print(f"simulate_{spec}_{mode},{size},{py_s},{rs_s},{speed},{py_rate},"
                      f"{rs_rate},{backend}", flush=True)


if __name__ == "__main__":
    main()
