"""Traces into a real ``whileai serve``: the OpenTelemetry SDK's OTLP exporter, scores, cuts."""

from __future__ import annotations

import gzip
import json
import logging
import select
import socket
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import requests

import whileai.simulations as zps
from platform_server import require_server_extra
from whileai.platform import traces as wt
from whileai.platform.errors import NotFoundError

require_server_extra()
pytest.importorskip("opentelemetry.exporter.otlp.proto.http")

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import (  # noqa: E402
    BatchSpanProcessor,
    SimpleSpanProcessor,
    SpanExportResult,
)
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (  # noqa: E402
    InMemorySpanExporter,
)


@pytest.fixture
def key(platform_key: str) -> str:
    """A fresh account per test (conftest's ``platform_key``)."""
    return platform_key


def messages(role: str, text: str) -> str:
    return json.dumps([{"role": role, "parts": [{"type": "text", "content": text}]}])


def agent_turn(tracer: Any, *, scenario: str, ask: str, answer: str, tool_ok: bool) -> str:
    """One conversation as GenAI spans: an agent span, a chat span and a tool span."""
    with tracer.start_as_current_span("invoke_agent support") as root:
        root.set_attribute("gen_ai.operation.name", "invoke_agent")
        root.set_attribute("gen_ai.agent.name", "support-bot")
        root.set_attribute("whileai.scenario_id", scenario)
        with tracer.start_as_current_span("chat gpt-x") as chat:
            chat.set_attribute("gen_ai.operation.name", "chat")
            chat.set_attribute("gen_ai.request.model", "gpt-x")
            chat.set_attribute("gen_ai.input.messages", messages("user", ask))
            chat.set_attribute("gen_ai.usage.input_tokens", 12)
            chat.set_attribute("gen_ai.usage.output_tokens", 5)
        with tracer.start_as_current_span("execute_tool get_order") as tool:
            tool.set_attribute("gen_ai.operation.name", "execute_tool")
            tool.set_attribute("gen_ai.tool.name", "get_order")
            tool.set_attribute("gen_ai.tool.call.arguments", '{"order_id": "W1"}')
            tool.set_attribute("gen_ai.tool.call.result",
                               '{"status": "shipped"}' if tool_ok else '{"error": "timeout"}')
        with tracer.start_as_current_span("chat gpt-x") as chat:
            chat.set_attribute("gen_ai.operation.name", "chat")
            chat.set_attribute("gen_ai.output.messages", messages("assistant", answer))
        return format(root.get_span_context().trace_id, "032x")


def provider(url: str, key: str) -> tuple[TracerProvider, InMemorySpanExporter]:
    sdk = TracerProvider(resource=Resource.create({"service.name": "support"}))
    exporter = OTLPSpanExporter(endpoint=f"{url}/v1/traces",
                                headers={"Authorization": f"Bearer {key}"})
    sdk.add_span_processor(BatchSpanProcessor(exporter))
    memory = InMemorySpanExporter()
    sdk.add_span_processor(SimpleSpanProcessor(memory))
    return sdk, memory


def test_the_sdk_exporter_delivers_rows_equal_to_rows_from_otel(platform_server: Any,
                                                                key: str) -> None:
    sdk, memory = provider(platform_server.url, key)
    tracer = sdk.get_tracer("test")
    ids = [agent_turn(tracer, scenario=f"s{i % 3}", ask=f"where is order W{i}?",
                      answer="It shipped." if i % 2 else "I could not check.",
                      tool_ok=bool(i % 2)) for i in range(6)]
    assert sdk.force_flush(30_000)
    sdk.shutdown()
    local = {r["trace_id"]: r for r in zps.rows_from_otel(memory.get_finished_spans())}
    for trace_id in ids:
        found = requests.get(f"{platform_server.url}/v1/traces/{trace_id}",
                             headers={"Authorization": f"Bearer {key}"}, timeout=10).json()
        assert found["agent"] == "support-bot"
        assert found["genai"]
        assert found["row"] == local[trace_id]
        assert found["row"]["scenario_id"] in ("s0", "s1", "s2")
    listed = wt.list_traces(agent="support-bot")
    assert listed["genai"] == 6
    assert {t["traceId"] for t in listed["traces"]} == set(ids)
    assert "support-bot" in [a["agent"] for a in zps.agents()]


def _export(url: str, key: str, body: bytes, content_type: str,
            encoding: str | None = None) -> requests.Response:
    headers = {"Authorization": f"Bearer {key}", "Content-Type": content_type}
    if encoding:
        headers["Content-Encoding"] = encoding
    return requests.post(f"{url}/v1/traces", data=body, headers=headers, timeout=10)


