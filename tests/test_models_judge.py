"""LLM judges (grade, llm_grade, write_rubrics, rubric_judge) against a scripted local server."""

from __future__ import annotations

import io
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

import whileai.simulations as zps
from chat_server import Answer, completion, serve
from whileai.errors import ConfigError
from whileai.simulations.judge.judging import run_judge
from whileai.simulations.judge.llm_judge import grade, llm_grade_rows
from whileai.simulations.judge.llm_rubrics import rubric_judge, write_rubrics
from whileai.simulations.models import ModelQuotaError, RetryPolicy

FAST = RetryPolicy(max_retries=1, backoff=0.001, max_backoff=0.01, timeout=5.0)


@pytest.fixture(autouse=True)
def _no_judge_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("WHILEAI_JUDGE", "ZEROPROOF_JUDGE", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)


def _rows() -> list[dict[str, Any]]:
    return [
        {"prompt": "Where is order 4412?", "final_text": "Order 4412 shipped.",
         "steps": [{"tool": "get_order", "arguments": {"order_id": "4412"},
                    "result": {"status": "shipped"}}],
         "model_version": "policy-7b", "privileged": {"reference": "SECRET-REF"}},
        {"prompt": "Cancel order 9", "final_text": "Done!", "steps": [],
         "model_version": "policy-7b", "privileged": {"reference": "SECRET-REF"}},
    ]


def _verdicts(path: str, body: dict[str, Any], i: int) -> Answer:
    text = body["messages"][-1]["content"]
    passed = "shipped" in text.split("Conversation:")[-1]
    return Answer(completion(json.dumps({"reward": int(passed), "reason": "checked"}),
                             model="judge-phi"))


def test_grade_with_a_rubric_writes_reward_and_provenance_in_place() -> None:
    rows = _rows()
    with serve(_verdicts) as server:
        report = grade(rows, judge=f"vllm:judge-phi@{server.url}",
                       rubric="The agent looks the order up before answering.", policy=FAST)
        bodies = server.chat_bodies()
    assert [r["reward"] for r in rows] == [1.0, 0.0]
    assert all(r["judge_status"] == "ok" for r in rows)
    meta = rows[0]["judge_meta"]
    assert meta["model"] == "judge-phi"
    assert meta["temperature"] == 0.0
    assert meta["version"] == f"judge-phi@{meta['prompt_hash']}"
    assert rows[0]["lineage"]["source"] == "grade"
    assert report["pass_rate"] == 0.5
    assert report["conduct_floor_only"] is False
    assert report["self_judged"] is False
    assert all("looks the order up" in b["messages"][-1]["content"] for b in bodies)
    assert all("SECRET-REF" not in json.dumps(b) for b in bodies)
    assert {b["temperature"] for b in bodies} == {0.0}


def test_rubric_edit_is_a_new_judge_version_and_privileged_only_on_request() -> None:
    a, b = _rows(), _rows()
    with serve(_verdicts) as server:
        grade(a, judge=f"vllm:judge-phi@{server.url}", rubric="Rule one.", policy=FAST)
        grade(b, judge=f"vllm:judge-phi@{server.url}", rubric="Rule two.", use_privileged=True,
              policy=FAST)
        bodies = server.chat_bodies()
    assert a[0]["judge_meta"]["version"] != b[0]["judge_meta"]["version"]
    assert "SECRET-REF" in json.dumps(bodies[-1])


def test_no_rubric_grades_the_conduct_floor_and_says_so(tmp_path: Path) -> None:
    rows = _rows()
    with serve(_verdicts) as server:
        report = grade(rows, judge=f"vllm:judge-phi@{server.url}", policy=FAST)
        body = server.chat_bodies()[0]
    assert report["conduct_floor_only"] is True
    assert any("conduct floor" in w for w in report["warnings"])
    assert "Nothing invented" in body["messages"][-1]["content"]
    # a spec folder's rubric.md is read when present
    (tmp_path / "rubric.md").write_text("Always quote the order id.\n", encoding="utf-8")
    with serve(_verdicts) as server:
        report = grade(_rows(), judge=f"vllm:judge-phi@{server.url}", spec=tmp_path,
                       policy=FAST)
        assert "quote the order id" in server.chat_bodies()[0]["messages"][-1]["content"]
    assert report["conduct_floor_only"] is False


def test_self_judging_is_flagged() -> None:
    rows = _rows()
    with serve(_verdicts) as server:
        report = grade(rows, judge=f"vllm:org/policy-7b@{server.url}", rubric="x", policy=FAST)
    assert report["self_judged"] is True
    assert any("self_judged" in w for w in report["warnings"])


