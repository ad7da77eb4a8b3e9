"""The one retry policy (``whileai.retry``) as the model client, the platform client and the
training sender use it, against a real loopback server that fails N times, then answers."""

from __future__ import annotations

from pathlib import Path

import pytest

from chat_server import Answer, completion, serve
from whileai.errors import BackendError
from whileai.platform.errors import PlatformError
from whileai.platform.http import Connection, call
from whileai.retry import Retry
from whileai.simulations.models import ChatClient, RetryPolicy, local_model
from whileai.simulations.training.record import RunFolder
from whileai.simulations.training.sender import RunSender
from whileai.simulations.training.transport import HttpRunsTransport

KEY = "sk-live-0123456789abcdef0123"  # echoed back by the failing server below
DOWN = Answer({"error": "unavailable", "message": f"busy; you sent Bearer {KEY}"}, status=503)


def _fails(n: int, then: Answer) -> list[Answer]:
    return [DOWN] * n + [then]


# -- the policy itself -------------------------------------------------------------------------


def test_both_bounds_hold_on_a_fake_clock() -> None:
    now = [0.0]
    waits: list[float] = []

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        now[0] += seconds

    budget = Retry(attempts=10, total_time=3.0, backoff=1.0, max_backoff=8.0).start(
        sleep=sleep, clock=lambda: now[0])
    tries = 0
    while True:
        tries = budget.tried()
        if not budget.again():
            break
    assert waits == [1.0, 2.0]  # a third wait (4 s) would end past the 3 s bound
    assert tries == 3
    budget = Retry(attempts=2, total_time=1e9, backoff=1.0).start(sleep=sleep,
                                                                 clock=lambda: now[0])
    budget.tried()
    assert budget.again()
    budget.tried()
    assert not budget.again()


def test_retry_after_wins_and_is_capped() -> None:
    policy = Retry(backoff=1.0, max_retry_after=5.0)
    assert policy.delay(0, retry_after="2") == 2.0
    assert policy.delay(0, retry_after="120") == 5.0
    assert policy.delay(2, retry_after="not a number") == 4.0


def test_jitter_comes_from_the_seed() -> None:
    policy = Retry(backoff=1.0, max_backoff=64.0, jitter=0.5, seed=7)

    def waits() -> list[float]:
        seen: list[float] = []
        budget = policy.start(sleep=seen.append)
        for _ in range(3):
            budget.tried()
            budget.again()
        return seen

    first = waits()
    assert first == waits()
    assert all(0.5 * 2**i <= w <= 2**i for i, w in enumerate(first))
    assert first != [1.0, 2.0, 4.0]


# -- the model client ------------------------------------------------------------------------

FAST = RetryPolicy(max_retries=3, backoff=0.001, max_backoff=0.01, timeout=5.0)


def _chat(url: str, policy: RetryPolicy = FAST) -> ChatClient:
    return ChatClient(local_model(url, model="m", api_key=KEY), policy=policy)


def test_model_client_fails_n_times_then_succeeds() -> None:
    with serve(_fails(3, Answer(completion("ok")))) as server, _chat(server.url) as client:
        assert client.chat([{"role": "user", "content": "hi"}]).content == "ok"
    assert len(server.requests) == 4
    assert client.stats()["retries"] == 3


def test_model_client_gives_up_after_the_bound_naming_the_url_not_the_key() -> None:
    with serve([DOWN]) as server, _chat(server.url) as client, \
            pytest.raises(BackendError, match="failed after 4 attempts") as info:
        client.chat([{"role": "user", "content": "hi"}])
    assert len(server.requests) == FAST.max_retries + 1
    assert server.url in str(info.value)
    assert KEY not in str(info.value)


def test_replies_without_a_message_share_the_one_budget() -> None:
    """Malformed replies and HTTP errors count in one budget: no retries around retries."""
    script = [DOWN, Answer({"object": "no choices"})] * 10
    with serve(script) as server, _chat(server.url) as client, \
            pytest.raises(BackendError, match="attempts"):
        client.chat([{"role": "user", "content": "hi"}])
    assert len(server.requests) == FAST.max_retries + 1


def test_model_client_time_bound_stops_before_the_attempts_run_out() -> None:
    policy = RetryPolicy(max_retries=50, backoff=0.05, max_backoff=0.05, timeout=5.0,
                         total_time=0.12)
    with serve([DOWN]) as server, _chat(server.url, policy) as client, \
            pytest.raises(BackendError, match="failed after"):
        client.chat([{"role": "user", "content": "hi"}])
    assert 2 <= len(server.requests) <= 4  # 0.12 s holds at most three 0.05 s waits


# -- the platform client ---------------------------------------------------------------------


def _conn(url: str) -> Connection:
    return Connection(base_url=url.removesuffix("/v1"), api_key=KEY)


def _listing() -> Answer:
    return Answer({"datasets": [], "count": 0})


def test_platform_call_fails_n_times_then_succeeds() -> None:
    policy = Retry(attempts=4, backoff=0.001)
    with serve(_fails(3, _listing())) as server:
        reply = call(_conn(server.url), "GET", "/v1/datasets", policy=policy)
    assert reply.json()["count"] == 0
    assert len(server.requests) == 4


def test_platform_call_gives_up_after_the_bound_naming_the_url_not_the_key() -> None:
    policy = Retry(attempts=3, backoff=0.001)
    with serve([DOWN]) as server, pytest.raises(PlatformError) as info:
        call(_conn(server.url), "GET", "/v1/datasets", policy=policy)
    assert len(server.requests) == 3
    message = str(info.value)
    assert server.url.removesuffix("/v1") + "/v1/datasets" in message
    assert "after 3 attempts" in message
    assert KEY not in message
    assert server.headers[0]["Authorization"] == f"Bearer {KEY}"


def test_platform_call_without_retry_tries_once() -> None:
    with serve(_fails(1, _listing())) as server, pytest.raises(PlatformError):
        call(_conn(server.url), "GET", "/v1/datasets", retry=False)
    assert len(server.requests) == 1


# -- the training sender ---------------------------------------------------------------------


def test_sender_is_the_only_layer_retrying(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The runs transport sends once; ``send_now`` retries under its own bound, so a dead
    server sees exactly ``LATE.attempts`` create calls, not that times the client's four."""
    folder = RunFolder.create(tmp_path, {"name": "r"})
    with serve([DOWN]) as server:
        transport = HttpRunsTransport(_conn(server.url))
        sender = RunSender(folder, transport, interval=60.0)
        sender._stop.set()  # keep the background thread out of the count
        sender._wake.set()
        sender._thread.join(timeout=5.0)
        before = len(server.requests)
        monkeypatch.setattr("whileai.simulations.training.sender.LATE",
                            Retry(attempts=3, backoff=0.001))
        assert not sender.send_now()
        assert len(server.requests) - before == 3
        assert sender.last_error is not None
        assert KEY not in sender.last_error


def test_sender_sends_once_the_server_is_back(tmp_path: Path) -> None:
    folder = RunFolder.create(tmp_path, {"name": "r"})
    with serve(_fails(2, Answer({"ok": True}))) as server:
        sender = RunSender(folder, HttpRunsTransport(_conn(server.url)), interval=0.01)
        sender.max_backoff = 0.01
        assert sender.flush(20.0)
        sender.close(5.0)
    assert sender.failures == 2
    assert server.paths[:3] == ["/v1/runs"] * 3  # two refused creates, one accepted