def status_message(response: requests.Response) -> str:
    """The message of the ``google.rpc.Status`` OTLP/HTTP answers a failed export with, in the
    request's encoding."""
    if response.headers["content-type"] == "application/x-protobuf":
        from google.rpc.status_pb2 import Status  # type: ignore[import-untyped]

        return str(Status.FromString(response.content).message)
    return str(response.json()["message"])


def json_export(spans: list[dict[str, Any]]) -> bytes:
    return json.dumps({"resourceSpans": [{"resource": {"attributes": []},
                                          "scopeSpans": [{"spans": spans}]}]}).encode()


def span(trace: str, span_id: str, **attrs: Any) -> dict[str, Any]:
    return {"traceId": trace, "spanId": span_id, "name": "chat m", "startTimeUnixNano": "1",
            "endTimeUnixNano": "2",
            "attributes": [{"key": k, "value": {"stringValue": str(v)}} for k, v in
                           attrs.items()]}


def test_json_gzip_resend_partial_and_malformed(platform_server: Any, key: str) -> None:
    url = platform_server.url
    trace = "ab" * 16
    good = span(trace, "01" * 8, **{"gen_ai.input.messages": messages("user", "hi"),
                                    "gen_ai.agent.name": "json-bot"})
    raw = span("cd" * 16, "02" * 8, **{"http.method": "GET"})  # not GenAI: kept raw
    bad = span("", "03" * 8)
    body = json_export([good, raw, bad])
    first = _export(url, key, gzip.compress(body), "application/json", "gzip")
    assert first.status_code == 200
    assert first.json()["partialSuccess"]["rejectedSpans"] == "1"
    again = _export(url, key, body, "application/json")  # a re-sent batch stores nothing twice
    assert again.status_code == 200
    listed = wt.list_traces(agent="json-bot")
    assert listed["genai"] == 1
    assert listed["traces"][0]["spans"] == 1
    everything = wt.list_traces()
    assert everything["raw"] >= 1
    for payload, ctype, reason in ((b"{not json", "application/json", "not JSON"),
                                   (b"\x0a\xff\xff", "application/x-protobuf", "protobuf"),
                                   (b"x", "text/plain", "Content-Type")):
        refused = _export(url, key, payload, ctype)
        assert refused.status_code == 400
        assert reason in status_message(refused)
    wrong = _export(url, "wrong-key", body, "application/x-protobuf")
    assert wrong.status_code == 401
    assert "key" in status_message(wrong)
    assert wt.list_traces(agent="json-bot")["traces"][0]["spans"] == 1  # still one span stored
    stored = requests.get(f"{url}/v1/traces/{trace}", headers={"Authorization": f"Bearer {key}"},
                          timeout=10).json()["spans"]  # the ids live in columns, back in front
    assert [list(s)[:3] for s in stored] == [["traceId", "spanId", "name"]]
    assert (stored[0]["traceId"], stored[0]["spanId"], stored[0]["name"]) == (trace, "01" * 8,
                                                                             "chat m")


def test_a_span_is_identified_within_its_trace(platform_server: Any, key: str) -> None:
    url = platform_server.url
    ask = {"gen_ai.input.messages": messages("user", "hi"), "gen_ai.agent.name": "id-bot"}
    first = json_export([span("a1" * 16, "01" * 8, **ask), span("a1" * 16, "02" * 8, **ask)])
    assert _export(url, key, first, "application/json").status_code == 200
    # The same span ids under another trace are that trace's spans; under the first trace
    # again, with a third span, only the third is new.
    other = json_export([span("b2" * 16, "01" * 8, **ask), span("b2" * 16, "02" * 8, **ask)])
    assert _export(url, key, other, "application/json").status_code == 200
    more = json_export([span("a1" * 16, "02" * 8, **ask), span("a1" * 16, "03" * 8, **ask)])
    assert _export(url, key, more, "application/json").status_code == 200
    listed = {t["traceId"]: t["spans"] for t in wt.list_traces(agent="id-bot")["traces"]}
    assert listed == {"a1" * 16: 3, "b2" * 16: 2}
    stored = requests.get(f"{url}/v1/traces/{'a1' * 16}", timeout=10,
                          headers={"Authorization": f"Bearer {key}"}).json()["spans"]
    assert [s["spanId"] for s in stored] == ["01" * 8, "02" * 8, "03" * 8]