@pytest.mark.parametrize("as_object", [False, True])
def test_self_judging_is_flagged_for_a_bare_url_judge(as_object: bool) -> None:
    def same_model(path: str, body: dict[str, Any], i: int) -> Answer:
        if path.endswith("/models"):
            return Answer({"object": "list", "data": [{"id": "org/policy-7b"}]})
        return Answer(completion('{"reward": 1, "reason": "ok"}', model="org/policy-7b"))

    rows = _rows()
    with serve(same_model) as server:
        judge = zps.local_model(server.url) if as_object else server.url
        report = grade(rows, judge=judge, rubric="x", policy=FAST)
        assert server.paths.count("/v1/models") == 1
    assert [r["reward"] for r in rows] == [1.0, 1.0]
    assert {r["judge_meta"]["model"] for r in rows} == {"org/policy-7b"}
    assert report["self_judged"] is True
    assert any("self_judged" in w for w in report["warnings"])


def test_grade_takes_a_local_model_object_as_the_judge() -> None:
    rows = _rows()
    with serve(_verdicts) as server:
        report = grade(rows, judge=zps.local_model(server.url, model="judge-phi", api_key="k1"),
                       rubric="x", policy=FAST)
        headers = server.headers
    assert [r["reward"] for r in rows] == [1.0, 0.0]
    assert rows[0]["judge_name"] == "llm:judge-phi"
    assert report["judge"] == "judge-phi"
    assert report["self_judged"] is False
    assert {h.get("Authorization") for h in headers} == {"Bearer k1"}


def test_spent_judge_quota_stops_grading_and_leaves_rows_alone() -> None:
    quota = Answer({"error": {"code": "insufficient_quota", "message": "quota"}}, status=429)
    rows = [*_rows(), *_rows(), *_rows()]
    before = json.loads(json.dumps(rows))
    with serve([quota]) as server:
        with pytest.raises(ModelQuotaError, match="out of quota") as info:
            grade(rows, judge=f"vllm:j@{server.url}", rubric="x", workers=4, policy=FAST)
        calls = len(server.chat_bodies())
    assert info.value.role == "judge"
    assert calls <= 4  # the first refusal stops the client: no retry storm over the rows
    assert rows == before


def test_malformed_verdicts_are_retried_then_recorded_as_errors() -> None:
    script = [Answer(completion("I think it passes")),
              Answer(completion('{"reward": 1, "reason": "ok"}')),
              Answer(completion("maybe?"))]
    rows = _rows()
    with serve(script) as server:
        report = grade(rows, judge=f"vllm:j@{server.url}", rubric="x", workers=1, policy=FAST)
    assert rows[0]["reward"] == 1.0
    assert rows[1]["reward"] is None
    assert rows[1]["judge_status"] == "error"
    assert report["statuses"] == {"ok": 1, "error": 1}
    assert any("1 of 2 rows" in w for w in report["warnings"])


def test_grade_needs_a_judge_and_rejects_unknown_keywords() -> None:
    with pytest.raises(ConfigError, match="WHILEAI_JUDGE"):
        grade(_rows())
    with pytest.raises(TypeError, match="valid keywords: rows, judge, rubric"):
        grade(_rows(), judge="ollama:x", rubrik="typo")


def test_grade_with_a_callable_returns_scored_copies() -> None:
    rows = _rows()
    scored = grade(rows, judge=lambda row: {"reward": 1, "reason": "fine"})
    assert [r["reward"] for r in scored.rows] == [1.0, 1.0]
    assert "reward" not in rows[0]


def test_llm_grade_adds_llm_reward_without_touching_reward() -> None:
    rows = _rows()
    rows[0]["reward"] = 0.0
    with serve(_verdicts) as server:
        report = llm_grade_rows(rows, judge=f"vllm:j@{server.url}", policy=FAST)
    assert [r["llm_reward"] for r in rows] == [1.0, 0.0]
    assert rows[0]["reward"] == 0.0
    assert report["failed"] == 0


