"""Drive a real OpenAI instrumentation library around the real ``openai`` client (run as a script).

``python tests/otel_drive.py LIBRARY --n N [--parent] [--endpoint URL --key KEY] [--console F]``
answers the client from a chat-completions stub on 127.0.0.1 (``chat_server.py``), holds each of
``N`` two-call tool-using conversations (ask, tool call, tool result, final text), and sends the
spans (and the log records, for the libraries that put the messages there) through the SDK's
real ``OTLPSpanExporter`` / ``OTLPLogExporter`` to ``URL``; ``--console`` also writes them with
the SDK's ``ConsoleSpanExporter`` (and ``ConsoleLogExporter`` to ``F.logs``). ``--parent`` wraps
each conversation in an agent span of its own; ``--batch`` exports through the SDK's batch
processors (one request for many spans) instead of one request per span. It needs no whileai:
it runs in whichever virtualenv holds the library under test (the legacy openai-v2 2.3b0 has one
of its own).

LIBRARY is one of ``openai-v2`` (content on spans: ``span_only``), ``openai-v2-true`` (the
``true`` setting, which 2.4b0 takes as "no content"), ``openai-v2-legacy`` (2.3b0 with ``true``:
content as log records), ``openllmetry``, ``openinference``,
``openinference-genai`` (``OPENINFERENCE_ENABLE_GENAI_SEMCONV=true``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _tools import TOOLS
from chat_server import Answer, completion, serve

SYSTEM = "You are the support agent of a shop. Look orders up before you answer."
ASK = "where is order {n}?"
RESULT = '{{"order_id": "{n}", "status": "shipped"}}'
FINAL = "Order {n} has shipped."
MODEL_ASKED = "gpt-test"
MODEL_SERVED = "gpt-test-2026-01-01"
AGENT = "support-bot"

_ENV = {
    "openai-v2": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "span_only"},
    "openai-v2-true": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"},
    "openai-v2-legacy": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"},
    "openllmetry": {},
    "openinference": {},
    "openinference-genai": {"OPENINFERENCE_ENABLE_GENAI_SEMCONV": "true"},
}


def _answer(_path: str, body: dict[str, Any], _index: int) -> Answer:
    """A tool call for a fresh ask; the final text once the tool result is in."""
    messages = body.get("messages") or []
    ask = next(m["content"] for m in messages if m["role"] == "user")
    n = ask.split()[-1].rstrip("?")
    if messages[-1]["role"] == "tool":
        return Answer(completion(FINAL.format(n=n), model=MODEL_SERVED, usage=(40, 9)))
    return Answer(completion(None, tool_calls=[("get_order", {"order_id": n})],
                             call_ids=[f"call_{n}"], model=MODEL_SERVED, usage=(30, 12)))


def _instrument(library: str, tracer_provider: Any, logger_provider: Any) -> None:
    if library.startswith("openai-v2"):
        from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

        OpenAIInstrumentor().instrument(tracer_provider=tracer_provider,
                                        logger_provider=logger_provider)
    elif library == "openllmetry":
        from opentelemetry.instrumentation.openai import OpenAIInstrumentor as Traceloop

        Traceloop().instrument(tracer_provider=tracer_provider)
    else:
        from openinference.instrumentation.openai import OpenAIInstrumentor as Arize

        Arize().instrument(tracer_provider=tracer_provider)


def _converse(client: Any, tracer: Any, n: int, parent: bool) -> None:
    import contextlib

    holder = (tracer.start_as_current_span(f"invoke_agent {AGENT}", attributes={
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": AGENT,
        "gen_ai.conversation.id": f"conv-{n}"}) if parent else contextlib.nullcontext())
    with holder:
        messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM},
                                          {"role": "user", "content": ASK.format(n=n)}]
        first = client.chat.completions.create(model=MODEL_ASKED, messages=messages,
                                               tools=TOOLS)
        call = first.choices[0].message.tool_calls[0]
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": call.id, "type": "function",
             "function": {"name": call.function.name, "arguments": call.function.arguments}}]})
        messages.append({"role": "tool", "tool_call_id": call.id,
                         "content": RESULT.format(n=n)})
        client.chat.completions.create(model=MODEL_ASKED, messages=messages, tools=TOOLS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("library", choices=sorted(_ENV))
    parser.add_argument("--n", type=int, default=20, help="conversations to hold")
    parser.add_argument("--first", type=int, default=4400, help="the first order number")
    parser.add_argument("--parent", action="store_true", help="an agent span per conversation")
    parser.add_argument("--endpoint", default="", help="the server's base URL (OTLP/HTTP)")
    parser.add_argument("--key", default="", help="the API key sent as a bearer token")
    parser.add_argument("--console", default="", help="also write the SDK's console JSON here")
    parser.add_argument("--batch", action="store_true",
                        help="export in batches (BatchSpanProcessor) instead of span by span")
    args = parser.parse_args()
    os.environ.update(_ENV[args.library])
    os.environ["OTEL_RESOURCE_ATTRIBUTES"] = f"gen_ai.agent.name={AGENT}"

    import openai
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs import export as log_export
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import (
        BatchSpanProcessor,
        ConsoleSpanExporter,
        SimpleSpanProcessor,
    )

    resource = Resource.create()
    spans = TracerProvider(resource=resource)
    logs = LoggerProvider(resource=resource)
    outputs = []
    if args.endpoint:
        from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        headers = {"Authorization": f"Bearer {args.key}"}
        span_processor = BatchSpanProcessor if args.batch else SimpleSpanProcessor
        log_processor = (log_export.BatchLogRecordProcessor if args.batch
                         else log_export.SimpleLogRecordProcessor)
        spans.add_span_processor(span_processor(OTLPSpanExporter(
            endpoint=f"{args.endpoint}/v1/traces", headers=headers)))
        logs.add_log_record_processor(log_processor(OTLPLogExporter(
            endpoint=f"{args.endpoint}/v1/logs", headers=headers)))
    if args.console:
        outputs = [open(args.console, "w"), open(args.console + ".logs", "w")]  # noqa: SIM115
        spans.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(out=outputs[0])))
        console_logs = getattr(log_export, "ConsoleLogRecordExporter", None) or (
            log_export.ConsoleLogExporter)
        logs.add_log_record_processor(log_export.SimpleLogRecordProcessor(console_logs(
            out=outputs[1])))
    from opentelemetry import _logs, trace

    trace.set_tracer_provider(spans)
    _logs.set_logger_provider(logs)
    _instrument(args.library, spans, logs)
    tracer = spans.get_tracer("otel_drive")
    with serve(_answer) as stub:
        client = openai.OpenAI(base_url=stub.url, api_key="sk-test", max_retries=0)
        for n in range(args.first, args.first + args.n):
            _converse(client, tracer, n, args.parent)
    spans.shutdown()
    logs.shutdown()
    for out in outputs:
        out.close()
    json.dump({"conversations": args.n}, sys.stdout)


if __name__ == "__main__":
    main()