def _migrator(tmp_path: Path) -> tuple[Any, Callable[..., None]]:
    """A fresh database's engine and ``migrate(to, down=False)``, which moves it to revision
    ``to``."""
    from alembic import command
    from alembic.config import Config

    from platform_server import fresh_database
    from whileai.server.config import ServerConfig
    from whileai.server.store.db import _MIGRATIONS, open_engine

    engine = open_engine(ServerConfig(directory=tmp_path, database=fresh_database()).database_url)
    alembic = Config()
    alembic.set_main_option("script_location", str(_MIGRATIONS))

    def migrate(to: str, *, down: bool = False) -> None:
        with engine.begin() as conn:
            alembic.attributes["connection"] = conn
            (command.downgrade if down else command.upgrade)(alembic, to)

    return engine, migrate


def test_the_span_key_migration_keeps_every_span(tmp_path: Path) -> None:
    import sqlalchemy as sa

    from whileai.server.store.tables import accounts
    from whileai.server.store.trace_tables import trace_spans

    engine, migrate = _migrator(tmp_path)
    migrate("0005")
    spans = [{"account_id": "acct_1", "span_id": f"{i:016x}", "trace_id": f"{i // 2:032x}",
              "body": f'{{"name":"s{i}"}}', "received_at": float(i)} for i in range(6)]
    with engine.begin() as conn:
        conn.execute(sa.insert(accounts).values(id="acct_1", name="a", tier="t",
                                                is_admin=False, created_at=0.0))
        conn.execute(sa.insert(trace_spans), spans)

    def stored() -> list[dict[str, Any]]:  # the columns of 0005 (the later ones are NULL)
        with engine.connect() as conn:
            return [dict(r._mapping) for r in conn.execute(
                sa.select(*(trace_spans.c[c] for c in spans[0]))
                .order_by(trace_spans.c.span_id))]

    migrate("head")
    assert stored() == spans
    with engine.begin() as conn:  # a span id already stored, under another trace: a new span
        conn.execute(sa.insert(trace_spans).values({**spans[0], "trace_id": "f" * 32}))
    migrate("0005", down=True)  # back to one span per span id: one of the two is kept
    assert [s["span_id"] for s in stored()] == [s["span_id"] for s in spans]
    migrate("head")
    assert len(stored()) == len(spans)
    engine.dispose()


def test_protobuf_spans_survive_a_downgrade_as_json_bodies(tmp_path: Path) -> None:
    import sqlalchemy as sa
    from opentelemetry.proto.trace.v1.trace_pb2 import Span as ProtoSpan

    from whileai.server.services.otlp import proto_body
    from whileai.server.services.trace_reads import stored_span as _stored
    from whileai.server.store.tables import accounts
    from whileai.server.store.trace_tables import trace_spans

    engine, migrate = _migrator(tmp_path)
    migrate("head")
    proto = ProtoSpan(trace_id=bytes.fromhex("ab" * 16), span_id=bytes.fromhex("01" * 8),
                      name="chat m", start_time_unix_nano=5)
    proto.attributes.add(key="gen_ai.input.messages").value.string_value = "[]"
    stored = [{"account_id": "acct_1", "trace_id": "ab" * 16, "span_id": "01" * 8, "body": "",
               "proto": proto.SerializeToString(), "agent": "bot", "received_at": 1.0},
              {"account_id": "acct_1", "trace_id": "ab" * 16, "span_id": "02" * 8,
               "body": '{"name":"tool"}', "proto": None, "agent": None, "received_at": 2.0}]
    with engine.begin() as conn:
        conn.execute(sa.insert(accounts).values(id="acct_1", name="a", tier="t",
                                                is_admin=False, created_at=0.0))
        conn.execute(sa.insert(trace_spans), stored)

    def read() -> list[tuple[dict[str, Any], str | None]]:
        columns = [trace_spans.c[c] for c in ("trace_id", "span_id", "body", "proto", "agent")]
        with engine.connect() as conn:
            return [_stored(*r) for r in conn.execute(
                sa.select(*columns).order_by(trace_spans.c.span_id))]

    before = read()
    assert before[0] == ({**proto_body(proto.SerializeToString())}, "bot")
    migrate("0006", down=True)  # the protobuf span and the agent go back into the JSON body
    with engine.connect() as conn:
        bodies = [json.loads(b) for b in conn.execute(
            sa.select(trace_spans.c.body).order_by(trace_spans.c.span_id)).scalars()]
    assert bodies[0]["whileaiAgent"] == "bot"
    assert bodies[0]["name"] == "chat m"
    assert bodies[1] == {"name": "tool"}
    migrate("head")
    assert read() == before
    engine.dispose()


