"""Push and pull N rows of ~1 KB through a real ``whileai serve`` on loopback.

Prints ``name,rows,mb,push_rows_mb_s,push_file_mb_s,pull_file_mb_s,pull_rows_mb_s,
server_rss_mib``: push_rows encodes rows and uploads them; push_file uploads a JSONL file
(``gate=False``: every line is parsed once to refuse bad JSON, then the bytes stream); pull_file
writes the JSONL to disk; pull_rows also parses every row; server_rss_mib is the server's peak
resident memory (VmHWM). Goal: >= 50 MB/s each way, server RSS < 300 MiB whatever the size.
Needs the ``server`` extra; ``WHILEAI_DATABASE_URL`` runs it on PostgreSQL.

    python benches/bench_platform.py --rows 100000
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import whileai.simulations as zps  # noqa: E402
from _bench import peak_rss_of  # noqa: E402
from platform_server import start_server  # noqa: E402


def make_rows(n: int, seed: int = 0) -> list[dict[str, object]]:
    """``n`` seeded rows of about 1 KB each (prompt, steps, final text, reward)."""
    rng = random.Random(seed)
    words = ("order", "refund", "shipped", "account", "invoice", "delivery", "cancel", "plan",
             "card", "kettle")
    rows = []
    for i in range(n):
        text = " ".join(rng.choice(words) for _ in range(60))
        rows.append({
            "scenario_id": f"s{i // 4}", "prompt": f"{i}: {text}",
            "steps": [{"tool": "get_order", "arguments": {"id": i},
                       "result": {"status": "late", "note": text[:200]}}],
            "final_text": text[: 300 + i % 97], "reward": float(i % 3 == 0),
        })
    return rows


def main() -> None:
    import importlib.util

    if any(importlib.util.find_spec(m) is None for m in ("fastapi", "uvicorn", "sqlalchemy")):
        print("platform,skipped: the server extra is missing (pip install 'whileai[server]')")
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000, help="rows to push (100,000)")
    args = parser.parse_args()
    rows: list[dict[str, object]] = make_rows(args.rows)
    with tempfile.TemporaryDirectory() as tmp:
        server = start_server(Path(tmp))
        try:
            key = server.key("bench", in_process=False)
            assert server.proc is not None
            start = time.perf_counter()
            entry = zps.push_rows(rows, "bench", api_key=key, base_url=server.url)
            push_s = time.perf_counter() - start
            mb = entry["bytes"] / 1e6
            count, first, last = len(rows), rows[0], rows[-1]
            source = Path(tmp) / "rows.jsonl"
            zps.write_jsonl(source, rows)
            del rows  # keep the bench's own memory flat at large sizes
            start = time.perf_counter()
            zps.push_file(str(source), gate=False, api_key=key, base_url=server.url)
            file_push_s = time.perf_counter() - start
            start = time.perf_counter()
            path = zps.pull(entry["datasetId"], str(Path(tmp) / "pulled.jsonl"), api_key=key,
                            base_url=server.url)
            file_s = time.perf_counter() - start
            assert Path(path).stat().st_size == entry["bytes"]
            start = time.perf_counter()
            pulled = zps.pull(entry["datasetId"], api_key=key, base_url=server.url)
            rows_s = time.perf_counter() - start
            assert (len(pulled), pulled[0], pulled[-1]) == (count, first, last)
            del pulled
            rss = peak_rss_of(server.proc.pid)
        finally:
            server.stop()
    print("name,rows,mb,push_rows_mb_s,push_file_mb_s,pull_file_mb_s,pull_rows_mb_s,"
          "server_rss_mib")
    print(f"platform,{args.rows},{mb:.1f},{mb / push_s:.1f},{mb / file_push_s:.1f},"
          f"{mb / file_s:.1f},{mb / rows_s:.1f},{rss:.0f}")


if __name__ == "__main__":
    main()
