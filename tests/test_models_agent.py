"""The model agent loop and the model writer, against a scripted chat server on 127.0.0.1."""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from _tools import GET_ORDER
from chat_server import Answer, completion, serve
from whileai.rows.outbound import conversation
from whileai.simulations.generate.model_agent import AgentSettings, ModelAgent
from whileai.simulations.generate.model_writer import ModelWriter, parse_writer_output
from whileai.simulations.generate.resolve import resolve_agent, resolve_writer
from whileai.simulations.models import (
    ChatClient,
    ModelQuotaError,
    RetryPolicy,
    local_model,
)

FAST = RetryPolicy(max_retries=2, backoff=0.001, max_backoff=0.01, timeout=5.0)
# Both forms the agent accepts: an OpenAI-style wrapped tool and a bare one.
TOOLS = [GET_ORDER, {"name": "cancel_order", "description": "Cancel an order", "parameters": {}}]


class FakeWorld:
    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self._lock = threading.Lock()

    def call(self, tool: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        with self._lock:
            self.calls.append((tool, dict(arguments or {})))
        return {"status": "shipped", "order_id": (arguments or {}).get("order_id")}


def _agent(url: str, **settings: Any) -> ModelAgent:
    client = ChatClient(local_model(url, model="policy-m"), policy=FAST)
    return ModelAgent(client, tools=TOOLS, system_prompt="You are a support agent.",
                      settings=AgentSettings(**settings))


def test_multi_turn_native_tool_use_and_wire_format() -> None:
    script = [
        completion("Let me check.", tool_calls=[("get_order", {"order_id": "4412"})],
                   usage=(20, 5), call_ids=["call_a"]),
        completion("<think>it shipped</think>Your order 4412 has shipped.", usage=(40, 9)),
    ]
    world = FakeWorld()
    with serve(script) as server:
        agent = _agent(server.url)
        try:
            row = agent.run({"prompt": "Where is order 4412?"}, world=world, seed=3)
        finally:
            agent.close()
    assert world.calls == [("get_order", {"order_id": "4412"})]
    assert row["final_text"] == "Your order 4412 has shipped."
    assert row["steps"][0] == {"role": "assistant", "content": "Let me check.", "turn": 0,
                               "input_tokens": 20, "output_tokens": 5}
    assert row["steps"][1]["turn"] == 0
    tool_step = row["steps"][1]
    assert (tool_step["tool"], tool_step["arguments"], tool_step["call_id"]) == (
        "get_order", {"order_id": "4412"}, "call_a")
    assert tool_step["result"]["status"] == "shipped"
    assert row["usage"] == {"input_tokens": 60, "output_tokens": 14}
    assert row["model_version"] == "test-model"
    assert row["sampling"]["seed"] == 3
    assert row["truncated"] is False
    first, second = server.chat_bodies()
    assert first["model"] == "policy-m"
    assert first["seed"] == 3
    assert [m["role"] for m in first["messages"]] == ["system", "user"]
    assert first["tools"][1] == {"type": "function", "function": TOOLS[1]}
    msgs = second["messages"]
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "tool"]
    call = msgs[2]["tool_calls"][0]
    assert call["type"] == "function"
    assert call["id"] == "call_a"
    assert isinstance(call["function"]["arguments"], str)
    assert json.loads(call["function"]["arguments"]) == {"order_id": "4412"}
    assert msgs[3]["tool_call_id"] == "call_a"
    assert json.loads(msgs[3]["content"])["status"] == "shipped"


def _rollout(script: list[dict[str, Any]]) -> dict[str, Any]:
    with serve(script) as server:
        agent = _agent(server.url)
        try:
            return agent.run({"prompt": "Check 1 and 2."}, world=FakeWorld(), seed=0)
        finally:
            agent.close()


