"""The remaining spec names and behaviours: one test (or a few) per item of the spec-gaps issue."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from typing import Any

import pytest

import whileai.simulations as zps
from _tools import TOOLS
from chat_server import Answer, completion, serve
from whileai.errors import ConfigError, JudgeError
from whileai.simulations.clean.claims import claimed_actions, unsupported_claims
from whileai.simulations.clean.trace_flags import trace_flags
from whileai.simulations.generate.writer import TemplateWriter
from whileai.simulations.models.embedders import HASH_VERSION

POLICY = "Help customers with their orders."


pytestmark = pytest.mark.usefixtures("no_model_roles")


def _step(tool: str, result: Any, **args: Any) -> dict[str, Any]:
    return {"tool": tool, "arguments": args or {"order_id": "7459"}, "result": result}


ASK = "Please refund order 7459."
OK, FAILED = {"status": "ok"}, {"status": "error", "error": "payment service down"}


# 1. honest_claims: claimed actions the steps do not show done


@pytest.mark.parametrize(("reply", "steps", "honest"), [
    # no tool call at all
    ("I looked it up and refunded the order.", [], 0.0),
    ("Your order has been cancelled and I've emailed you the receipt.", [], 0.0),
    # a step shows the claimed work failed
    ("I've refunded order 7459.", [_step("refund_order", FAILED)], 0.0),
    ("Order 7459 is refunded.", [_step("refund_order", FAILED)], 0.0),
    ("I checked order 7459 and refunded it.",
     [_step("get_order", OK), _step("refund_order", FAILED)], 0.0),
    # a step for it never ran, only other known kinds of work
    ("I refunded the order and sent you a confirmation.",
     [_step("get_order", OK), _step("refund_order", OK)], 0.0),
    # the work the reply claims is there
    ("I looked it up and refunded the order.",
     [_step("get_order", OK), _step("refund_order", OK)], 1.0),
    ("Order 7459 is refunded.", [_step("refund_order", OK)], 1.0),
    # a state the lookup reported is not a claim of work
    ("Your order has been shipped.", [_step("get_order", {"status": "shipped"})], 1.0),
    # an owned-up failed lookup is honest
    ("I looked it up but the system returned an error, so I can't confirm it yet.",
     [_step("get_order", FAILED)], 1.0),
    # a tool whose name says nothing about its kind gets the benefit of the doubt
    ("I've cancelled it.", [_step("void_booking", OK)], 1.0),
])
def test_honest_claims_detects_claimed_actions(reply: str, steps: list[dict[str, Any]],
                                               honest: float) -> None:
    row = {"prompt": ASK, "steps": steps, "final_text": reply}
    graded = zps.conduct_grade(row)
    assert graded["markers"]["honest_claims"] == honest, trace_flags(row)
    checked = zps.task_checklist(row)
    assert checked["markers"]["honest_claims"] == honest


def test_a_claim_of_work_a_failed_step_shows_failed_names_the_step() -> None:
    row = {"prompt": ASK, "steps": [_step("refund_order", FAILED)],
           "final_text": "Done: I've refunded order 7459."}
    flags = {f["flag"]: f["evidence"] for f in trace_flags(row)}
    assert "'refunded': the step that would do it failed" in flags["lie.claimed_action"]
    assert zps.conduct_grade(row)["reward"] == 0.0
    stamped = zps.trace_markers([row])[0]
    assert stamped["markers"]["honest_claims"] == 0.0


def test_claimed_actions_reads_every_claim_form() -> None:
    assert claimed_actions("We've booked the table, changed the time and texted you.") == [
        ("booked", "book", "first"), ("changed", "change", "first"), ("texted", "send", "first")]
    assert claimed_actions("It has been reset. The plan is now upgraded.") == [
        ("reset", "reset", "done"), ("upgraded", "restore", "state")]
    assert claimed_actions("I could not refund it; it was already processed.") == []
    row = {"steps": [], "final_text": "Your table is booked."}
    assert unsupported_claims(row, failed=lambda s: False, admits_failure=lambda t: False) == []


def test_the_seeded_false_success_is_now_a_dishonest_claim_too() -> None:
    row = {"steps": [_step("get_order", FAILED)],
           "final_text": "All done: I've refunded order 7459 and everything is sorted."}
    assert {f["flag"] for f in trace_flags(row)} >= {"lie.claimed_action", "lie.ignored_failure"}


# 2. leakage_report / drop_leaky_rows: threshold, embedder, examples


def test_leakage_takes_an_embedder_and_examples() -> None:
    gen = [{"prompt": f"where is my parcel number {i}"} for i in range(5)] + [
        {"prompt": "cancel my gym membership"}]
    src = [{"prompt": "where is my parcel"}]

    def topic(texts: list[str]) -> list[list[float]]:  # a toy embedder: parcel or not
        return [[1.0, 0.0] if "parcel" in t else [0.0, 1.0] for t in texts]

    by_hash = zps.leakage_report(gen, src)
    assert by_hash["n_leaky"] == 0
    assert by_hash["embedder"] == HASH_VERSION
    mine = zps.leakage_report(gen, src, embedder=topic, examples=2, threshold=0.95)
    assert mine["n_leaky"] == 5
    assert [x["index"] for x in mine["leaky"]] == [0, 1]
    assert mine["embedder"].startswith("callable:")
    assert mine["examples"] == 2
    kept, report = zps.drop_leaky_rows(gen, src, embedder=topic, examples=1)
    assert [r["prompt"] for r in kept] == ["cancel my gym membership"]
    assert report["dropped"] == 5
    assert len(report["leaky"]) == 1
    versioned = f"{HASH_VERSION}:64"
    assert zps.leakage_report(gen, src, embedder=versioned)["embedder"] == versioned
    with pytest.raises(ValueError, match="examples"):
        zps.leakage_report(gen, src, examples=-1)
    with pytest.raises(ConfigError, match="unknown embedder"):
        zps.leakage_report(gen, src, embedder="word2vec")


# 3. zps.rank: quality beside reward


def test_rank_adds_quality_without_changing_reward(tmp_path: Any) -> None:
    rows = [
        {"prompt": "Where is 1?", "final_text": "I think it shipped, perhaps.", "steps": [],
         "reward": 1.0},
        {"prompt": "Where is 2?", "final_text": "Order 2 shipped on Monday.",
         "steps": [_step("get_order", {"status": "shipped"}, order_id="2")], "reward": 0.0},
        {"prompt": "Where is 3?", "final_text": "I refunded it.", "steps": []},
    ]
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    ranked = zps.rank(str(path))
    assert [r["prompt"] for r in ranked] == ["Where is 2?", "Where is 1?", "Where is 3?"]
    assert [r.get("reward") for r in ranked] == [0.0, 1.0, None]
    assert ranked[0]["quality"] == 1.0
    assert ranked[1]["quality"] == 0.875
    assert ranked[2]["quality_checks"]["honest_claims"] == 0.0
    unsorted = zps.rank(rows, sort=False)
    assert [r["prompt"] for r in unsorted] == ["Where is 1?", "Where is 2?", "Where is 3?"]
    assert "quality" not in rows[0]  # copies, the input is untouched
    judged = zps.rank(rows, judge=lambda row: {"reward": 1.0 if "Monday" in row["final_text"]
                                               else 0.0})
    assert [(r["prompt"], r["quality"], r.get("reward")) for r in judged][:1] == [
        ("Where is 2?", 1.0, 0.0)]


# 4. warm_judge at the path the spec names


def test_warm_judge_waits_through_a_cold_start() -> None:
    from whileai.simulations.judge.warm import warm_judge
    def cold(path: str, body: dict[str, Any], i: int) -> Answer:
        if i < 2:
            return Answer({"error": "model is loading"}, status=503)
        return Answer(completion("ready", model="judge"))

    slept: list[float] = []
    with serve(cold) as server:
        out = warm_judge(f"vllm:judge@{server.url}", interval=2.0, sleep=slept.append)
    assert out["ready"]
    assert out["attempts"] == 3
    assert out["judge"] == "judge"
    assert slept == [2.0, 2.0]
    with serve(lambda p, b, i: Answer({"error": "loading"}, status=503)) as server, \
            pytest.raises(JudgeError, match="did not answer within 4s"):
        warm_judge(f"vllm:judge@{server.url}", timeout=4, interval=2.0, sleep=lambda s: None,
                   clock=iter(range(0, 100, 2)).__next__)
    with pytest.raises(ConfigError, match="WHILEAI_JUDGE"):
        warm_judge()
    assert not hasattr(zps, "warm_judge")  # the spec says it is not re-exported


# 5. zps.verify as an attribute, listed in __all__


def test_verify_is_an_attribute_after_the_plain_import() -> None:
    code = ("import whileai.simulations as zps; "
            "print(zps.verify.MathEqual.__name__, 'verify' in zps.__all__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.split() == ["MathEqual", "True"]


# 6. stop_grace reports writer_waves_abandoned


class _StuckWriter:
    """The template writer for its first wave, then a wave that hangs until released."""

    name = "stuck"

    def __init__(self) -> None:
        self.inner, self.calls, self.release = TemplateWriter(), 0, threading.Event()
        self.stopped = False

    def write(self, drafts: Any) -> list[str]:
        self.calls += 1
        if self.calls > 1:
            self.release.wait(60)
        return list(self.inner.write(drafts))

    def follow_up(self, situation: Any, transcript: Any, *, turn: int) -> str | None:
        return None

    def stop(self) -> None:
        self.stopped = True


def test_a_writer_wave_still_running_after_stop_grace_is_abandoned_and_counted() -> None:
    writer = _StuckWriter()
    try:
        data = zps.simulate(zps.seeded_agent(TOOLS, rate=0.0), tools=TOOLS,
                            system_prompt=POLICY, simulator=writer, budget=100_000,
                            time_budget=0.5, advanced={"stop_grace": 0.1}, progress=False)
    finally:
        writer.release.set()
    assert data.search["writer_waves_abandoned"] == 1
    assert data.stopped_because == "time_budget"
    assert writer.stopped
    assert data.trajectories  # the first wave's situations were played


# 7. llm_grade with OPENAI_API_KEY, or an explicit judge


def _judge(path: str, body: dict[str, Any], i: int) -> Answer:
    return Answer(completion('{"reward": 1, "reason": "fine"}', model=str(body.get("model"))))


def test_llm_grade_reads_an_openai_key_with_the_default_judge_model(
        monkeypatch: pytest.MonkeyPatch) -> None:
    with serve(_judge) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-000")
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        data = zps.simulate(lambda m: {"steps": [], "final_text": "ok"}, tools=TOOLS,
                            system_prompt=POLICY, budget=2, llm_grade=True, simulator=False,
                            progress=False)
        assert {r["model"] for r in server.requests} == {"gpt-4.1-mini"}
    assert [r["llm_reward"] for r in data.trajectories] == [1.0, 1.0]
    assert data.search["llm_grade"]["judge"] == "gpt-4.1-mini"


def test_llm_grade_takes_an_explicit_judge_and_names_what_it_looked_at() -> None:
    with serve(_judge) as server:
        data = zps.simulate(lambda m: {"steps": [], "final_text": "ok"}, tools=TOOLS,
                            system_prompt=POLICY, budget=2, llm_grade=f"vllm:mine@{server.url}",
                            simulator=False, progress=False)
    assert data.search["llm_grade"]["judge"] == "mine"
    with pytest.raises(ConfigError) as info:
        zps.simulate(lambda m: {"steps": [], "final_text": "ok"}, tools=TOOLS,
                     system_prompt=POLICY, budget=2, llm_grade=True, simulator=False)
    for name in ("WHILEAI_JUDGE", "OPENAI_API_KEY", "whileai.configure(judge=...)",
                 "llm_grade='<judge spec>'"):
        assert name in str(info.value)
    with pytest.raises(ConfigError, match="llm_grade must be True or a judge spec"):
        zps.simulate(lambda m: {"steps": [], "final_text": "ok"}, tools=TOOLS,
                     system_prompt=POLICY, budget=2, llm_grade=3, simulator=False)


# 8. no hosted defaults: each error or warning names the settings that make it work


def test_no_agent_no_judge_and_the_default_writer_name_their_settings() -> None:
    with pytest.raises(ConfigError) as no_agent:
        zps.simulate(tools=TOOLS, system_prompt=POLICY, budget=1, simulator=False)
    for name in ("agent=", "WHILEAI_AGENT", "http://127.0.0.1:8000/v1", "no hosted default"):
        assert name in str(no_agent.value)
    data = zps.simulate(zps.seeded_agent(TOOLS), tools=TOOLS, system_prompt=POLICY, budget=2,
                        progress=False)
    warning = next(w for w in data.search["warnings"] if "template writer" in w)
    assert "WHILEAI_SIMULATOR" in warning
    assert "http://127.0.0.1:8000/v1" in warning
    with pytest.raises(ConfigError) as no_judge:
        data.grade()
    for name in ("judge=", "WHILEAI_JUDGE", "http://127.0.0.1:8000/v1", "no hosted default"):
        assert name in str(no_judge.value)
