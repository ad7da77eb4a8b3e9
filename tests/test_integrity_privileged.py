"""Teacher-only context never leaves the process (issue #33.1), nor do the environment's keys.

Random rows carry random ``privileged`` text (top level, nested in a tool result, inside a tool
result stored as JSON text, in a carried field) and a key from the environment in their visible
text. They go through every door: ``save`` of a run and of a judge's copies, the HTML report,
the training export, ``push`` / ``push_rows`` / ``push_file`` to a real ``whileai serve``,
``publish``, an anonymous pull, the preview and each dataset page. Not one of those texts may be
found in what came out, nor anywhere in the server's folder (database, parts, log).
"""

from __future__ import annotations

import json
import string
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import whileai.simulations as zps
from platform_server import require_server_extra
from whileai.errors import ConfigError
from whileai.platform import PlatformError
from whileai.simulations.data import SimulationData

require_server_extra()

ENV_KEY = "ACME_BILLING_API_KEY"  # key-like by its name: masked wherever its value shows up
# Each generated text starts with a fixed tag, so a run of digits or zeros the server writes for its
# own reasons (ids, padding) can never pass for a leak.
words = st.text(alphabet=st.characters(categories=("Lu", "Ll", "Nd")), min_size=12,
                max_size=40).map(lambda text: "Tq" + text)
keys = st.text(alphabet=string.ascii_letters + string.digits, min_size=14,
               max_size=30).map(lambda text: "Kx" + text)


def leaky_rows(hidden: str, reference: str, secret: str, n: int) -> list[dict[str, Any]]:
    """Graded RL rows, two per ask, each holding the teacher-only texts at several depths."""
    rows = []
    for i in range(n):
        rows.append({
            "scenario_id": f"sc-{i // 2:04d}", "rollout_index": i % 2,
            "prompt": f"where is order {i}?", "final_text": f"order {i} ships; key {secret}",
            "reward": float(i % 2), "scenario_dimensions": {"seed": 0},
            "privileged": {"hidden_state": hidden, "reference": reference},
            "world_state": {"note": {"privileged": {"reference": reference}}},
            "steps": [
                {"tool": "get_order", "arguments": {"order_id": str(i)},
                 "result": {"ok": True, "privileged": {"hidden_state": hidden}}},
                {"tool": "get_order", "arguments": {"order_id": str(i)},
                 "result": json.dumps({"ok": 1, "token_used": secret,
                                       "privileged": {"reference": reference}})},
            ],
        })
    return rows


def forms(text: str) -> list[bytes]:
    """The ways a text can sit in a file or a page: raw UTF-8, and JSON-escaped."""
    return sorted({text.encode(), json.dumps(text)[1:-1].encode(),
                   json.dumps(text, ensure_ascii=False)[1:-1].encode()})


def files_under(root: Path) -> Iterator[Path]:
    yield from (p for p in root.rglob("*") if p.is_file())


def assert_absent(texts: list[str], outputs: dict[str, bytes]) -> None:
    for text in texts:
        for form in forms(text):
            leaked = [where for where, blob in outputs.items() if form in blob]
            assert leaked == [], f"{text!r} left the process through {leaked}"


def page_session(url: str, key: str) -> requests.Session:
    """A browser session signed in with ``key`` (as test_platform_security_auth signs in)."""
    from test_platform_security_auth import sign_in

    return sign_in(url, key)


def _judge(row: dict[str, Any]) -> dict[str, Any]:
    assert row["privileged"]["reference"], "a judge reads the block in memory"
    return {"reward": float(row["rollout_index"] == 0)}