def test_turn_tells_sequential_calls_from_parallel_ones() -> None:
    # no usage and no logprobs: the `turn` key is all that separates the replies
    one = ("get_order", {"order_id": "1"})
    two = ("get_order", {"order_id": "2"})
    sequential = _rollout([completion(None, tool_calls=[one], usage=None, call_ids=["a"]),
                           completion(None, tool_calls=[two], usage=None, call_ids=["b"]),
                           completion("Both shipped.", usage=None)])
    parallel = _rollout([completion("Checking both.", tool_calls=[one, two], usage=None,
                                    call_ids=["a", "b"]),
                         completion("Both shipped.", usage=None)])
    assert [s["turn"] for s in sequential["steps"]] == [0, 1]
    assert [s["turn"] for s in parallel["steps"]] == [0, 0, 0]
    seq = [m for m in conversation(sequential) if m["role"] == "assistant"]
    assert [[c["id"] for c in m.get("tool_calls", [])] for m in seq] == [["a"], ["b"], []]
    par = [m for m in conversation(parallel) if m["role"] == "assistant"]
    assert [[c["id"] for c in m.get("tool_calls", [])] for m in par] == [["a", "b"], []]
    assert par[0]["content"] == "Checking both."
    assert [m["role"] for m in conversation(parallel)] == [
        "user", "assistant", "tool", "tool", "assistant"]


def test_text_form_tool_call_is_parsed() -> None:
    text = 'Checking.<tool_call>{"name": "get_order", "arguments": {"order_id": "7"}}</tool_call>'
    script = [completion(text, usage=None), completion("Done.", usage=None)]
    world = FakeWorld()
    with serve(script) as server:
        agent = _agent(server.url)
        try:
            row = agent.run({"prompt": "order 7?"}, world=world, seed=0)
        finally:
            agent.close()
    assert world.calls == [("get_order", {"order_id": "7"})]
    assert row["steps"][0]["content"] == "Checking."
    assert row["steps"][1]["tool"] == "get_order"
    assert "usage" not in row  # the server reported none; nothing is invented
    second = server.chat_bodies()[1]["messages"]
    assert second[-1]["role"] == "tool"
    assert second[-1]["tool_call_id"] == second[-2]["tool_calls"][0]["id"]


def test_unknown_tool_and_non_json_arguments_are_answered_with_errors() -> None:
    script = [completion(None, tool_calls=[("delete_everything", {}),
                                           ("get_order", "{order_id: 4412")]),
              completion("Sorry.")]
    world = FakeWorld()
    with serve(script) as server:
        agent = _agent(server.url)
        try:
            row = agent.run({"prompt": "hi"}, world=world, seed=0)
        finally:
            agent.close()
    assert world.calls == []
    unknown, bad = row["steps"]
    assert "unknown tool" in unknown["error"]
    assert "get_order" in unknown["result"]["error"]
    assert "not valid JSON" in bad["error"]
    assert bad["raw_arguments"] == "{order_id: 4412"
    assert row["invalid_tool_calls"] == 2
    # the bad arguments go back to the model verbatim, as a string
    sent = server.chat_bodies()[1]["messages"][2]["tool_calls"][1]["function"]["arguments"]
    assert sent == "{order_id: 4412"


def test_model_that_never_calls_a_tool() -> None:
    with serve([completion("I cannot help with that.")]) as server:
        agent = _agent(server.url)
        try:
            row = agent.run({"prompt": "refund me"}, world=FakeWorld(), seed=0)
        finally:
            agent.close()
    assert row["steps"] == []
    assert row["final_text"] == "I cannot help with that."
    assert row["model_calls"] == 1


def test_truncated_reply_is_marked() -> None:
    with serve([completion("The answer is", finish_reason="length")]) as server:
        agent = _agent(server.url)
        try:
            row = agent.run({"prompt": "explain"}, world=FakeWorld(), seed=0)
        finally:
            agent.close()
    assert row["truncated"] is True
    assert row["finish_reason"] == "length"


