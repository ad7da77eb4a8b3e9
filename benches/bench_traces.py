"""Spans per second into a real ``whileai serve`` from the OpenTelemetry SDK's OTLP exporter.

Starts a server (SQLite, temp dir), sends ``--traces`` GenAI conversations of 4 spans each through
``TracerProvider`` + ``BatchSpanProcessor`` + ``OTLPSpanExporter`` (protobuf over HTTP), and prints
``name,spans,seconds,spans_per_s,server_peak_rss_mib``. Needs the ``server`` extra and
``opentelemetry-exporter-otlp-proto-http``.

    .venv/bin/python benches/bench_traces.py --traces 25000
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from _bench import peak_rss_of
from platform_server import start_server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--traces", type=int, default=5000)
    args = parser.parse_args()
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    server = start_server(Path(tempfile.mkdtemp()))
    try:
        key = server.key("bench")
        sdk = TracerProvider()
        exporter = OTLPSpanExporter(endpoint=f"{server.url}/v1/traces",
                                    headers={"Authorization": f"Bearer {key}"})
        sdk.add_span_processor(BatchSpanProcessor(exporter, max_queue_size=65536,
                                                  max_export_batch_size=2048,
                                                  schedule_delay_millis=200))
        tracer = sdk.get_tracer("bench")
        ask = json.dumps([{"role": "user", "parts": [{"type": "text", "content": "where is W1"}]}])
        start = time.perf_counter()
        for i in range(args.traces):
            with tracer.start_as_current_span("invoke_agent a") as root:
                root.set_attribute("gen_ai.agent.name", "bench-bot")
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
        spans = args.traces * 4
        assert server.proc is not None
        print("name,spans,seconds,spans_per_s,server_peak_rss_mib")
        print(f"otlp_ingest,{spans},{seconds:.2f},{spans / seconds:.0f},"
              f"{peak_rss_of(server.proc.pid):.0f}")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
