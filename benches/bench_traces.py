"""Spans per second into a real ``whileai serve`` from the OpenTelemetry SDK's OTLP exporter.

Starts a server (SQLite, temp dir) and sends ``--traces`` GenAI conversations of 4 spans each,
protobuf over HTTP with the SDK's ``OTLPSpanExporter``, twice per measurement, and waits each
time until the server lists every trace sent:

- ``sdk``: the whole application path, timed from the first span created: ``TracerProvider`` +
  ``BatchSpanProcessor`` (``max_export_batch_size=--batch``, 2,048 by default) + the exporter.
  Creating spans is the application's own cost and runs on the same cores as the server.
- ``export``: the ingest path. The spans are created first (outside the timer, collected in
  memory by the SDK); the timer covers the real ``OTLPSpanExporter.export`` of ``--batch``-span
  batches (protobuf encoding and HTTP) from ``--senders`` threads, one exporter each (as
  several processes, or a collector's parallel senders, would send), until the server lists
  them all.

Each line is ``name,stored_traces,spans,seconds,spans_per_s,server_cpu_s,
spans_per_server_cpu_s,client_cpu_s,server_rss_mib,server_peak_rss_mib,yardstick_ms``.
``spans_per_server_cpu_s`` is the server's own capacity (its CPU seconds from
``/proc/PID/stat``); ``client_cpu_s`` is this process's over the timed part (span creation,
encoding and HTTP for ``sdk``; encoding and HTTP for ``export``): client and server share the
machine's cores, so ``spans_per_s`` pays for both. ``yardstick_ms`` is the machine's speed just
before the measurement (``_bench.yardstick_ms``: lower is faster); this VM's speed moves by 2-3x
over the day, so compare figures at like yardsticks.

``--rss-at 0,100000,1000000`` repeats the sends on the same server after growing the database to
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
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from _bench import cpu_seconds_of, peak_rss_of, rss_of, yardstick_ms
from platform_server import Server, start_server


def _write(tracer: Any, traces: int, agent: str) -> None:
    """``traces`` GenAI conversations: an agent span around two chats and a tool call."""
    ask = json.dumps([{"role": "user", "parts": [{"type": "text", "content": "where is W1"}]}])
    answer = json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": "ok"}]}])
    for i in range(traces):
        with tracer.start_as_current_span("invoke_agent a") as root:
            root.set_attribute("gen_ai.agent.name", agent)
            root.set_attribute("whileai.scenario_id", f"s{i % 500}")
            with tracer.start_as_current_span("chat m") as chat:
                chat.set_attribute("gen_ai.input.messages", ask)
            with tracer.start_as_current_span("execute_tool get_order") as tool:
                tool.set_attribute("gen_ai.tool.name", "get_order")
                tool.set_attribute("gen_ai.tool.call.arguments", '{"order_id": "W1"}')
                tool.set_attribute("gen_ai.tool.call.result", '{"status": "shipped"}')
            with tracer.start_as_current_span("chat m") as out:
                out.set_attribute("gen_ai.output.messages", answer)


def _exporter(server: Server, key: str) -> Any:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    return OTLPSpanExporter(endpoint=f"{server.url}/v1/traces",
                            headers={"Authorization": f"Bearer {key}"})


def _check(server: Server, key: str, agent: str, traces: int) -> None:
    """Exit when the server does not list every trace sent (the figure would be void)."""
    listed = requests.get(f"{server.url}/v1/traces", params={"agent": agent, "limit": 1},
                          headers={"Authorization": f"Bearer {key}"}, timeout=60).json()
    if listed["genai"] != traces:
        sys.exit(f"the server holds {listed['genai']} of the {traces} traces sent: void")


def _send_sdk(server: Server, key: str, traces: int, agent: str,
              batch: int) -> tuple[float, float]:
    """Create and send through ``BatchSpanProcessor``; seconds until the server lists all, and
    this process's CPU seconds meanwhile."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    sdk = TracerProvider()
    sdk.add_span_processor(BatchSpanProcessor(_exporter(server, key), max_queue_size=65536,
                                              max_export_batch_size=batch,
                                              schedule_delay_millis=200))
    start, cpu = time.perf_counter(), time.process_time()
    _write(sdk.get_tracer("bench"), traces, agent)
    sdk.force_flush(600_000)
    _check(server, key, agent, traces)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    sdk.shutdown()
    return seconds, cpu


