"""Backend specs, role resolution and the chat client's failure handling, against a local server."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

import whileai
from chat_server import Answer, completion, serve
from whileai.errors import AuthError, BackendError, ConfigError, QuotaError
from whileai.simulations.generate.resolve import resolve_agent
from whileai.simulations.models import (
    ChatClient,
    ModelQuotaError,
    RetryPolicy,
    StoppedError,
    local_model,
    parse_spec,
    resolve_spec,
)

FAST = RetryPolicy(max_retries=3, backoff=0.001, max_backoff=0.01, timeout=2.0,
                   connect_timeout=1.0, max_retry_after=1.0)


@pytest.fixture(autouse=True)
def _no_model_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "VLLM_API_KEY", "OLLAMA_HOST",
                "WHILEAI_AGENT", "WHILEAI_SIMULATOR", "WHILEAI_JUDGE", "ZEROPROOF_AGENT",
                "ZEROPROOF_SIMULATOR", "ZEROPROOF_JUDGE"):
        monkeypatch.delenv(var, raising=False)


# -- specs ----------------------------------------------------------------------------------


def test_openai_spec_reads_key_and_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    spec = parse_spec("openai:gpt-4.1-mini")
    assert (spec.kind, spec.model, spec.base_url) == ("openai", "gpt-4.1-mini",
                                                      "https://api.openai.com/v1")
    assert spec.api_key == "sk-test"
    assert "sk-test" not in repr(spec)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:1234/v1/")
    assert parse_spec("openai:m").base_url == "http://127.0.0.1:1234/v1"


def test_openai_spec_without_key_names_the_variable() -> None:
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        parse_spec("openai:gpt-4.1-mini")


def test_vllm_ollama_and_bare_url_specs(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = parse_spec("vllm:Qwen/Qwen3-4B@https://host.example/v1")
    assert (spec.model, spec.base_url) == ("Qwen/Qwen3-4B", "https://host.example/v1")
    assert parse_spec("ollama:llama3.2").base_url == "http://localhost:11434/v1"
    monkeypatch.setenv("OLLAMA_HOST", "10.0.0.2:11434")
    assert parse_spec("ollama:llama3.2").base_url == "http://10.0.0.2:11434/v1"
    bare = parse_spec("http://127.0.0.1:8000/v1/")
    assert (bare.kind, bare.model, bare.base_url) == ("url", None, "http://127.0.0.1:8000/v1")
    loc = local_model("http://127.0.0.1:8000/v1", model="m", api_key="k")
    assert parse_spec(loc) is loc
    assert loc.api_key == "k"


@pytest.mark.parametrize("bad", ["anthropic:claude", "gpt-4", "vllm:model-without-url",
                                 "openai:", "ftp://x/v1", ""])
def test_malformed_specs_list_the_accepted_forms(bad: str) -> None:
    with pytest.raises(ConfigError, match=r"Accepted forms|OPENAI_API_KEY") as info:
        parse_spec(bad)
    assert "vllm:<model>@<url>" in str(info.value) or "OPENAI_API_KEY" in str(info.value)


def test_resolution_order_keyword_context_configure_env(monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_spec("judge") is None
    monkeypatch.setenv("WHILEAI_JUDGE", "ollama:from-env")
    assert resolve_spec("judge").model == "from-env"  # type: ignore[union-attr]
    try:
        whileai.configure(judge="ollama:from-configure", writer="ollama:w")
        assert resolve_spec("judge").model == "from-configure"  # type: ignore[union-attr]
        assert resolve_spec("simulator").model == "w"  # type: ignore[union-attr]
        with whileai.context(judge="ollama:from-context"):
            assert resolve_spec("judge").model == "from-context"  # type: ignore[union-attr]
            assert resolve_spec("judge", "ollama:kw").model == "kw"  # type: ignore[union-attr]
            assert resolve_spec("judge", False) is None
        assert resolve_spec("judge").model == "from-configure"  # type: ignore[union-attr]
    finally:
        whileai.configure(judge=None, simulator=None)
    assert resolve_spec("judge").model == "from-env"  # type: ignore[union-attr]


def test_bad_configured_spec_says_where_it_came_from(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WHILEAI_AGENT", "nonsense:x")
    with pytest.raises(ConfigError, match=r"WHILEAI_AGENT.*unknown backend"):
        resolve_agent()
    with pytest.raises(TypeError, match="valid: agent, judge"):
        whileai.configure(model="x")


# -- client ---------------------------------------------------------------------------------


def _client(url: str, **kw: object) -> ChatClient:
    return ChatClient(local_model(url, model="m"), policy=FAST, **kw)  # type: ignore[arg-type]


def test_unreachable_host_fails_fast_with_the_url() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    with _client(url) as client, pytest.raises(BackendError, match=f"127.0.0.1:{port}") as info:
        client.chat([{"role": "user", "content": "hi"}])
    assert client.stats().get("retries", 0) == 0
    assert "cannot reach" in str(info.value)


def test_5xx_and_malformed_json_are_retried_then_succeed() -> None:
    script = [Answer({"error": "boom"}, status=500), Answer("{not json"),
              Answer({"object": "no choices"}), completion("ok")]
    with serve(script) as server, _client(server.url) as client:
        reply = client.chat([{"role": "user", "content": "hi"}])
    assert reply.content == "ok"
    stats = client.stats()
    assert stats["retries"] >= 2
    assert stats["malformed"] == 2
    assert len(server.requests) == 4


def test_5xx_forever_gives_up_with_status_and_url() -> None:
    with serve([Answer({"error": "down"}, status=503)]) as server, _client(server.url) as c, \
            pytest.raises(BackendError, match=r"HTTP 503.*") as info:
        c.chat([{"role": "user", "content": "hi"}])
    assert server.url in str(info.value)
    assert len(server.requests) == FAST.max_retries + 1


def test_429_honours_retry_after_then_succeeds() -> None:
    script = [Answer({"error": "slow down"}, status=429, headers={"Retry-After": "0.01"}),
              completion("fine")]
    with serve(script) as server, _client(server.url) as client:
        assert client.chat([{"role": "user", "content": "x"}]).content == "fine"
    assert client.stats()["rate_limited"] == 1


@pytest.mark.parametrize("answer", [
    Answer({"error": {"code": "insufficient_quota"}}, status=429),
    Answer({"error": "later"}, status=429, headers={"Retry-After": "3600"}),
])
def test_spent_quota_raises_with_the_role(answer: Answer) -> None:
    with serve([answer]) as server, \
            ChatClient(local_model(server.url, model="m"), role="writer", policy=FAST) as client, \
            pytest.raises(QuotaError) as info:
        client.chat([{"role": "user", "content": "x"}])
    assert isinstance(info.value, ModelQuotaError)
    assert info.value.stopped_because == "writer_quota_exceeded"
    assert len(server.requests) == 1


def test_401_stops_at_once_naming_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    with serve([Answer({"error": "bad key"}, status=401)]) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong")
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        with ChatClient(parse_spec("openai:m"), policy=FAST) as client, \
                pytest.raises(AuthError, match="OPENAI_API_KEY"):
            client.chat([{"role": "user", "content": "x"}])
        assert len(server.requests) == 1
        assert server.headers[0]["Authorization"] == "Bearer sk-wrong"


def test_context_length_error_shrinks_max_tokens() -> None:
    err = {"error": {"message": "This model's maximum context length is 4096 tokens. However, "
                                "you requested 5000 tokens (3500 in the messages, 1500 in the "
                                "completion).", "code": "context_length_exceeded"}}
    with serve([Answer(err, status=400), completion("short")]) as server, \
            _client(server.url) as client:
        assert client.chat([{"role": "user", "content": "x"}], max_tokens=1500).content == "short"
    first, second = server.chat_bodies()
    assert first["max_tokens"] == 1500
    assert second["max_tokens"] == 4096 - 3500 - 8
    assert client.stats()["shrunk"] == 1


def test_slow_reply_times_out_and_is_retried() -> None:
    policy = RetryPolicy(max_retries=2, backoff=0.001, timeout=0.2, connect_timeout=1.0)
    script = [Answer(completion("late"), delay=1.0), completion("on time")]
    with serve(script) as server, \
            ChatClient(local_model(server.url, model="m"), policy=policy) as client:
        assert client.chat([{"role": "user", "content": "x"}]).content == "on time"
    assert client.stats()["retries"] == 1


def test_stop_ends_backoff_at_once() -> None:
    policy = RetryPolicy(max_retries=5, backoff=30.0, max_backoff=30.0, timeout=2.0)
    with serve([Answer({"error": "x"}, status=500)]) as server, \
            ChatClient(local_model(server.url, model="m"), policy=policy) as client:
        client.stop()
        with pytest.raises(StoppedError):
            client.chat([{"role": "user", "content": "x"}])


def test_bare_url_asks_the_server_for_its_model() -> None:
    def handler(path: str, body: dict[str, object], i: int) -> Answer:
        if path.endswith("/models"):
            return Answer({"object": "list", "data": [{"id": "served-model"}]})
        return Answer(completion("hi"))

    with serve(handler) as server, ChatClient(parse_spec(server.url), policy=FAST) as client:
        client.chat([{"role": "user", "content": "x"}])
        client.chat([{"role": "user", "content": "y"}])
    assert [b["model"] for b in server.chat_bodies()] == ["served-model", "served-model"]
    assert server.paths.count("/v1/models") == 1


def test_timeout_and_retries_from_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WHILEAI_MODEL_TIMEOUT", "7.5")
    monkeypatch.setenv("WHILEAI_MODEL_RETRIES", "1")
    with ChatClient(local_model("http://127.0.0.1:9/v1", model="m")) as client:
        assert (client.policy.timeout, client.policy.max_retries) == (7.5, 1)
    monkeypatch.setenv("WHILEAI_MODEL_RETRIES", "many")
    with pytest.raises(ConfigError, match="WHILEAI_MODEL_RETRIES"):
        RetryPolicy.from_settings()


# -- the environment, read once per session ---------------------------------------------------


def _proxy_env(monkeypatch: pytest.MonkeyPatch, proxy: str) -> None:
    for var in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "HTTPS_PROXY", "https_proxy"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HTTP_PROXY", proxy)
    monkeypatch.setenv("http_proxy", proxy)


def test_proxy_from_the_environment_carries_every_call(monkeypatch: pytest.MonkeyPatch) -> None:
    # the "proxy" is the chat server: a call reaches it with the absolute URL of the target
    with serve([completion("one"), completion("two")]) as proxy:
        _proxy_env(monkeypatch, proxy.url.removesuffix("/v1"))
        client = ChatClient(local_model("http://models.invalid/v1", model="m"), policy=FAST)
        with client:
            texts = [client.chat([{"role": "user", "content": "hi"}]).content for _ in range(2)]
        assert texts == ["one", "two"]
        assert proxy.paths == ["http://models.invalid/v1/chat/completions"] * 2


def test_netrc_login_is_used_without_a_key_and_the_key_wins_over_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    netrc = tmp_path / "netrc"
    netrc.write_text("machine 127.0.0.1 login reader password s3cret\n")
    netrc.chmod(0o600)
    monkeypatch.setenv("NETRC", str(netrc))
    with serve([completion("ok")]) as server:
        for key in (None, "sk-local"):
            with ChatClient(local_model(server.url, model="m", api_key=key), policy=FAST) as c:
                c.chat([{"role": "user", "content": "hi"}])
        sent = [h.get("Authorization") for h in server.headers]
    assert sent == ["Basic cmVhZGVyOnMzY3JldA==", "Bearer sk-local"]