def test_write_rubrics_then_rubric_judge_gives_markers_per_criterion() -> None:
    def handler(path: str, body: dict[str, Any], i: int) -> Answer:
        system = body["messages"][0]["content"]
        if "write grading rubrics" in system:
            prompt = body["messages"][-1]["content"]
            if "Cancel" in prompt:
                return Answer(completion("no idea"))  # off-format: counted as failed
            return Answer(completion(json.dumps(
                {"criteria": ["Calls get_order with 4412", "States the shipping status"]})))
        verdicts = [{"item": 1, "met": True, "reason": "called"},
                    {"item": 2, "met": False, "reason": "no status"}]
        return Answer(completion(json.dumps({"verdicts": verdicts})))

    rows = [*_rows(), dict(_rows()[0])]  # two rollouts of the same task share one rubric
    with serve(handler) as server:
        spec = f"vllm:j@{server.url}"
        written, report = write_rubrics(rows, domain="orders", model=spec, policy=FAST)
        judge = rubric_judge(spec, policy=FAST)
        try:
            scored = run_judge(written, judge)
        finally:
            judge.close()
    assert report["tasks"] == 2
    assert report["written"] == 1
    assert report["failed"] == 1
    assert "privileged" not in rows[1] or "rubric" not in rows[1]["privileged"]
    assert written[0]["privileged"]["rubric"] == written[2]["privileged"]["rubric"]
    first = scored.rows[0]
    assert first["reward"] == 0.5
    assert first["markers"] == {"rubric:calls_get_order_with_4412": 1.0,
                                "rubric:states_the_shipping_status": 0.0}
    assert scored.rows[1]["judge_status"] == "missing_reward"  # no rubric was written for it


def test_refused_key_stops_grading_at_once_and_leaves_rows_alone() -> None:
    from whileai.errors import AuthError

    rows = [*_rows(), *_rows(), *_rows()]
    with serve([Answer({"error": "invalid key"}, status=401)]) as server:
        with pytest.raises(AuthError, match="refused the credentials"):
            grade(rows, judge=f"vllm:j@{server.url}", rubric="x", workers=1, policy=FAST)
        calls = len(server.chat_bodies())
    assert calls == 1
    assert all("reward" not in r for r in rows)


def test_transcript_of_a_messages_only_row() -> None:
    from whileai.simulations.judge.llm_judge import render_transcript

    row = {"messages": [
        {"role": "system", "content": "secret policy"},
        {"role": "user", "content": "where is 7?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": "get_order", "arguments": '{"order_id": "7"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": '{"status": "lost"}'},
        {"role": "assistant", "content": "It is lost."}]}
    text = render_transcript(row)
    assert text.splitlines() == ["USER: where is 7?", 'TOOL CALL get_order({"order_id": "7"})',
                                 'TOOL RESULT: {"status": "lost"}', "ASSISTANT: It is lost."]
    assert "secret policy" not in text


def test_fixed_rubric_judge_and_kept_rubrics() -> None:
    verdicts = {"verdicts": [{"item": 2, "met": True}, {"item": 1, "met": True}]}
    rows = _rows()[:1]
    rows[0]["privileged"] = {"rubric": ["Already here"]}
    with serve([completion(json.dumps(verdicts))]) as server:
        spec = f"vllm:j@{server.url}"
        kept, report = write_rubrics(rows, model=spec, policy=FAST)
        judge = rubric_judge(spec, rubric="- Looks it up\n- Quotes the id", policy=FAST)
        try:
            scored = run_judge(rows, judge)
        finally:
            judge.close()
        sent = server.chat_bodies()
    assert report["kept"] == 1
    assert kept[0]["privileged"]["rubric"] == ["Already here"]
    assert len(sent) == 1  # the kept rubric cost no call
    assert "1. Looks it up\n2. Quotes the id" in sent[0]["messages"][-1]["content"]
    assert scored.rows[0]["reward"] == 1.0
    assert set(scored.rows[0]["markers"]) == {"rubric:looks_it_up", "rubric:quotes_the_id"}


class _Stream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


@pytest.mark.parametrize(("tty", "progress"), [(True, True), (True, False), (False, True)])
def test_grade_shows_one_progress_line_only_on_a_terminal(
    monkeypatch: pytest.MonkeyPatch, tty: bool, progress: bool
) -> None:
    rows = [dict(r) for _ in range(12) for r in _rows()]
    stream = _Stream(tty)
    monkeypatch.setattr(sys, "stderr", stream)
    with serve(_verdicts) as server:
        report = grade(rows, judge=f"vllm:judge-phi@{server.url}", rubric="x", workers=4,
                       progress=progress, policy=FAST)
    assert report["graded"] == 24
    shown = stream.getvalue()
    if not (tty and progress):
        assert shown == ""
        return
    assert shown.count("\n") == 1  # one line, redrawn in place and ended once
    last = shown.rsplit("\r", 1)[-1]
    assert re.fullmatch(r"grade: 24 rows in \S+ \([\d,.]+ rows/s\) *\n", last), last  # summary