def test_scores_cuts_and_cut_make_linked_datasets(platform_server: Any, key: str) -> None:
    sdk, _ = provider(platform_server.url, key)
    tracer = sdk.get_tracer("loop")
    ids: dict[str, list[str]] = {}
    for s in range(6):
        for _ in range(4):
            trace_id = agent_turn(tracer, scenario=f"loop-{s}", ask=f"question {s}",
                                  answer="done", tool_ok=True)
            ids.setdefault(f"loop-{s}", []).append(trace_id)
    assert sdk.force_flush(30_000)
    sdk.shutdown()
    nothing = wt.cuts(agent="support-bot")
    assert nothing["rl"]["prompts"] == 0
    assert "send_score" in wt.format_cuts(nothing, "support-bot")
    # prompts 0-3 pass half of the time, prompt 4 always, prompt 5 never
    scores = []
    for s in range(6):
        for run, trace_id in enumerate(ids[f"loop-{s}"]):
            value = 1.0 if (s == 4 or (s < 4 and run % 2 == 0)) else 0.0
            scores.append({"traceId": trace_id, "value": value})
    assert wt.send_score(scores=scores)["applied"] == 24
    assert wt.send_score(ids["loop-5"][0], 0.0)["applied"] == 1  # a correction, not a copy
    with pytest.raises(NotFoundError, match="unknown trace ids"):
        wt.send_score("ff" * 16, 1.0)
    report = wt.cuts(agent="support-bot")
    assert report["rl"]["prompts"] == 4
    assert report["rl"]["runs"] == 16
    assert report["sft"]["prompts"] == 5
    text = wt.format_cuts(report, "support-bot")
    assert text.splitlines()[0] == "4 prompts are worth training on"
    assert text.splitlines()[-1] == 'next: zps.cut(agent="support-bot", kind="rl")'
    made = wt.cut(agent="support-bot", kind="rl", holdout=0.25)
    train = zps.pull(made["train"]["datasetId"])
    held = zps.pull(made["holdout"]["datasetId"])
    assert len(train) + len(held) == 16
    assert {r["scenario_id"] for r in train}.isdisjoint({r["scenario_id"] for r in held})
    assert made["holdout"]["linkedId"] == made["train"]["datasetId"]
    assert all(r["lineage"]["source"] == "traces" for r in train)
    assert sorted({r["reward"] for r in train}) == [0.0, 1.0]
    sft = wt.cut(agent="support-bot", kind="sft", holdout=0.0)
    assert sft["holdout"] is None
    assert len(zps.pull(sft["train"]["datasetId"])) == 5


