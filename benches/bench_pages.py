"""Page load times of ``whileai serve`` with many datasets and traces (SQLite, loopback).

Seeds the server's database directly (``--datasets`` registry rows, ``--traces`` GenAI traces over
500 tasks with a score each, one real pushed dataset and one run), restarts the server, signs in,
and prints ``page,datasets,traces,median_ms,max_ms`` over ``--repeats`` loads of each page.

    .venv/bin/python benches/bench_pages.py --datasets 10000 --traces 1000000
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from platform_server import start_server


def _seed(db: Path, account_id: str, n_datasets: int, n_traces: int) -> None:
    import sqlalchemy as sa

    from whileai.server.services import trace_stats
    from whileai.server.store.tables import datasets
    from whileai.server.store.trace_tables import trace_scores, traces

    engine = sa.create_engine(f"sqlite:///{db}")
    now = time.time()
    with engine.begin() as conn:
        conn.execute(sa.insert(datasets), [
            {"id": f"ds_bench{i:016x}", "account_id": account_id, "name": f"set-{i}",
             "purpose": ("train", "holdout", "eval", "raw")[i % 4], "mode": "rl",
             "agent": f"agent-{i % 20}", "rows": 100, "bytes": 10_000, "version": 1,
             "public": i % 100 == 0, "created_at": now - i, "updated_at": now - i}
            for i in range(n_datasets)])
    batch = 50_000
    for start in range(0, n_traces, batch):
        with engine.begin() as conn:
            ids = range(start, min(n_traces, start + batch))
            conn.execute(sa.insert(traces), [
                {"account_id": account_id, "trace_id": f"{i:032x}", "agent": "bench-bot",
                 "genai": True, "spans": 3, "scenario": f"s{i % 500}", "task": f"s{i % 500}",
                 "score": float(i % 3 == 0),
                 "model": "m", "row": json.dumps({"prompt": f"ask {i % 500}", "steps": [],
                                                  "final_text": "ok",
                                                  "scenario_id": f"s{i % 500}"}),
                 "created_at": now, "updated_at": now} for i in ids])
            conn.execute(sa.insert(trace_scores), [
                {"account_id": account_id, "trace_id": f"{i:032x}", "name": "score",
                 "value": float(i % 3 == 0), "fields": "{}", "updated_at": now} for i in ids])
    with engine.begin() as conn:  # the rows went in behind ingest's back: count them once
        trace_stats.recount(conn, account_id)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--datasets", type=int, default=10_000)
    parser.add_argument("--traces", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp())
    server = start_server(root)
    try:
        key = server.key("bench", in_process=False)
        os.environ.update({"WHILEAI_BASE_URL": server.url, "WHILEAI_API_KEY": key})
        import whileai.simulations as zps

        pushed = zps.push_rows([{"scenario_id": f"t{i % 50}", "prompt": f"q{i % 50}",
                                 "reward": float(i % 2)} for i in range(2000)], "real-set")
        with zps.training_run("bench-run") as run:
            for step in range(2000):
                run.log(step, reward=step / 2000, kl=step / 1e5, loss=1 - step / 4000)
        account = requests.get(server.url + "/v1/account", timeout=10,
                               headers={"Authorization": f"Bearer {key}"}).json()
        server.stop()
        t0 = time.perf_counter()
        _seed(server.directory / "whileai.db", account["accountId"], args.datasets, args.traces)
        seeded = time.perf_counter() - t0
        server.start()
        session = requests.Session()
        session.post(server.url + "/signin", data={"key": key}, timeout=30)
        pages = ["/datasets", f"/datasets/{pushed['datasetId']}", "/traces", "/runs",
                 f"/runs/{run.id}", "/catalog", "/datasets?page=150"]
        print(f"# seeded {args.datasets} datasets and {args.traces} traces in {seeded:.0f} s")
        print("page,datasets,traces,median_ms,max_ms")
        for path in pages:
            times = []
            for _ in range(args.repeats):
                start = time.perf_counter()
                response = session.get(server.url + path, timeout=120)
                times.append((time.perf_counter() - start) * 1000)
                assert response.status_code == 200, (path, response.status_code)
            print(f"{path},{args.datasets},{args.traces},{statistics.median(times):.0f},"
                  f"{max(times):.0f}")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