def test_turn_cap_stops_a_model_that_calls_tools_forever() -> None:
    loop = completion(None, tool_calls=[("get_order", {"order_id": "1"})])
    with serve([loop]) as server:
        agent = _agent(server.url, max_turns=3)
        try:
            row = agent.run({"prompt": "x"}, world=FakeWorld(), seed=0)
        finally:
            agent.close()
    assert len(server.requests) == 3
    assert row["truncated"] is True
    assert row["finish_reason"] == "turn_cap"
    assert [s["tool"] for s in row["steps"]] == ["get_order"] * 3


@pytest.mark.parametrize("mode", [True, "tokens"])
def test_logprobs_are_recorded_per_turn_and_totalled(mode: bool | str) -> None:
    script = [completion("Looking.", tool_calls=[("get_order", {"order_id": "1"})],
                         logprobs=[-0.5, -0.25]),
              completion("Shipped.", logprobs=[-1.0, -0.5, -0.25])]
    with serve(script) as server:
        agent = _agent(server.url, logprobs=mode)
        try:
            row = agent.run({"prompt": "x"}, world=FakeWorld(), seed=0)
        finally:
            agent.close()
    assert server.chat_bodies()[0]["logprobs"] is True
    step = row["steps"][0]
    assert (step["logprob"], step["n_tokens"]) == (-0.75, 2)
    assert (row["logprob"], row["n_tokens"]) == (-2.5, 5)
    assert ("tokens" in step) == (mode == "tokens")
    if mode == "tokens":
        assert [t["logprob"] for t in row["logprob_tokens"]] == [-0.5, -0.25, -1.0, -0.5, -0.25]


def test_user_turns_come_from_the_writer_and_respect_the_cap() -> None:
    writer_calls = [0]

    def handler(path: str, body: dict[str, Any], i: int) -> Answer:
        system = body["messages"][0]["content"]
        if "never the assistant" in system:  # the writer's own prompt
            writer_calls[0] += 1
            if writer_calls[0] % 2 == 1:
                return Answer(completion("sure thing, here you go"))  # off-format: retried
            return Answer(completion('{"message": "And the other order?", "done": false}'))
        return Answer(completion(f"Reply {i}."))

    with serve(handler) as server:
        writer = ModelWriter(ChatClient(local_model(server.url, model="w"), role="writer",
                                        policy=FAST), tools=TOOLS, avg_turns=6, max_attempts=3)
        client = ChatClient(local_model(server.url, model="a"), policy=FAST)
        agent = ModelAgent(client, tools=TOOLS, settings=AgentSettings(avg_turns=6),
                           writer=writer)
        try:
            row = agent.run({"prompt": "Where is 4412?", "seed": 1}, world=FakeWorld(), seed=1)
        finally:
            agent.close()
            writer.close()
    users = [s for s in row["steps"] if s.get("role") == "user"]
    assert len(users) == 6 // 2 - 1  # the opener counts as the first of three
    assert all(u["content"] == "And the other order?" for u in users)
    assert writer.stats()["writer_retries"] >= 1
    writer_bodies = [b for b in server.chat_bodies() if b["model"] == "w"]
    assert all("You are a support agent" not in json.dumps(b) for b in writer_bodies)


def test_writer_junk_is_retried_counted_and_never_returned() -> None:
    junk = [Answer(completion("")), Answer(completion("not json at all")),
            Answer(completion('{"message": ""}')), Answer(completion('{"message": "ok"}'))]
    with serve(junk) as server:
        writer = resolve_writer(server.url, tools=TOOLS, max_attempts=3, concurrency=1,
                                policy=FAST)
        assert writer is not None
        try:
            asks = writer.write([{"prompt": "cancel my order", "dimensions": {"tone": "angry"}},
                                 {"prompt": "where is it"}])
        finally:
            writer.close()
    assert asks == ["", "ok"]
    assert writer.stats() == {"writer_calls": 4, "writer_retries": 3, "writer_rejected": 1,
                              "writer_fallbacks": 1}


