"""Spans per second into a real ``whileai serve`` from the OpenTelemetry SDK's OTLP exporter.

Starts a server (SQLite, temp dir), sends ``--traces`` GenAI conversations of 4 spans each through
``TracerProvider`` + ``BatchSpanProcessor`` + ``OTLPSpanExporter`` (protobuf over HTTP), waits
until the server lists them all, and prints
``name,stored_traces,spans,seconds,spans_per_s,server_cpu_s,spans_per_server_cpu_s,
server_rss_mib,server_peak_rss_mib``. ``spans_per_server_cpu_s`` is the server's own capacity:
client and server share the machine's cores, so ``spans_per_s`` also pays for the SDK.

``--rss-at 0,100000,1000000`` repeats the send on the same server after growing the database to
each number of stored traces (bulk-loaded: one trace row, one span and the summary per trace), so
the RSS columns show whether the server's memory grows with the number of traces it holds.
Needs the ``server`` extra and ``opentelemetry-exporter-otlp-proto-http``.

    .venv/bin/python benches/bench_traces.py --traces 5000
    .venv/bin/python benches/bench_traces.py --traces 2000 --rss-at 0,100000,1000000
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from _bench import cpu_seconds_of, peak_rss_of, rss_of
from platform_server import Server, start_server


def _send(server: Server, key: str, traces: int, batch: int) -> float:
    """Send ``traces`` conversations through the SDK's exporter; seconds until all are stored."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    sdk = TracerProvider()
    exporter = OTLPSpanExporter(endpoint=f"{server.url}/v1/traces",
                                headers={"Authorization": f"Bearer {key}"})
    sdk.add_span_processor(BatchSpanProcessor(exporter, max_queue_size=65536,
                                              max_export_batch_size=2048,
                                              schedule_delay_millis=200))
    tracer = sdk.get_tracer("bench")
    ask = json.dumps([{"role": "user", "parts": [{"type": "text", "content": "where is W1"}]}])
    start = time.perf_counter()
    for i in range(traces):
        with tracer.start_as_current_span("invoke_agent a") as root:
            root.set_attribute("gen_ai.agent.name", f"bench-bot-{batch}")
            root.set_attribute("whileai.scenario_id", f"s{i % 500}")
            with tracer.start_as_current_span("chat m") as chat:
                chat.set_attribute("gen_ai.input.messages", ask)
            with tracer.start_as_current_span("execute_tool get_order") as tool:
                tool.set_attribute("gen_ai.tool.name", "get_order")
                tool.set_attribute("gen_ai.tool.call.arguments", '{"order_id": "W1"}')
                tool.set_attribute("gen_ai.tool.call.result", '{"status": "shipped"}')
            with tracer.start_as_current_span("chat m") as out:
                out.set_attribute("gen_ai.output.messages", json.dumps(
                    [{"role": "assistant", "parts": [{"type": "text", "content": "ok"}]}]))
    sdk.force_flush(600_000)
    seconds = time.perf_counter() - start
    sdk.shutdown()
    listed = requests.get(f"{server.url}/v1/traces", params={"agent": f"bench-bot-{batch}",
                                                            "limit": 1},
                          headers={"Authorization": f"Bearer {key}"}, timeout=60).json()
    if listed["genai"] != traces:
        sys.exit(f"the server holds {listed['genai']} of the {traces} traces sent: void")
    return seconds


def _grow(server: Server, account_id: str, have: int, want: int) -> None:
    """Bulk-load traces ``have .. want`` (a row, one small span each) and recount the summary."""
    import sqlalchemy as sa

    from whileai.server.services import trace_stats
    from whileai.server.store.trace_tables import trace_spans, traces

    engine = sa.create_engine(f"sqlite:///{server.directory / 'whileai.db'}",
                              connect_args={"timeout": 600})
    now = time.time()
    row = json.dumps({"prompt": "ask", "steps": [], "final_text": "ok"})
    for start in range(have, want, 50_000):
        ids = range(start, min(want, start + 50_000))
        with engine.begin() as conn:
            conn.execute(sa.insert(traces), [
                {"account_id": account_id, "trace_id": f"{i:032x}", "agent": "seeded",
                 "genai": True, "spans": 1, "scenario": f"s{i % 500}", "task": f"s{i % 500}",
                 "score": float(i % 3 == 0), "model": "m", "row": row, "created_at": now,
                 "updated_at": now} for i in ids])
            conn.execute(sa.insert(trace_spans), [
                {"account_id": account_id, "span_id": f"{i:016x}", "trace_id": f"{i:032x}",
                 "body": '{"name":"chat m"}', "received_at": now} for i in ids])
    with engine.begin() as conn:
        trace_stats.recount(conn, account_id)
    engine.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--traces", type=int, default=5000, help="traces sent per measurement")
    parser.add_argument("--rss-at", default="", help="stored trace counts to measure at, "
                        "comma-separated (default: one measurement on an empty server)")
    args = parser.parse_args()
    sizes = [int(n) for n in args.rss_at.split(",") if n.strip()] or [0]
    server = start_server(Path(tempfile.mkdtemp()))
    try:
        key = server.key("bench")
        account = requests.get(server.url + "/v1/account", timeout=10,
                               headers={"Authorization": f"Bearer {key}"}).json()
        assert server.proc is not None
        print("name,stored_traces,spans,seconds,spans_per_s,server_cpu_s,"
              "spans_per_server_cpu_s,server_rss_mib,server_peak_rss_mib", flush=True)
        have = 0
        for batch, size in enumerate(sizes):
            if size > have:
                _grow(server, account["accountId"], have, size)
                have = size
            cpu = cpu_seconds_of(server.proc.pid)
            seconds = _send(server, key, args.traces, batch)
            used = cpu_seconds_of(server.proc.pid) - cpu
            spans = args.traces * 4
            print(f"otlp_ingest,{have},{spans},{seconds:.2f},{spans / seconds:.0f},{used:.2f},"
                  f"{spans / used:.0f},{rss_of(server.proc.pid):.0f},"
                  f"{peak_rss_of(server.proc.pid):.0f}", flush=True)
            have += args.traces
    finally:
        server.stop()


if __name__ == "__main__":
    main()