@settings(max_examples=4, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(hidden=words, reference=words, secret=keys, n=st.integers(2, 6))
def test_no_teacher_only_text_or_env_key_leaves_by_any_door(
        platform_server: Any, platform_key: str, tmp_path_factory: pytest.TempPathFactory,
        hidden: str, reference: str, secret: str, n: int) -> None:
    assume(secret not in hidden and secret not in reference)  # the key is masked, not kept
    tmp = tmp_path_factory.mktemp("doors")
    out: dict[str, bytes] = {}
    with pytest.MonkeyPatch.context() as env:
        env.setenv(ENV_KEY, secret)
        rows = leaky_rows(hidden, reference, secret, n)
        data = SimulationData(trajectories=rows, search={}, stopped_because="budget", mode="rl",
                              rollouts_per_request=2)
        scored = data.grade(judge=_judge, progress=False)
        assert all(zps.holds_privileged(r) for r in scored.rows)  # kept in memory
        out["data.rows"] = json.dumps(data.rows, ensure_ascii=False).encode()
        out["data.save"] = data.save(tmp / "data.jsonl").read_bytes()
        out["scored.save"] = scored.save(tmp / "scored.jsonl").read_bytes()
        out["report_html"] = zps.report_html(scored, tmp / "report.html",
                                             scan=False).encode()
        out["report file"] = (tmp / "report.html").read_bytes()
        zps.export_dataset(scored, tmp / "train.jsonl", progress=False)
        out["export_dataset"] = (tmp / "train.jsonl").read_bytes()
        zps.write_jsonl(tmp / "private.jsonl", rows, keep_privileged=True)
        assert reference.encode() in (tmp / "private.jsonl").read_bytes()  # the opt-in keeps it

        pushed = scored.push("doors-scored", gate=False, progress=False)
        raw = zps.push_rows(rows, "doors-raw", progress=False)
        from_file = zps.push_file(tmp / "private.jsonl", "doors-file", gate=False,
                                  progress=False)
        card = zps.publish(pushed["datasetId"], "doors-agent")
        assert card["rows"] == n
        for name, entry in (("scored", pushed), ("raw", raw), ("file", from_file)):
            out[f"pull {name}"] = json.dumps(zps.pull(entry["datasetId"], progress=False),
                                             ensure_ascii=False).encode()
            out[f"preview {name}"] = json.dumps(zps.preview(entry["datasetId"])).encode()
        with pytest.MonkeyPatch.context() as anonymous:
            anonymous.delenv("WHILEAI_API_KEY")
            public = zps.pull(pushed["datasetId"], tmp / "public.jsonl", progress=False)
            out["anonymous pull"] = Path(public).read_bytes()
        assert len(out["anonymous pull"].splitlines()) == n
        session = page_session(platform_server.url, platform_key)
        pages = ["/datasets", "/catalog"]
        for entry in (pushed, raw, from_file):
            base = f"/datasets/{entry['datasetId']}"
            pages += [base, f"{base}/rows", f"{base}/rows/0", f"{base}/rows/1", f"{base}/hacks"]
        for page in pages:
            answer = session.get(platform_server.url + page, timeout=60)
            assert answer.status_code == 200, (page, answer.text[:300])
            out[f"page {page}"] = answer.content
        assert b"order 1 ships" in out[f"page /datasets/{raw['datasetId']}/rows/1"]  # shown
        for path in [*files_under(platform_server.directory), platform_server.log]:
            out[f"server file {path.name}"] = path.read_bytes()
    assert_absent([hidden, reference, secret], out)


def test_the_server_refuses_privileged_lines_unless_kept_and_never_publishes_them(
        platform_server: Any, platform_key: str) -> None:
    body = (b'{"prompt": "a"}\n{"prompt": "b", "privileged": {"reference": "x"}}\n'
            b'{"prompt": "c", "steps": [{"tool": "t", "result": "{\\"privileged\\": 1}"}]}\n')
    headers = {"Authorization": f"Bearer {platform_key}",
               "Content-Type": "application/x-ndjson"}
    url = f"{platform_server.url}/v1/datasets"
    refused = requests.post(url, params={"name": "raw"}, data=body, headers=headers, timeout=30)
    assert refused.status_code == 400
    assert refused.json()["message"].startswith("lines 2, 3 of this upload hold a teacher-only")
    assert "keep_privileged" in refused.json()["message"]
    assert "raw" not in [d["name"] for d in zps.datasets()["datasets"]]  # nothing stored
    kept = requests.post(url, params={"name": "private", "keep_privileged": "true"}, data=body,
                         headers=headers, timeout=30)
    assert kept.status_code == 201, kept.text
    private = kept.json()["datasetId"]
    assert zps.pull(private, progress=False)[1]["privileged"] == {"reference": "x"}
    assert "privileged" not in json.dumps(zps.preview(private)["sample"])
    session = page_session(platform_server.url, platform_key)
    for page in ("", "/rows", "/rows/1", "/rows/2", "/hacks"):  # the owner's pages too
        answer = session.get(f"{platform_server.url}/datasets/{private}{page}", timeout=60)
        assert answer.status_code == 200, (page, answer.text[:300])
        assert b"privileged" not in answer.content, page
    with pytest.raises(PlatformError, match=r"lines 2, 3 of dataset ds_\w+ hold a teacher-only "
                                            r"`privileged` block, which a public set may never"):
        zps.publish(private, "leaky")
    assert private not in [c["datasetId"] for c in zps.catalog()["datasets"]]


def test_the_client_opt_in_keeps_the_block_for_a_private_store_only(platform_key: str) -> None:
    rows = leaky_rows("hidden-state-text", "reference-text", "k" * 20, 2)
    entry = zps.push_rows(rows, "private", keep_privileged=True, progress=False)
    pulled = zps.pull(entry["datasetId"], progress=False)
    assert pulled[0]["privileged"] == {"hidden_state": "hidden-state-text",
                                       "reference": "reference-text"}
    scored = SimulationData(trajectories=rows, search={}, stopped_because="budget",
                            mode="rl").grade(judge=_judge, progress=False)
    with pytest.raises(ConfigError, match="a published set may not hold it"):
        scored.push("private-public", keep_privileged=True, publish="bot", gate=False,
                    progress=False)
    assert zps.push_rows(rows, "default", progress=False)["rows"] == 2
    assert not any(zps.holds_privileged(r)
                   for r in zps.pull(zps.datasets()["datasets"][0]["datasetId"],
                                     progress=False))


@pytest.mark.filterwarnings("ignore::ResourceWarning")  # Ray's own log files, as in test_scale_ray
def test_ray_adapters_outputs_hold_no_privileged_text(ray: Any, tmp_path: Path) -> None:
    """decontaminate_dataset's kept rows and Parquet output, and simulate_sharded's rows and
    output file, go through the same exit filter."""
    from whileai.scale import decontaminate_dataset, simulate_sharded

    rows = leaky_rows("hiddenStateForRay", "referenceForRay", "k" * 20, 6)
    for row in rows:
        row["prompt"] += " with several words to check"
    evals = [{"prompt": "an unrelated evaluation question about the weather today"}]
    texts = ray.data.from_items([{"text": json.dumps(r)} for r in rows])
    kept, _ = decontaminate_dataset(texts, evals, column="text", output=tmp_path / "kept")
    dicts, _ = decontaminate_dataset(ray.data.from_items(rows), evals)
    out = {"kept texts": json.dumps(kept.take_all()).encode(),
           "kept dicts": json.dumps(dicts.take_all(), default=str).encode()}
    for part in (tmp_path / "kept").glob("*.parquet"):
        out[f"parquet {part.name}"] = part.read_bytes()
    tools = [{"type": "function", "function": {"name": "get_order", "parameters": {
        "type": "object", "properties": {"order_id": {"type": "string"}}}}}]
    tasks = [{**r, "privileged": {"reference": "referenceForRay"}} for r in rows[::2]]
    data = simulate_sharded(zps.seeded_agent(tools), tasks=tasks, shards=2, tools=tools,
                            output=str(tmp_path / "sharded.jsonl"), simulator=False)
    out["sharded rows"] = json.dumps(data.rows).encode()
    out["sharded file"] = (tmp_path / "sharded.jsonl").read_bytes()
    assert_absent(["hiddenStateForRay", "referenceForRay"], out)


def test_save_keeps_the_block_only_when_asked(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_KEY, "k" * 20)
    rows = leaky_rows("hiddenStateSaved", "referenceSaved", "k" * 20, 2)
    data = SimulationData(trajectories=rows, search={}, stopped_because="budget", mode="rl")
    scored = data.grade(judge=_judge, progress=False)
    for name, run in (("data", data), ("scored", scored)):
        kept = zps.load_rows(run.save(tmp_path / f"{name}-kept.jsonl", keep_privileged=True))
        assert [r["privileged"] for r in kept] == [r["privileged"] for r in rows]
        dropped = zps.load_rows(run.save(tmp_path / f"{name}.jsonl"))
        assert not any(zps.holds_privileged(r) for r in dropped)
        assert "k" * 20 not in json.dumps(kept)  # the opt-in keeps the block, not the keys


def test_a_cut_of_traces_drops_a_privileged_tool_result(platform_server: Any,
                                                        platform_key: str) -> None:
    """Traces become rows on the server (``cut``): a tool result that carried a privileged
    block reaches the new dataset, and so a catalog, without it."""
    pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed")
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    from whileai.platform import traces as wt

    sdk = TracerProvider(resource=Resource.create({"service.name": "support"}))
    sdk.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(
        endpoint=f"{platform_server.url}/v1/traces",
        headers={"Authorization": f"Bearer {platform_key}"})))
    tracer = sdk.get_tracer("doors")
    ask = json.dumps([{"role": "user", "parts": [{"type": "text", "content": "order W1?"}]}])
    ids = []
    for _ in range(2):
        with tracer.start_as_current_span("invoke_agent support") as root:
            root.set_attribute("gen_ai.operation.name", "invoke_agent")
            root.set_attribute("gen_ai.agent.name", "doors-bot")
            root.set_attribute("whileai.scenario_id", "doors-1")
            with tracer.start_as_current_span("chat m") as chat:
                chat.set_attribute("gen_ai.operation.name", "chat")
                chat.set_attribute("gen_ai.input.messages", ask)
            with tracer.start_as_current_span("execute_tool get_order") as tool:
                tool.set_attribute("gen_ai.operation.name", "execute_tool")
                tool.set_attribute("gen_ai.tool.name", "get_order")
                tool.set_attribute("gen_ai.tool.call.arguments", '{"order_id": "W1"}')
                tool.set_attribute("gen_ai.tool.call.result", json.dumps(
                    {"status": "shipped", "privileged": {"reference": "referenceInATrace"}}))
            ids.append(format(root.get_span_context().trace_id, "032x"))
    assert sdk.force_flush(30_000)
    sdk.shutdown()
    assert wt.send_score(scores=[{"traceId": t, "value": 1.0} for t in ids])["applied"] == 2
    made = wt.cut(agent="doors-bot", kind="sft", holdout=0.0)
    rows = zps.pull(made["train"]["datasetId"], progress=False)
    assert len(rows) == 1  # an SFT cut keeps one passing run per prompt
    assert rows[0]["steps"]  # the tool call is there, its privileged block is not
    assert "referenceInATrace" not in json.dumps(rows)
    zps.publish(made["train"]["datasetId"], "doors-bot")  # nothing teacher-only: publishable


def test_a_public_set_whose_bytes_hold_the_block_is_not_served_to_others(
        platform_server: Any, platform_key: str) -> None:
    """A set published before the publish check (its bytes stand in for such a set here) is
    refused to anonymous readers instead of served."""
    entry = zps.push_rows([{"prompt": "public"}], "legacy", progress=False)
    zps.publish(entry["datasetId"], "legacy-agent")
    [part] = [p for p in platform_server.files("parts") if p.parent.name == entry["datasetId"]]
    part.write_text('{"prompt": "public", "privileged": {"reference": "legacyReference"}}\n')
    with pytest.MonkeyPatch.context() as anonymous:
        anonymous.delenv("WHILEAI_API_KEY")
        with pytest.raises(PlatformError, match="holds teacher-only `privileged` blocks"):
            zps.pull(entry["datasetId"], progress=False)
