"""The spec's call forms, run as the spec writes them (issue 39): one test per item.

Platform calls go to a real ``whileai serve`` (``platform_key``); model calls to the scripted
chat server of ``chat_server.py``. Nothing here reaches the network.
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

import pytest
import requests

import whileai.simulations as zps
from _tools import TOOLS
from chat_server import Answer, completion, serve
from platform_server import require_server_extra
from whileai.cli import main
from whileai.errors import JudgeError, PublishGateError, SpecError

POLICY = "Look orders up before answering."


def rl_rows(tasks: int = 4, k: int = 2) -> list[dict[str, Any]]:
    """Graded RL rows: every task has one pass and one fail (a mixed group)."""
    return [
        {"scenario_id": f"t{t}", "prompt": f"question number {t} about order {t * 7}",
         "final_text": f"answer {t}.{r}", "reward": float(r % 2 == 0),
         "steps": [{"tool": "get_order", "arguments": {"order_id": str(t)}, "result": {}}]}
        for t in range(tasks) for r in range(k)
    ]


@pytest.fixture
def key(platform_key: str) -> str:
    """A fresh account on the real server (skips without the server extra)."""
    require_server_extra()
    return platform_key


# -- item 1: scored.push(..., mode="rl") -----------------------------------------------------
def test_scored_push_takes_mode(key: str) -> None:
    data = zps.SimulationData(trajectories=rl_rows(), search={}, stopped_because="budget",
                              mode="explore", tools=TOOLS, system_prompt=POLICY)
    scored = zps.ScoredData(rows=rl_rows())
    entry = scored.push("airline-rl-v3", gate=True, mode="rl")
    assert (entry["mode"], entry["gate"]["mode"]) == ("rl", "rl")
    with pytest.warns(UserWarning, match="tasks can only prove"):
        entry = data.push("airline-v3", mode="rl", holdout=0.5)
    assert entry["mode"] == entry["holdout"]["mode"] == "rl"
    ungraded = [{k: v for k, v in r.items() if k != "reward"} for r in rl_rows()]
    with pytest.raises(PublishGateError, match="none is graded"):
        zps.ScoredData(rows=ungraded).push("refused", mode="rl")


# -- item 3: threshold and seed positional, as 002 lists them ---------------------------------
def test_leakage_threshold_and_split_seed_are_positional() -> None:
    gen = [{"prompt": "where is my order ORD-1 please"}, {"prompt": "cancel my plan"}]
    src = [{"prompt": "where is my order ORD-1 please now"}]
    report = zps.leakage_report(gen, src, 0.8)
    assert (report["threshold"], report["n_leaky"]) == (0.8, 1)
    assert zps.leakage_report(gen, src, 0.99)["n_leaky"] == 0
    kept, dropped = zps.drop_leaky_rows(gen, src, 0.8)
    assert ([r["prompt"] for r in kept], dropped["dropped"]) == (["cancel my plan"], 1)
    rows = [{"scenario_id": f"s{i}", "prompt": f"p{i}"} for i in range(10)]
    assert zps.split_pseudo_production(rows, 0.2, 7) == zps.split_pseudo_production(
        rows, fraction=0.2, seed=7)
    assert zps.split_pseudo_production(rows, 0.2, 7) != zps.split_pseudo_production(rows, 0.2, 8)
    for name, params in (("leakage_report", ["generated", "sources", "threshold", "embedder",
                                             "examples"]),
                         ("drop_leaky_rows", ["rows", "sources", "threshold", "embedder",
                                              "examples"]),
                         ("split_pseudo_production", ["rows", "fraction", "seed"])):
        sig = inspect.signature(getattr(zps, name))
        positional = [p.name for p in sig.parameters.values()
                      if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
        assert positional == params, name


# -- item 4: judge_pairs(pairs) with the configured judge model -------------------------------
def test_judge_pairs_without_judge_uses_the_configured_judge_model(
        monkeypatch: pytest.MonkeyPatch) -> None:
    pairs = [{"prompt": "where is ORD-1?", "a": "It shipped on Monday (looked up).",
              "b": "No idea."}]

    def answer(_path: str, body: dict[str, Any], _index: int) -> Answer:
        shown = json.loads(body["messages"][-1]["content"])
        better = "A" if shown["A"].startswith("It shipped") else "B"
        return Answer(completion(json.dumps({"winner": better, "reason": "looked it up"})))

    with serve(answer) as server:
        monkeypatch.setenv("WHILEAI_JUDGE", f"vllm:judge@{server.url}")
        out, report = zps.judge_pairs(pairs)
        assert len(server.chat_bodies()) == 2  # both orders
    assert (report["a_wins"], report["position_flips"], out[0]["winner"]) == (1, 0, "a")
    monkeypatch.delenv("WHILEAI_JUDGE")
    with pytest.raises(JudgeError, match="WHILEAI_JUDGE"):
        zps.judge_pairs(pairs)


# -- item 6: data.push(name, agent=...) attaches the tools and the system prompt --------------
def test_push_with_agent_registers_tools_and_system_prompt(key: str) -> None:
    data = zps.SimulationData(trajectories=rl_rows(), search={}, stopped_because="budget",
                              mode="rl", tools=TOOLS, system_prompt=POLICY)
    data.push("airline-v3", agent="airline-support")
    record = next(a for a in zps.agents() if a["agent"] == "airline-support")
    assert record["systemPrompt"] == POLICY
    assert [t["function"]["name"] for t in record["tools"]] == ["get_order"]


# -- item 8: simulate(agent=my_agent) ---------------------------------------------------------
def test_simulate_agent_alone_uses_what_the_agent_carries() -> None:
    def my_agent(message: str) -> dict[str, Any]:
        return {"steps": [], "final_text": "Sorry, I cannot look that up."}

    with pytest.raises(SpecError, match=r"my_agent\.tools = TOOLS"):
        zps.simulate(agent=my_agent)
    my_agent.tools = TOOLS  # type: ignore[attr-defined]
    my_agent.system_prompt = POLICY  # type: ignore[attr-defined]
    data = zps.simulate(agent=my_agent, budget=4, simulator=False, progress=False)
    assert len(data) == 4
    assert data.system_prompt == POLICY


# -- item 9: run.holdout after finish reaches the server --------------------------------------
def test_holdout_after_finish_is_uploaded(key: str, tmp_path: Path) -> None:
    with zps.training_run("sft-v3", dataset="ds_x", total_steps=2) as run:
        run.log(0, loss=1.0)
        run.log(1, loss=0.5)
    assert run.status == "done"
    assert run.holdout(before=0.42, after=0.58) == "Better"
    found = zps.get_run(run.id, dir=tmp_path / "not-local")  # read from the server
    assert found["holdout_result"]["verdict"] == "Better"
    assert [e["kind"] for e in found["events"]] == ["finish", "holdout"]


# -- item 10: send_score with a 16-hex trace id -----------------------------------------------
def _otlp_json(trace_ids: list[str]) -> bytes:
    spans = [{"traceId": t, "spanId": f"{i + 1:016x}", "name": "chat m",
              "startTimeUnixNano": "1", "endTimeUnixNano": "2", "attributes": []}
             for i, t in enumerate(trace_ids)]
    return json.dumps({"resourceSpans": [{"resource": {"attributes": []},
                                          "scopeSpans": [{"spans": spans}]}]}).encode()


def test_send_score_accepts_the_short_trace_id(key: str, platform_server: Any) -> None:
    full = "4bf92f3577b34da6a3ce929d0e0e4736"
    twins = ["1234567890abcdef" + "0" * 15 + "1", "1234567890abcdef" + "0" * 15 + "2"]
    sent = requests.post(f"{platform_server.url}/v1/traces", data=_otlp_json([full, *twins]),
                         headers={"Authorization": f"Bearer {key}",
                                  "Content-Type": "application/json"}, timeout=10)
    assert sent.ok, sent.text
    assert zps.send_score("4bf92f3577b34da6", 1.0)["applied"] == 1
    listed = {t["traceId"]: t["scores"] for t in zps.list_traces()["traces"]}
    assert listed[full] == {"score": 1.0}
    reply = zps.send_score(scores=[{"traceId": "4bf92f3577b34da6", "value": 0.0},
                                   {"traceId": "1234567890abcdef", "value": 1.0}])
    assert reply["applied"] == 1
    assert "starts several traces" in reply["rejected"][0]["reason"]
    assert twins[0] in reply["rejected"][0]["reason"]


# -- item 11: the plain-HTTP runs routes with X-Api-Key ----------------------------------------
def test_plain_http_runs_with_x_api_key(key: str, platform_server: Any) -> None:
    url, headers = platform_server.url, {"X-Api-Key": key}
    made = requests.post(f"{url}/runs", json={"name": "curl-run", "dataset_id": "ds_x",
                                              "base_model": "m", "total_steps": 2},
                         headers=headers, timeout=10)
    assert made.ok, made.text
    run_id = made.json()["runId"]
    points = {"points": [{"step": 1, "loss": 1.2, "lr": 1e-4}, {"step": 2, "loss": 0.9}]}
    assert requests.post(f"{url}/runs/{run_id}/log", json=points, headers=headers,
                         timeout=10).json()["stored"] == 2
    done = requests.post(f"{url}/runs/{run_id}/finish", json={"status": "done"},
                         headers=headers, timeout=10)
    assert done.json()["status"] == "done"
    assert [p["loss"] for p in zps.get_run(run_id, dir="/nonexistent")["series"]] == [1.2, 0.9]
    refused = requests.post(f"{url}/runs", json={"name": "x"},
                            headers={"X-Api-Key": "wai_wrong"}, timeout=10)
    assert refused.status_code == 401
    page = requests.get(f"{url}/runs", timeout=10)  # GET /runs stays the runs page
    assert "text/html" in page.headers["content-type"]


# -- item 13: whileai push, push_file(agent=), the SFT gate's hint ----------------------------
def test_push_file_with_agent_and_the_push_command(key: str, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "rollout.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rl_rows()), encoding="utf-8")
    entry = zps.push_file(str(path), agent="airline-support", mode="rl")
    assert (entry["agent"], entry["name"], entry["rows"]) == ("airline-support",
                                                               "rollout.jsonl", 8)
    assert main(["push", str(path), "--name", "cli-set", "--agent", "bot", "--quiet"]) == 0
    assert "pushed ds_" in capsys.readouterr().out
    listed = {d["name"]: d for d in zps.datasets()["datasets"]}
    assert listed["cli-set"]["agent"] == "bot"
    sft = tmp_path / "sft.jsonl"  # an SFT export: one passing reply per ask, repeated asks
    sft.write_text("".join(json.dumps({"scenario_id": f"t{t}", "prompt": f"q{t}",
                                       "final_text": "a", "reward": 1.0}) + "\n"
                           for t in range(3) for _ in range(2)), encoding="utf-8")
    with pytest.raises(PublishGateError, match="mode='sft'"):
        zps.push_file(str(sft))
    assert zps.push_file(str(sft), mode="sft")["gate"]["mode"] == "sft"
    assert main(["push", str(sft), "--mode", "sft", "--quiet"]) == 0


# -- item 5: pass^k at the run's k when mode="rl" stopped unanimous groups early --------------
def test_default_rl_run_reports_pass_pow_k_at_the_runs_k(tmp_path: Path) -> None:
    out = tmp_path / "rows.jsonl"
    data = zps.simulate(zps.seeded_agent(TOOLS), tools=TOOLS, system_prompt=POLICY, mode="rl",
                        budget=160, simulator=False, progress=False, output=out)
    assert data.search["groups"]["stopped"] >= 1  # the probe stopped some groups early

    def my_judge(row: dict[str, Any]) -> dict[str, float]:
        return {"reward": float("ORD-" in row["final_text"])}

    scored = data.grade(judge=my_judge, progress=False)
    result = scored.pass_at
    assert result.k == data.rollouts_per_request == 8
    assert result.pass_pow_k is not None
    assert f"pass^8 {result.pass_pow_k:.2f}" in str(result)
    assert any("stopped early as unanimous" in n for n in result.notes)
    from_file = zps.run_judge(str(out), my_judge, progress=False)  # the stamps are in the file
    assert from_file.pass_at.k == 8
    assert from_file.pass_at.pass_pow_k == result.pass_pow_k


def test_stopped_groups_count_at_k_and_split_or_cut_ones_are_left_out() -> None:
    def group(task: str, rewards: list[float], **stamp: Any) -> list[dict[str, Any]]:
        return [{"scenario_id": task, "reward": r, **stamp} for r in rewards]

    stop = {"early_stop": {"after": 2, "k": 4}}
    rows = [*group("mixed", [1, 0, 1, 0]), *group("solved", [1, 1], **stop),
            *group("failed", [0, 0], **stop)]
    result = zps.pass_at(rows, n_resamples=50)
    assert (result.k, result.n_groups, result.n_rows) == (4, 3, 8)
    # pass^4: mixed C(2,4)=0, solved 1, failed 0; pass@4: 1, 1, 0
    assert (result.pass_pow_k, result.pass_at_k) == (1 / 3, 2 / 3)
    split = [*rows, *group("split", [1, 0], **stop), *group("cut", [1], group_cut=True)]
    result = zps.pass_at(split, n_resamples=50)
    assert (result.k, result.n_groups, result.pass_pow_k) == (4, 5, 1 / 3)
    assert any("split once graded" in n for n in result.notes)
    assert any("cut short" in n for n in result.notes)


def test_html_report_lists_each_metric_once(tmp_path: Path) -> None:
    rows = [{"scenario_id": f"t{t}", "reward": float(t % 2)} for t in range(4)]  # k=1: n/a
    html = zps.report_html(rows, tmp_path / "r.html")
    assert html.count("<td>pass@1</td>") == 1
    assert "<td>pass^k</td>" in html


# -- item 2: the hf_* calls take the spec's arguments ------------------------------------------
def test_hf_calls_take_the_spec_signatures(key: str, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from whileai.errors import ConfigError
    from whileai.simulations.export.hub import adapter_folder, repo_id

    for name in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    spec = {"hf_publish": ["dataset_id", "namespace", "repo", "private", "wait", "timeout",
                           "poll", "api_key"],
            "hf_publish_run": ["run_id", "namespace", "repo", "private", "wait", "timeout",
                               "poll", "api_key"],
            "hf_status": ["api_key"]}
    for name, params in spec.items():
        sig = inspect.signature(getattr(zps, name))
        assert [p for p in sig.parameters if sig.parameters[p].kind
                is inspect.Parameter.POSITIONAL_OR_KEYWORD] == params, name
    assert inspect.signature(zps.hf_publish).parameters["private"].default is False
    assert inspect.signature(zps.hf_publish_run).parameters["private"].default is True
    entry = zps.push_rows([{"prompt": "hi", "final_text": "hello"}], "Airline refunds")
    with pytest.raises(ConfigError, match="HF_TOKEN"):  # the call form is accepted
        zps.hf_publish(entry["datasetId"], repo="airline-refunds", wait=True)
    with pytest.raises(ConfigError, match="HF_TOKEN"):
        zps.hf_status(api_key=None)
    assert repo_id(None, "airline-refunds", name="x", username="ana") == "ana/airline-refunds"
    adapter = tmp_path / "adapter"
    adapter.mkdir()
    with zps.training_run("sft-v3", server=False) as run:
        run.log(0, loss=1.0)
        run.finish(adapter=str(adapter))
    info = zps.get_run(run.id)
    assert adapter_folder(info, None) == adapter  # the folder finish(adapter=...) recorded
    with pytest.raises(ConfigError, match="HF_TOKEN"):
        zps.hf_publish_run(run.id, private=True)
    with zps.training_run("no-adapter", server=False) as bare:
        bare.log(0, loss=1.0)
    with pytest.raises(ConfigError, match="adapter_dir="):
        zps.hf_publish_run(bare.id, private=True)