def _send_export(server: Server, key: str, traces: int, agent: str, batch: int,
                 senders: int) -> tuple[float, float]:
    """Spans made first; seconds of ``OTLPSpanExporter.export`` until the server lists all, and
    this process's CPU seconds meanwhile (encoding and HTTP, not the span creation)."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    memory = InMemorySpanExporter()
    sdk = TracerProvider()
    sdk.add_span_processor(SimpleSpanProcessor(memory))
    _write(sdk.get_tracer("bench"), traces, agent)
    spans = list(memory.get_finished_spans())
    batches = [spans[i:i + batch] for i in range(0, len(spans), batch)]
    exporters = [_exporter(server, key) for _ in range(senders)]
    start, cpu = time.perf_counter(), time.process_time()

    def send(n: int) -> None:
        for chunk in batches[n::senders]:
            if exporters[n].export(chunk) is not SpanExportResult.SUCCESS:
                sys.exit("an export failed: void")

    with ThreadPoolExecutor(senders) as pool:
        list(pool.map(send, range(senders)))
    _check(server, key, agent, traces)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    for exporter in exporters:
        exporter.shutdown()
    return seconds, cpu


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
    parser.add_argument("--batch", type=int, default=2048,
                        help="spans per export (max_export_batch_size; default 2048)")
    parser.add_argument("--senders", type=int, default=2,
                        help="exporter threads of the export-only send (default 2)")
    parser.add_argument("--modes", default="sdk,export",
                        help="which sends to measure, comma-separated (default: sdk,export)")
    parser.add_argument("--rss-at", default="", help="stored trace counts to measure at, "
                        "comma-separated (default: one measurement on an empty server)")
    args = parser.parse_args()
    modes = set(args.modes.split(","))
    if not modes <= {"sdk", "export"}:
        parser.error(f"--modes takes sdk and/or export, got {args.modes!r}")
    sizes = [int(n) for n in args.rss_at.split(",") if n.strip()] or [0]
    server = start_server(Path(tempfile.mkdtemp()))
    try:
        key = server.key("bench", in_process=False)
        account = requests.get(server.url + "/v1/account", timeout=10,
                               headers={"Authorization": f"Bearer {key}"}).json()
        assert server.proc is not None
        print("name,stored_traces,spans,seconds,spans_per_s,server_cpu_s,"
              "spans_per_server_cpu_s,client_cpu_s,server_rss_mib,server_peak_rss_mib,yardstick_ms",
              flush=True)
        have = 0
        for step, size in enumerate(sizes):
            if size > have:
                _grow(server, account["accountId"], have, size)
                have = size
            for name in [n for n in ("sdk", f"export_x{args.senders}") if n.split("_")[0] in modes]:
                agent = f"bench-bot-{step}-{name}"
                yardstick = yardstick_ms()
                cpu = cpu_seconds_of(server.proc.pid)
                if name == "sdk":
                    seconds, mine = _send_sdk(server, key, args.traces, agent, args.batch)
                else:
                    seconds, mine = _send_export(server, key, args.traces, agent, args.batch,
                                                 args.senders)
                used = cpu_seconds_of(server.proc.pid) - cpu
                spans = args.traces * 4
                print(f"{name},{have},{spans},{seconds:.2f},{spans / seconds:.0f},{used:.2f},"
                      f"{spans / used:.0f},{mine:.2f},{rss_of(server.proc.pid):.0f},"
                      f"{peak_rss_of(server.proc.pid):.0f},{yardstick:.1f}", flush=True)
                have += args.traces
    finally:
        server.stop()


if __name__ == "__main__":
    main()
