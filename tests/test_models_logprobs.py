"""Logprob reports (coverage, KL, staleness) and reference scoring against a local server."""

from __future__ import annotations

from typing import Any

import pytest

from chat_server import Answer, completion, serve
from whileai.errors import ConfigError
from whileai.simulations.generate.model_agent import AgentSettings, ModelAgent
from whileai.simulations.models import ChatClient, RetryPolicy, local_model
from whileai.simulations.selection.gate import calibrate
from whileai.simulations.training.logprobs import (
    format_logprob_report,
    logprob_report,
    mean_kl,
    staleness_report,
)
from whileai.simulations.training.reference import reference_logprobs, turn_token_counts

FAST = RetryPolicy(max_retries=1, backoff=0.001, timeout=5.0)


def test_logprob_report_coverage_and_confidence_warning() -> None:
    rows: list[dict[str, Any]] = []
    for i in range(12):
        conf = -0.1 if i % 2 else -2.0
        rows.append({"prompt": f"p{i}", "logprob": conf * 10, "n_tokens": 10,
                     "reward": 1.0 if i % 2 else 0.0, "usage": {"input_tokens": 5,
                                                                "output_tokens": 10}})
    rows.append({"prompt": "no-lp", "reward": 1.0, "truncated": True})
    report = logprob_report(rows)
    assert report["with_logprob"] == 12
    assert report["coverage"] == pytest.approx(12 / 13)
    assert report["reward_confidence_corr"] == pytest.approx(1.0)
    assert report["usage"] == {"input_tokens": 60, "output_tokens": 120}
    assert report["truncated"] == 1
    assert any("confidence" in w for w in report["warnings"])
    assert any("1 of 13 rows carry no logprob" in w for w in report["warnings"])
    assert "12/13" in format_logprob_report(report)
    assert logprob_report(rows[:5])["reward_confidence_corr"] is None  # too few rows


def test_mean_kl_matches_hand_computation_and_the_gate_stamp() -> None:
    rows = [
        {"task_id": "a", "logprob": -4.0, "ref_logprob": -6.0, "n_tokens": 4, "reward": 1.0},
        {"task_id": "a", "logprob": -2.0, "ref_logprob": -2.0, "n_tokens": 2, "reward": 0.0},
        {"task_id": "b", "logprob": -1.0, "ref_logprob": -4.0, "n_tokens": 3, "reward": 1.0},
        {"task_id": "b", "logprob": -1.0, "n_tokens": 3, "reward": 1.0},
    ]
    report = mean_kl(rows, ref="ref_logprob")
    assert report["per_task"] == {"a": 0.25, "b": 1.0}
    assert report["mean_kl"] == pytest.approx((0.5 + 0.0 + 1.0) / 3, abs=1e-6)
    assert report["pooled_kl"] == pytest.approx((2 + 0 + 3) / 9, abs=1e-6)
    assert report["skipped"] == 1
    stamped = calibrate(rows, ref="ref_logprob")
    assert stamped[0]["calibration"]["mean_kl"] == report["per_task"]["a"]


def test_staleness_report_separates_usable_and_unusable_stale_rows() -> None:
    rows = [
        {"model_version": "Qwen/Qwen3-4B", "logprob": -1.0, "n_tokens": 2},
        {"model_version": "old-ckpt", "logprob": -1.0, "n_tokens": 2},
        {"model_version": "old-ckpt"},
        {"prompt": "x"},
    ]
    report = staleness_report(rows, base_model="Qwen/Qwen3-4B")
    assert report["versions"] == {"Qwen/Qwen3-4B": 1, "old-ckpt": 2}
    assert (report["stale"], report["stale_usable"], report["stale_unusable"]) == (2, 1, 1)
    assert report["missing_version"] == 1
    assert report["ok"] is False


def test_turn_token_counts() -> None:
    assert turn_token_counts({"n_tokens": 5}) == [5]
    assert turn_token_counts({"steps": []}) is None
    assert turn_token_counts({"n_tokens": 3, "steps": [{"n_tokens": 4}]}) is None


def _reference_handler(path: str, body: dict[str, Any], i: int) -> Answer:
    if body.get("prompt_logprobs") is not None:  # the reference model scoring a prefix
        n_prompt = 40 + len(body["messages"])
        entries = [None] + [{"17": {"logprob": -0.25, "rank": 1}} for _ in range(n_prompt)]
        out = completion("x", model="ref-model")
        out["prompt_logprobs"] = entries
        return Answer(out)
    last = body["messages"][-1]
    if last["role"] == "user":
        return Answer(completion("Checking.", tool_calls=[("get_order", {"order_id": "1"})],
                                 logprobs=[-0.5, -0.5, -0.5], model="policy"))
    return Answer(completion("Shipped.", logprobs=[-1.0, -1.0], model="policy"))


def test_reference_logprobs_end_to_end_then_mean_kl() -> None:
    class World:
        def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
            return {"status": "shipped"}

    with serve(_reference_handler) as server:
        agent = ModelAgent(ChatClient(local_model(server.url, model="policy"), policy=FAST),
                           tools=[{"name": "get_order", "parameters": {}}],
                           system_prompt="Be brief.", settings=AgentSettings(logprobs=True))
        try:
            rows = [agent.run({"prompt": f"order {i}?"}, world=World(), seed=i)
                    for i in range(2)]
        finally:
            agent.close()
        rows.append({"prompt": "unscored"})
        report = reference_logprobs(rows, f"vllm:ref-model@{server.url}",
                                    system_prompt="Be brief.", policy=FAST)
        scoring = [b for b in server.chat_bodies() if b.get("prompt_logprobs") is not None]
    assert report["scored"] == 2
    assert report["reasons"] == {"no n_tokens": 1}
    assert rows[0]["n_tokens"] == 5
    assert rows[0]["ref_logprob"] == pytest.approx(-0.25 * 5)
    assert len(scoring) == 4  # two agent turns per row
    assert all(b["continue_final_message"] is True for b in scoring)
    assert all(b["messages"][-1]["role"] == "assistant" for b in scoring)
    assert scoring[0]["messages"][0] == {"role": "system", "content": "Be brief."}
    kl = mean_kl(rows)
    assert kl["rows"] == 2
    assert kl["mean_kl"] == pytest.approx((-3.5 + 1.25) / 5)


def test_reference_logprobs_needs_a_spec() -> None:
    with pytest.raises(ConfigError, match="vllm:"):
        reference_logprobs([{"prompt": "p"}], None)