def test_parse_writer_output_rejects_tool_calls_and_accepts_done() -> None:
    assert parse_writer_output('{"done": true}', allow_done=True) == (None, True)
    with pytest.raises(ValueError, match="tool call"):
        parse_writer_output('{"message": "<tool_call>{}</tool_call>"}', allow_done=False)


def test_32_concurrent_rollouts_lose_and_duplicate_nothing() -> None:
    def handler(path: str, body: dict[str, Any], i: int) -> Answer:
        if path.endswith("/models"):
            return Answer({"data": [{"id": "listed"}]})
        last = body["messages"][-1]
        if last["role"] == "user":
            return Answer(completion(None, tool_calls=[("get_order",
                                                        {"order_id": last["content"]})]))
        return Answer(completion("done " + json.loads(last["content"])["order_id"]))

    world = FakeWorld()
    with serve(handler) as server:
        agent = resolve_agent(server.url, tools=TOOLS, policy=FAST)
        assert agent is not None
        try:
            with ThreadPoolExecutor(max_workers=32) as pool:
                rows = list(pool.map(
                    lambda n: agent.run({"prompt": f"id-{n}"}, world=world, seed=n), range(96)))
        finally:
            agent.close()
    assert [r["final_text"] for r in rows] == [f"done id-{n}" for n in range(96)]
    assert sorted(a["order_id"] for _t, a in world.calls) == sorted(f"id-{n}" for n in range(96))
    bodies = server.chat_bodies()
    assert len(bodies) == 192
    assert {b["model"] for b in bodies} == {"listed"}
    assert server.paths.count("/v1/models") == 1


def test_writer_is_told_the_world_s_real_ids_not_the_nouns() -> None:
    draft = {"prompt": "Where is my order?", "slots": {"order_id": "O-41553", "qty": 2},
             "nouns": {"order_id": "order"}, "dimensions": {"tone": "calm"}}
    with serve([completion('{"message": "Where is order O-41553?"}')]) as server:
        writer = ModelWriter(ChatClient(local_model(server.url, model="w"), role="writer",
                                        policy=FAST), tools=TOOLS)
        try:
            ask = writer.write_one(draft, seed=5)
        finally:
            writer.close()
        (body,) = server.chat_bodies()
    assert ask == "Where is order O-41553?"
    prompt = body["messages"][-1]["content"]
    facts = json.loads(prompt.split("Facts the person knows and may mention:\n")[1].split("\n")[0])
    assert facts == {"order_id (the order)": "O-41553", "qty": 2}
    assert '"order"' not in prompt  # the noun labels the id; it never stands in for it


def test_rollouts_cut_short_by_a_spent_quota_fail_with_the_quota_error() -> None:
    quota = Answer({"error": {"code": "insufficient_quota", "message": "quota"}}, status=429)

    def handler(path: str, body: dict[str, Any], i: int) -> Answer:
        if body["messages"][-1]["content"] == "waits":
            return Answer({"error": "busy"}, status=503)  # this rollout backs off and waits
        return quota

    patient = RetryPolicy(max_retries=3, backoff=30.0, max_backoff=30.0, timeout=5.0)
    outcome: list[BaseException] = []
    with serve(handler) as server:
        agent = ModelAgent(ChatClient(local_model(server.url, model="m"), policy=patient),
                           tools=TOOLS)

        def waiting() -> None:
            try:
                agent.run({"prompt": "waits"}, world=FakeWorld())
            except BaseException as exc:  # recorded for the assertion below
                outcome.append(exc)

        thread = threading.Thread(target=waiting)
        thread.start()
        while not server.chat_bodies():  # the waiting rollout has been answered 503
            threading.Event().wait(0.01)
        with pytest.raises(ModelQuotaError, match="out of quota"):
            agent.run({"prompt": "spends"}, world=FakeWorld())
        thread.join(timeout=10)
        agent.close()
    (cut,) = outcome
    assert isinstance(cut, ModelQuotaError)  # the reason, not a bare StoppedError
    assert cut.role == "agent"
    assert "out of quota" in str(cut)