def test_traces_cli_lists_and_cuts(platform_server: Any, key: str,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    from whileai.cli import main

    trace = "ee" * 16
    body = json_export([span(trace, "0e" * 8, **{"gen_ai.input.messages": messages("user", "yo"),
                                                  "gen_ai.agent.name": "cli-bot"})])
    assert _export(platform_server.url, key, body, "application/json").status_code == 200
    assert main(["traces", "list", "--agent", "cli-bot"]) == 0
    out = capsys.readouterr().out
    assert "1 traces (1 GenAI, 0 raw)" in out
    assert trace in out
    assert "unscored" in out
    assert main(["traces", "cuts", "--agent", "cli-bot"]) == 0
    assert capsys.readouterr().out.startswith("no prompt is worth training on yet")


def test_import_hf_reads_local_parquet_jsonl_and_csv(platform_server: Any, key: str,
                                                     tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    from whileai.platform.hub import import_hf
    from whileai.simulations.export.hub import hf_status

    records = [{"question": f"{i}+1?", "answer": str(i + 1), "score": float(i % 2),
                "source": "toy"} for i in range(5)]
    datasets.Dataset.from_list(records).to_parquet(str(tmp_path / "train.parquet"))
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (tmp_path / "rows.csv").write_text("prompt,final_text\nhi,hello\nbye,ciao\n")
    folder = tmp_path / "repo"
    folder.mkdir()
    (folder / "train.jsonl").write_text((tmp_path / "rows.jsonl").read_text())
    for source, expected in ((tmp_path / "train.parquet", 5), (tmp_path / "rows.jsonl", 5),
                             (tmp_path / "rows.csv", 2), (folder, 5)):
        entry = import_hf(str(source), name=f"imported-{Path(source).name}", max_rows=10)
        assert entry["rows"] == expected
        rows = zps.pull(entry["datasetId"])
        assert len(rows) == expected
    assert rows[1] == {"prompt": "1+1?", "answer": "2", "reward": 1.0, "source": "toy"}
    assert import_hf(str(tmp_path / "train.parquet"), max_rows=2)["rows"] == 2
    with pytest.raises(ValueError, match="HF_TOKEN"):
        hf_status()


def test_import_hf_goes_to_the_base_url_it_is_given(platform_server: Any, key: str,
                                                     tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("datasets")
    from whileai.platform.hub import import_hf

    source = tmp_path / "rows.jsonl"
    source.write_text(json.dumps({"prompt": "hi", "final_text": "hello"}) + "\n")
    monkeypatch.setenv("WHILEAI_BASE_URL", "http://127.0.0.1:9")  # nothing listens there
    entry = import_hf(str(source), name="by-url", api_key=key, base_url=platform_server.url,
                      progress=False)
    assert entry["rows"] == 1
    assert zps.pull(entry["datasetId"], api_key=key, base_url=platform_server.url) == [
        {"prompt": "hi", "final_text": "hello"}]


def test_oversized_and_inflating_bodies_get_413(tmp_path: Path) -> None:
    from platform_server import start_server

    small = start_server(tmp_path, "--max-request-bytes", "4000")
    try:
        key = small.key("tiny")
        spans = [span(f"{i + 1:032x}", f"{i + 1:016x}", **{"gen_ai.agent.name": "x"})
                 for i in range(40)]
        body = json_export(spans)
        assert len(body) > 4000
        assert _export(small.url, key, body, "application/json").status_code == 413
        bomb = gzip.compress(body)
        assert len(bomb) < 4000
        refused = _export(small.url, key, bomb, "application/json", "gzip")
        assert refused.status_code == 413
        assert "inflates past 4000 bytes" in status_message(refused)
        assert wt.list_traces(api_key=key, base_url=small.url)["total"] == 0
    finally:
        small.stop()


def _held_export(url: str, key: str, body: bytes) -> socket.socket:
    """An export request whose body stops after its first byte: it holds a place at the
    receiver's gate until the rest is sent."""
    host, port = url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=60)
    sock.sendall(f"POST /v1/traces HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {key}\r\n"
                 f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
                 .encode() + body[:1])
    return sock


def test_a_flood_gets_429_with_retry_after_and_the_exporter_retries(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from platform_server import start_server

    server = start_server(tmp_path, "--max-pending-exports", "1")
    try:
        key = server.key("flood")
        held_body = json_export([span("ab" * 16, "01" * 8, **{"gen_ai.agent.name": "held"})])
        probe = json_export([span("cd" * 16, "02" * 8, **{"gen_ai.agent.name": "probe"})])
        deadline = time.monotonic() + 60
        held = _held_export(server.url, key, held_body)
        # Until the held request has taken the one place, a probe goes through (stored once);
        # a probe that came first turns the held request away, which then holds the next try.
        while (answer := _export(server.url, key, probe, "application/json")).status_code == 200:
            assert time.monotonic() < deadline, "the held export never took the place"
            if select.select([held], [], [], 0)[0]:  # answered (429): it holds nothing
                held.close()
                held = _held_export(server.url, key, held_body)
        assert answer.status_code == 429
        assert answer.headers["Retry-After"] == "1"
        assert "in progress" in status_message(answer)

        sdk, memory = TracerProvider(), InMemorySpanExporter()
        sdk.add_span_processor(SimpleSpanProcessor(memory))
        ids = [agent_turn(sdk.get_tracer("t"), scenario="s", ask=f"ask {i}", answer="ok",
                          tool_ok=True) for i in range(3)]
        exporter = OTLPSpanExporter(endpoint=f"{server.url}/v1/traces", timeout=60,
                                    headers={"Authorization": f"Bearer {key}"})
        caplog.set_level(logging.WARNING)
        with ThreadPoolExecutor(1) as pool:
            sent = pool.submit(exporter.export, memory.get_finished_spans())
            while not any("retrying" in r.getMessage() for r in caplog.records):
                assert time.monotonic() < deadline, "the exporter was never refused"
                time.sleep(0.05)
            held.sendall(held_body[1:])  # the held request finishes and frees its place
            assert held.recv(64).startswith(b"HTTP/1.1 200")
            assert sent.result() is SpanExportResult.SUCCESS  # its retry got in
        held.close()
        listed = wt.list_traces(agent="support-bot", api_key=key, base_url=server.url)
        assert {t["traceId"] for t in listed["traces"]} == set(ids)
        assert wt.list_traces(agent="held", api_key=key, base_url=server.url)["total"] == 1
    finally:
        server.stop()


def test_serve_refuses_a_limit_below_one(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    from whileai.cli import main

    assert main(["serve", "--dir", str(tmp_path), "--max-pending-exports", "0"]) == 2
    assert "--max-pending-exports must be at least 1; got 0" in capsys.readouterr().err
    assert not (tmp_path / "whileai.db").exists()
