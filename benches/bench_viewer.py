"""Row viewer latency on many rows: ``whileai view`` on a file, and ``/datasets/<id>/rows`` on
``whileai serve`` (SQLite), both over real HTTP on loopback.

Writes ``--rows`` synthetic graded rows (k = 4 per task, faults, seeded mistakes, judge
errors, markers; ``tests/viewer_rows.synthetic_rows``), starts each server, and prints
``where,page,rows,first_ms,median_ms,max_ms`` over ``--repeats`` loads of each page. The
server indexes a big dataset in the background on its first row page (which answers at once
that it is indexing: the ``indexing page`` line; ``index``: until the list is ready);
``whileai view`` builds it before it listens (its ``index`` line, from its start to its first
answer).

    .venv/bin/python benches/bench_viewer.py --rows 100000
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from platform_server import free_port, start_server
from viewer_rows import synthetic_rows

PAGES = (
    "",  # the first page, every facet counted
    "?fault=timeout",
    "?fault=timeout&outcome=fail",
    "?q=ord-01234",
    "?q=on+its+way",
    "?sort=reward&desc=1&page=500",
    "?stance=angry&persona=regular&seeded=hedging",
    "/1234",  # one conversation
)


def _time(session: requests.Session, url: str, repeats: int) -> tuple[float, list[float]]:
    times = []
    for _ in range(repeats + 1):
        start = time.perf_counter()
        response = session.get(url, timeout=600)
        times.append((time.perf_counter() - start) * 1000)
        assert response.status_code == 200, (url, response.status_code, response.text[:200])
    return times[0], times[1:]


def _report(where: str, base: str, session: requests.Session, n: int, repeats: int) -> None:
    for page in PAGES:
        first, rest = _time(session, base + page, repeats)
        print(f"{where},rows{page},{n},{first:.0f},{statistics.median(rest):.0f},"
              f"{max(rest):.0f}", flush=True)


def _local(path: Path, n: int, repeats: int) -> None:
    port = free_port()
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "whileai", "view", str(path), "--no-browser",
                             "--port", str(port)], stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}/datasets/local/rows"
    try:
        while True:
            try:
                requests.get(base + "/0", timeout=5)
                break
            except requests.ConnectionError:
                time.sleep(0.1)
        print(f"local,index,{n},{(time.perf_counter() - start) * 1000:.0f},,", flush=True)
        _report("local", base, requests.Session(), n, repeats)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _server(rows: list[dict[str, Any]], n: int, repeats: int) -> None:
    server = start_server(Path(tempfile.mkdtemp()))
    try:
        key = server.key("bench", in_process=False)
        os.environ.update({"WHILEAI_BASE_URL": server.url, "WHILEAI_API_KEY": key})
        import whileai.simulations as zps

        pushed = zps.push_rows(rows, "viewer-bench", gate=False, progress=False)
        session = requests.Session()
        session.post(server.url + "/signin", data={"key": key}, timeout=30)
        base = f"{server.url}/datasets/{pushed['datasetId']}/rows"
        start = time.perf_counter()
        answer = session.get(base, timeout=600)
        first = (time.perf_counter() - start) * 1000
        while 'id="indexing"' in answer.text:  # a big dataset is indexed in the background
            time.sleep(0.2)
            answer = session.get(base, timeout=600)
        print(f"server,indexing page,{n},{first:.0f},,", flush=True)
        print(f"server,index,{n},{(time.perf_counter() - start) * 1000:.0f},,", flush=True)
        _report("server", base, session, n, repeats)
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--where", choices=("local", "server", "both"), default="both")
    args = parser.parse_args()
    import whileai.simulations as zps

    path = Path(tempfile.mkdtemp()) / "rows.jsonl"
    rows = synthetic_rows(args.rows)
    zps.write_jsonl(path, rows)
    print(f"# {args.rows} rows, {path.stat().st_size / 1e6:.0f} MB of JSONL")
    print("where,page,rows,first_ms,median_ms,max_ms")
    if args.where in ("local", "both"):
        _local(path, args.rows, args.repeats)
    if args.where in ("server", "both"):
        _server(rows, args.rows, args.repeats)


if __name__ == "__main__":
    main()
