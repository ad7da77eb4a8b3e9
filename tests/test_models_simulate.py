"""simulate() with a model agent and a model writer on a local chat server, in every mode."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

import whileai
import whileai.simulations as zps
from _tools import TOOLS
from chat_server import Answer, completion, serve

POLICY = "Help customers with their orders. Never invent an order status."


class Backend:
    """Plays the writer (JSON person messages) and the agent (tool call, then an answer)."""

    def __init__(self, junk_every: int = 0) -> None:
        self.lock = threading.Lock()
        self.writer_calls = 0
        self.junk_every = junk_every

    def __call__(self, path: str, body: dict[str, Any], i: int) -> Answer:
        messages = body["messages"]
        if "never the assistant" in messages[0]["content"]:
            with self.lock:
                self.writer_calls += 1
                n = self.writer_calls
            if self.junk_every and n % self.junk_every == 0:
                return Answer(completion("¯\\_(ツ)_/¯"))
            if "next message" in messages[-1]["content"]:
                return Answer(completion('{"done": true}'))
            return Answer(completion(json.dumps(
                {"message": f"Hi, where is my order {4400 + n}? It is late."}), model="writer"))
        last = messages[-1]
        if last["role"] == "user":
            return Answer(completion(None, tool_calls=[("get_order", {"order_id": "4412"})],
                                     model="policy-m", logprobs=[-0.5, -0.5]))
        return Answer(completion("Order 4412: see the status above.", model="policy-m",
                                 logprobs=[-1.0]))


pytestmark = pytest.mark.usefixtures("no_model_roles")


@pytest.mark.parametrize("mode", ["explore", "sft", "rl"])
def test_simulate_with_model_agent_and_writer(mode: str, tmp_path: Path) -> None:
    backend = Backend()
    out = tmp_path / "run.jsonl"
    with serve(backend) as server:
        data = zps.simulate(
            agent=f"vllm:policy-m@{server.url}", simulator=f"vllm:writer@{server.url}",
            tools=TOOLS, system_prompt=POLICY, mode=mode, budget=8, logprobs=True,
            output=str(out), progress=False, advanced={"concurrency": 4},
        )
    rows = data.trajectories
    assert len(rows) == 8
    assert backend.writer_calls > 0
    for row in rows:
        assert row["prompt"].startswith("Hi, where is my order")
        assert row["steps"][0]["tool"] == "get_order"
        assert row["final_text"].startswith("Order 4412")
        assert row["model_version"] == "policy-m"
        assert row["usage"]["output_tokens"] > 0
        assert row["logprob"] == -2.0
        assert row["n_tokens"] == 3
    saved = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(saved) == 8
    assert all("privileged" not in r for r in saved)
    report = zps.logprob_report(rows)
    assert report["coverage"] == 1.0


def test_writer_junk_never_becomes_a_row() -> None:
    backend = Backend(junk_every=2)
    with serve(backend) as server:
        data = zps.simulate(
            agent=f"vllm:policy-m@{server.url}", simulator=f"vllm:writer@{server.url}",
            tools=TOOLS, system_prompt=POLICY, budget=6, progress=False,
            advanced={"concurrency": 2},
        )
    assert len(data.trajectories) == 6
    assert all("ツ" not in r["prompt"] and r["prompt"].strip() for r in data.trajectories)


def test_configured_agent_is_used_when_no_keyword(monkeypatch: pytest.MonkeyPatch) -> None:
    with serve(Backend()) as server:
        monkeypatch.setenv("WHILEAI_AGENT", f"vllm:policy-m@{server.url}")
        with whileai.context(simulator=False):
            data = zps.simulate(tools=TOOLS, system_prompt=POLICY, simulator=False, budget=3,
                                progress=False)
    assert len(data.trajectories) == 3
    assert all(r["model_version"] == "policy-m" for r in data.trajectories)


def test_unknown_backend_prefix_is_refused_at_the_call() -> None:
    with pytest.raises(whileai.ConfigError, match=r"vllm:<model>@<url>"):
        zps.simulate(agent="hosted:qwen", tools=TOOLS, system_prompt=POLICY, simulator=False,
                     budget=2, progress=False)


def test_grade_the_run_with_a_model_judge() -> None:
    backend = Backend()

    def handler(path: str, body: dict[str, Any], i: int) -> Answer:
        if "strict grader" in body["messages"][0]["content"]:
            return Answer(completion('{"reward": 1, "reason": "looked it up"}', model="judge"))
        return backend(path, body, i)

    with serve(handler) as server:
        data = zps.simulate(agent=f"vllm:policy-m@{server.url}", tools=TOOLS,
                            system_prompt=POLICY, simulator=False, budget=4, progress=False)
        with whileai.context(judge=f"vllm:judge@{server.url}"):
            report = data.grade(rubric="Looks the order up before answering.")
    assert report["graded"] == 4
    assert all(r["reward"] == 1.0 for r in data.trajectories)
    assert all(r["judge_meta"]["version"].startswith("judge@") for r in data.trajectories)


def test_32_in_flight_lose_and_duplicate_no_row() -> None:
    with serve(Backend()) as server:
        data = zps.simulate(agent=f"vllm:policy-m@{server.url}", tools=TOOLS,
                            system_prompt=POLICY, simulator=False, mode="rl", budget=64,
                            progress=False, advanced={"concurrency": 32})
        agent_calls = [b for b in server.chat_bodies() if b["model"] == "policy-m"]
    rows = data.trajectories
    assert len(rows) == 64
    keys = {(r["scenario_id"], r["rollout_index"]) for r in rows}
    assert len(keys) == 64
    # every model call is accounted for by exactly one row: no retried or lost rollouts
    expected = sum(1 + sum(1 for s in r["steps"] if "tool" in s or s.get("role") == "assistant")
                   for r in rows)
    assert len(agent_calls) == expected


def test_spent_quota_stops_every_rollout_fast() -> None:
    quota = Answer({"error": {"code": "insufficient_quota", "message": "quota"}}, status=429)
    with serve([quota]) as server:
        data = zps.simulate(agent=f"vllm:policy-m@{server.url}", tools=TOOLS,
                            system_prompt=POLICY, simulator=False, budget=4, progress=False,
                            advanced={"concurrency": 4})
        calls = len(server.chat_bodies())
    assert data.trajectories == []
    assert "quota" in str(data.search.get("first_agent_error", "")).lower()
    assert calls <= 4  # the first quota error stops the client; no retry storm


def test_cli_grade_and_logprobs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from whileai.cli import main

    src, out = tmp_path / "rows.jsonl", tmp_path / "graded.jsonl"
    rows = [{"prompt": "p1", "final_text": "a", "steps": [], "model_version": "m",
             "logprob": -2.0, "n_tokens": 2}]
    src.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    verdict = completion('{"reward": 0, "reason": "no lookup"}', model="judge")
    with serve([verdict]) as server:
        assert main(["models", "grade", str(src), "--judge", f"vllm:judge@{server.url}",
                     "--rubric", "Look it up.", "--output", str(out)]) == 0
    graded = [json.loads(line) for line in out.read_text().splitlines()]
    assert graded[0]["reward"] == 0.0
    assert '"graded": 1' in capsys.readouterr().out
    assert main(["models", "logprobs", str(out), "--base-model", "m"]) == 0
    assert "logprobs on 1/1 rows" in capsys.readouterr().out
    assert main(["models", "grade", str(src), "--output", str(out)]) == 2  # no judge configured


def test_writer_quota_stops_the_run_naming_the_writer() -> None:
    quota = Answer({"error": {"code": "insufficient_quota"}}, status=429)

    def handler(path: str, body: dict[str, Any], i: int) -> Answer:
        if "never the assistant" in body["messages"][0]["content"]:
            return quota
        return Backend()(path, body, i)

    with serve(handler) as server:
        try:
            data = zps.simulate(agent=f"vllm:policy-m@{server.url}",
                                simulator=f"vllm:writer@{server.url}", tools=TOOLS,
                                system_prompt=POLICY, budget=4, progress=False)
            reason = data.stopped_because  # mapped by the engine ...
        except whileai.QuotaError as exc:  # ... or raised through it
            reason = getattr(exc, "stopped_because", repr(exc))
    assert reason == "writer_quota_exceeded"


def test_refused_agent_key_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    with serve([Answer({"error": "bad key"}, status=401)]) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-bad")
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        try:
            data = zps.simulate(agent="openai:gpt-x", tools=TOOLS, system_prompt=POLICY,
                                simulator=False, budget=4, progress=False,
                                advanced={"concurrency": 2})
            assert data.trajectories == []
            message = str(data.search.get("first_agent_error"))
        except whileai.AuthError as exc:
            message = str(exc)
        calls = len(server.chat_bodies())
    assert "OPENAI_API_KEY" in message
    assert calls <= 2  # the first refusal stops the client
