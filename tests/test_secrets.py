"""Replies cut mid-body are retried; credentials never reach an error, a report or a row."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

import whileai.simulations as zps
from _tools import TOOLS
from chat_server import Answer, completion, serve
from whileai.errors import AgentFailedWarning, AuthError, BackendError
from whileai.rows.outbound import export_row
from whileai.secrets import configured_secrets, mask_secrets, mask_value
from whileai.simulations.judge.llm_judge import grade
from whileai.simulations.models import ChatClient, RetryPolicy
from whileai.simulations.models.spec import local_model

FAST = RetryPolicy(max_retries=3, backoff=0.001, max_backoff=0.01, timeout=5.0)
KEY = "sk-test-4f9c2a7e1b8d3f6a0c5e9b2d"  # what the tests configure and the servers echo
PLAIN_KEY = "plain-local-token-77421"  # a configured key with no recognisable shape
POLICY = "Help customers with their orders."


@pytest.fixture(autouse=True)
def _env(no_model_roles: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WHILEAI_MODEL_RETRIES", "4")


@pytest.mark.parametrize(
    ("text", "leaked"),
    [
        ("Authorization: Bearer abc.DEF-123_xyz", "abc.DEF-123_xyz"),
        (f"invalid key {KEY}", KEY),
        ("aws AKIAIOSFODNN7EXAMPLE here", "AKIAIOSFODNN7EXAMPLE"),
        ('{"api_key": "q8w7e6r5t4y3"}', "q8w7e6r5t4y3"),
        ("token=ghp_abcdefghijklmnopqrstuvwxyz0123", "abcdefghijklmnopqrstuvwxyz0123"),
        ("hf_ABCDEFGHIJKLMNOPQRSTUVWX in the url", "ABCDEFGHIJKLMNOPQRSTUVWX"),
    ],
)
def test_mask_secrets_masks_credential_shapes(text: str, leaked: str) -> None:
    masked = mask_secrets(text)
    assert leaked not in masked
    assert "***" in masked


def test_mask_secrets_masks_configured_keys_and_leaves_prose(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", PLAIN_KEY)
    assert PLAIN_KEY in configured_secrets()
    assert mask_secrets(f"the server said {PLAIN_KEY}!") == "the server said ***!"
    for prose in ("Order 4412 shipped; ask-me-later", "bearer bonds and basic verification",
                  "max_tokens: 1024 and the token expiration policy", "task-1234567890"):
        assert mask_secrets(prose) == prose
    assert mask_secrets("Authorization: Basic dXNlcjpwYXNzd29yZA==") == "Authorization: Basic ***"
    assert mask_secrets("x", keys=["short"]) == "x"
    nested = mask_value({"a": [{"b": f"Bearer {PLAIN_KEY}"}], "n": 3, "f": None})
    assert nested == {"a": [{"b": "Bearer ***"}], "n": 3, "f": None}


def test_errors_mask_what_they_are_given() -> None:
    assert KEY not in str(BackendError(f"server said: {KEY}"))
    assert KEY not in str(AuthError(f"HTTP 401: Bearer {KEY}"))


def _agent_backend(cut_every: int) -> Any:
    """A writer plus agent that cuts every ``cut_every``-th reply mid-body, alternating ways."""
    lock = threading.Lock()
    seen = [0]

    def handler(path: str, body: dict[str, Any], i: int) -> Answer:
        with lock:
            seen[0] += 1
            n = seen[0]
        cut = ("length", "chunked")[(n // cut_every) % 2] if n % cut_every == 0 else ""
        messages = body["messages"]
        if "never the assistant" in messages[0]["content"]:
            if "next message" in messages[-1]["content"]:
                return Answer(completion('{"done": true}'), cut=cut)
            return Answer(completion(json.dumps({"message": f"Where is order {4400 + n}?"})),
                          cut=cut)
        if messages[-1]["role"] == "user":
            return Answer(completion(None, tool_calls=[("get_order", {"order_id": "4412"})]),
                          cut=cut)
        return Answer(completion("Order 4412: see the status above."), cut=cut)

    return handler


@pytest.mark.parametrize("cut", ["length", "chunked"])
def test_a_reply_cut_mid_body_is_retried(cut: str) -> None:
    script = [Answer(completion("half"), cut=cut), Answer(completion("whole"))]
    with serve(script) as server:
        client = ChatClient(local_model(server.url, model="m"), policy=FAST)
        reply = client.chat([{"role": "user", "content": "hi"}])
        stats = client.stats()
        client.close()
    assert reply.content == "whole"
    assert stats["cut_replies"] == 1


def test_a_reply_always_cut_ends_in_a_backend_error() -> None:
    with serve([Answer(completion("half"), cut="length")]) as server:
        client = ChatClient(local_model(server.url, model="m"), policy=FAST)
        with pytest.raises(BackendError, match="cut mid-body"):
            client.chat([{"role": "user", "content": "hi"}])
        client.close()


def test_every_rollout_completes_when_every_third_reply_is_cut(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    with serve(_agent_backend(3)) as server:
        data = zps.simulate(
            agent=f"vllm:policy@{server.url}", simulator=f"vllm:writer@{server.url}",
            tools=TOOLS, system_prompt=POLICY, budget=8, output=str(out), progress=False,
            advanced={"concurrency": 4},
        )
    assert len(data.trajectories) == 8
    assert "agent_errors" not in data.search
    assert len(out.read_text().splitlines()) == 8


def _echo_auth(status: int) -> Any:
    def handler(path: str, body: dict[str, Any], i: int) -> Answer:
        return Answer(f'{{"error": "bad credentials: Authorization: Bearer {KEY} ({PLAIN_KEY})"}}',
                      status=status)

    return handler


@pytest.mark.parametrize("status", [401, 500, 404])
def test_an_echoed_key_never_reaches_the_error(status: int) -> None:
    with serve(_echo_auth(status)) as server:
        client = ChatClient(local_model(server.url, model="m", api_key=PLAIN_KEY), policy=FAST)
        with pytest.raises((AuthError, BackendError)) as caught:
            client.chat([{"role": "user", "content": "hi"}])
        client.close()
    text = str(caught.value)
    assert "bad credentials" in text  # the server's words are kept
    assert KEY not in text
    assert PLAIN_KEY not in text


def test_an_echoed_key_never_reaches_the_run_report(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WHILEAI_MODEL_RETRIES", "0")
    with serve(_echo_auth(500)) as server, pytest.warns(AgentFailedWarning) as warned:
        data = zps.simulate(
            agent=zps.local_model(server.url, model="p", api_key=PLAIN_KEY), tools=TOOLS,
            system_prompt=POLICY, budget=2, progress=False,
        )
    said = " ".join(str(w.message) for w in warned)
    assert KEY not in said
    assert PLAIN_KEY not in said
    assert data.search["agent_errors"] >= 1
    assert "bad credentials" in data.search["first_agent_error"]
    blob = json.dumps(data.search, default=str)
    assert KEY not in blob
    assert PLAIN_KEY not in blob


def test_an_echoed_key_never_reaches_judged_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", PLAIN_KEY)  # configured, so masked whatever its shape
    rows = [{"prompt": "Where is order 1?", "final_text": "It shipped.", "steps": []}]
    with serve(_echo_auth(500)) as server:
        report = grade(rows, judge=zps.local_model(server.url, model="j", api_key=PLAIN_KEY),
                       rubric="The agent answers.", policy=FAST)
    assert rows[0]["reward"] is None
    assert "bad credentials" in rows[0]["reason"]
    blob = json.dumps(rows) + json.dumps(report, default=str)
    assert KEY not in blob
    assert PLAIN_KEY not in blob


def test_rows_leave_the_run_masked(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", PLAIN_KEY)
    row = {"prompt": "hi", "final_text": f"use Bearer {KEY} or {PLAIN_KEY}",
           "steps": [{"tool": "t", "arguments": {"k": KEY}, "result": {"ok": PLAIN_KEY}}]}
    data = zps.simulate(lambda m: {"steps": [], "final_text": f"key {KEY}"}, tools=TOOLS,
                        system_prompt=POLICY, budget=2, output=str(tmp_path / "r.jsonl"),
                        progress=False)
    written = (tmp_path / "r.jsonl").read_text()
    assert len(data.rows) == 2
    for blob in (json.dumps(export_row(row)), written, json.dumps(data.rows)):
        assert KEY not in blob
        assert PLAIN_KEY not in blob


def test_secrets_doctests() -> None:
    import doctest

    import whileai.secrets

    assert doctest.testmod(whileai.secrets).failed == 0
