"""The HTTP edge: a chat-completions client over one connection pool, retries and clear errors.

Failure handling, in order of what the server says:

- connection refused / DNS failure before the host ever answered: fail at once
  (:class:`~whileai.errors.BackendError` naming the URL); after it has answered, retry.
- 500/502/503/504, read timeouts, malformed JSON bodies, replies without a usable message,
  replies cut mid-body (wrong ``Content-Length``, broken chunked encoding): retry with
  exponential backoff, then give up.
- 429: wait ``Retry-After`` (seconds or an HTTP date) and retry; a spent quota
  (``insufficient_quota``, a wait longer than the policy allows, or retries exhausted) raises
  :class:`ModelQuotaError` carrying the role, so the engine stops with
  ``<role>_quota_exceeded``.
- 401/403: :class:`~whileai.errors.AuthError` at once, naming the variable to set.
- 400 saying the context is too long: shrink ``max_tokens`` and retry.

All of these share one budget per call, from :mod:`whileai.retry` (the policy every HTTP caller
uses): at most ``max_retries + 1`` HTTP attempts and ``total_time`` seconds in all.
Every sleep waits on the client's stop event, so :meth:`ChatClient.stop` ends backoff at once;
each request carries a timeout, so nothing blocks longer than that. Server text quoted in an
error is masked (:func:`whileai.secrets.mask_secrets`, with the spec's own key), so a server that
echoes the ``Authorization`` header cannot leak the key into a message or a row.
"""

from __future__ import annotations

import json
import re
import threading
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

import urllib3.exceptions

from whileai.errors import AuthError, BackendError, ConfigError
from whileai.retry import RETRY_STATUSES, Attempts, retry_after_seconds
from whileai.secrets import mask_secrets
from whileai.simulations.models.gate import through_gate
from whileai.simulations.models.policy import ModelQuotaError, RetryPolicy, StoppedError
from whileai.simulations.models.reply import Reply, parse_reply
from whileai.simulations.models.session import CutReply, Endpoint
from whileai.simulations.models.spec import ModelSpec

__all__ = ["ChatClient", "ModelQuotaError", "ModelRole", "RetryPolicy", "StoppedError"]

_CONTEXT_ERROR = re.compile(
    r"context[ _-]length|maximum context|context window|too many tokens|max_tokens .*too large"
    r"|reduce the length|prompt is too long",
    re.IGNORECASE,
)
T = TypeVar("T")
_CTX_NUMBERS = re.compile(r"maximum context length is (\d+).*?(\d+) (?:tokens )?in the messages",
                          re.IGNORECASE | re.DOTALL)


def _quoted(text: str, spec: ModelSpec) -> str:
    """Server text fit to quote in a message: the start of it, with keys masked."""
    return mask_secrets(text[:300].strip(), keys=(spec.api_key,))


class ChatClient:
    """An OpenAI-compatible chat client for one endpoint and one role; safe to share by threads.

    >>> from whileai.simulations.models.spec import local_model
    >>> client = ChatClient(local_model("http://127.0.0.1:9/v1", model="m"), role="judge")
    >>> client.url("/chat/completions")
    'http://127.0.0.1:9/v1/chat/completions'
    >>> client.close()
    """

    def __init__(
        self,
        spec: ModelSpec,
        *,
        role: str = "agent",
        policy: RetryPolicy | None = None,
        stop: threading.Event | None = None,
    ) -> None:
        self.spec = spec
        self.role = role
        self.policy = policy or RetryPolicy.from_settings()
        self._stop = stop or threading.Event()
        self._lock = threading.Lock()
        self._model_lock = threading.Lock()
        self._edge: Endpoint | None = None
        self._reached = False
        self._model: str | None = spec.model
        self._counts: dict[str, int] = {}

    # -- plumbing ---------------------------------------------------------------------------
    def url(self, path: str) -> str:
        """The full URL for an API path."""
        return self.spec.base_url + path

    def _endpoint(self) -> Endpoint:
        edge = self._edge
        if edge is None:
            with self._lock:
                if self._edge is None:
                    self._edge = Endpoint(self.spec.base_url, self.spec.api_key,
                                          connect_timeout=self.policy.connect_timeout,
                                          read_timeout=self.policy.timeout)
                    weakref.finalize(self, self._edge.close)
                edge = self._edge
        return edge

    def _count(self, key: str, n: int = 1) -> None:
        with self._lock:
            self._counts[key] = self._counts.get(key, 0) + n

    def stats(self) -> dict[str, int]:
        """Counters: ``calls``, ``retries``, ``rate_limited``, ``malformed``, ``shrunk``, ..."""
        with self._lock:
            return dict(self._counts)

    def stop(self) -> None:
        """Wake and end every call waiting to retry (they raise :class:`StoppedError`)."""
        self._stop.set()

    def close(self) -> None:
        """Close the kept-alive connections (idempotent)."""
        with self._lock:
            edge, self._edge = self._edge, None
        if edge is not None:
            edge.close()

    def __enter__(self) -> ChatClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _sleep(self, seconds: float) -> None:
        if self._stop.wait(max(0.0, seconds)):
            raise StoppedError(f"{self.role} call to {self.url('')} stopped: the run ended")

    def _auth_error(self, status: int, url: str, detail: str) -> AuthError:
        if self.spec.api_key_var:
            fix = f"set {self.spec.api_key_var} to a valid key"
        else:
            fix = "pass zps.local_model(url, model=..., api_key=...) with a valid key"
        return AuthError(f"{self.role} model at {url} refused the credentials (HTTP {status}: "
                         f"{detail}); {fix}.")

    # -- requests -----------------------------------------------------------------------------
    def request(self, method: str, path: str, payload: dict[str, Any] | None = None,
                *, parse: Callable[[Any], T] | None = None) -> Any:
        """Send one request under the retry policy; return the decoded JSON body, or
        ``parse(body)`` when given (a ``ValueError`` from it is a malformed reply, retried
        within the same budget: a call makes at most ``max_retries + 1`` HTTP attempts).

        Raises:
            BackendError: unreachable host, retries exhausted, or an unrecoverable 4xx.
            AuthError: HTTP 401/403.
            ModelQuotaError: HTTP 429 with a spent quota.
        """
        url = self.url(path)
        body = dict(payload) if payload is not None else None
        edge = self._endpoint()
        budget = self.policy.retry().start(sleep=self._sleep)
        shrinks = 0
        while True:
            if self._stop.is_set():
                raise StoppedError(f"{self.role} call to {url} stopped: the run ended")
            self._count("calls")
            budget.tried()
            try:
                sent = None if body is None else json.dumps(body, allow_nan=False).encode()
                with through_gate(self.spec.base_url):  # a cluster-wide slot, when sharded
                    status, headers, data = edge.send(method, url, sent)
            except CutReply as exc:  # the server answered, then the body broke off
                self._reached = True
                self._count("cut_replies")
                self._again(budget, url, f"reply cut mid-body: {exc}")
                continue
            except urllib3.exceptions.ReadTimeoutError as exc:
                self._again(budget, url, f"timed out: {exc}")
                continue
            except urllib3.exceptions.HTTPError as exc:  # refused, reset, TLS, proxy
                if not self._reached:
                    raise BackendError(
                        f"cannot reach the {self.role} model at {url}: {exc.__class__.__name__}. "
                        "Check that the server is running and the URL in the spec "
                        f"({self.spec.text or self.spec.base_url}) is right."
                    ) from exc
                self._again(budget, url, f"connection error: {exc}")
                continue
            self._reached = True
            text = data.decode("utf-8", "replace")
            if status < 400:  # the usual answer: decoded without quoting (masking) the body
                try:
                    decoded = json.loads(text)
                except ValueError:
                    self._count("malformed")
                    self._again(budget, url, f"malformed JSON: {_quoted(text, self.spec)[:80]!r}")
                    continue
                if parse is None:
                    return decoded
                try:
                    return parse(decoded)
                except ValueError as exc:
                    self._count("malformed")
                    self._again(budget, url, f"no usable message in the reply: {exc}")
                    continue
            detail = _quoted(text, self.spec)
            if status in (401, 403):
                raise self._auth_error(status, url, detail)
            if status == 429:
                self._rate_limited(budget, url, detail, headers.get("Retry-After"))
                continue
            if status in RETRY_STATUSES:
                self._again(budget, url, f"HTTP {status}: {detail}")
                continue
            if status == 400 and body is not None and _CONTEXT_ERROR.search(text):
                body = self._shrink(body, text, url, shrinks)
                shrinks += 1
                continue
            raise BackendError(
                f"{self.role} model at {url} rejected the request (HTTP {status}: {detail}). "
                "Check the model name and parameters in the spec."
            )

    def _again(self, budget: Attempts, url: str, why: str) -> None:
        """Wait for the next try, or raise naming the URL and the last failure."""
        if not budget.again():
            why = mask_secrets(why, keys=(self.spec.api_key,))
            raise BackendError(
                f"{self.role} model at {url} failed after {budget.count} attempts ({why}). "
                "Check the server's health, or raise the retry policy."
            )
        self._count("retries")

    def _rate_limited(self, budget: Attempts, url: str, detail: str, header: str | None) -> None:
        self._count("rate_limited")
        wait = retry_after_seconds(header)
        spent = "insufficient_quota" in detail or "quota" in detail.lower()
        if spent or (wait is not None and wait > self.policy.max_retry_after) or (
            not budget.again(retry_after=header)
        ):
            raise ModelQuotaError(
                f"{self.role} model at {url} is out of quota (HTTP 429: {detail or 'no detail'}"
                f"{f'; Retry-After {header}' if header else ''}). Raise the quota or wait, "
                "then run again.",
                role=self.role,
            )
        self._count("retries")

    def _shrink(self, body: dict[str, Any], text: str, url: str, shrinks: int) -> dict[str, Any]:
        current = body.get("max_tokens") or body.get("max_completion_tokens")
        current = int(current) if isinstance(current, int) else self.policy.default_max_tokens
        target = current // 2
        match = _CTX_NUMBERS.search(text)
        if match:
            target = min(target, int(match.group(1)) - int(match.group(2)) - 8)
        if target < self.policy.min_max_tokens or shrinks >= 6:
            raise BackendError(
                f"{self.role} model at {url}: the conversation does not fit the context window "
                f"even with max_tokens={current}. Lower avg_turns or use a longer-context model."
            )
        self._count("shrunk")
        return {**body, "max_tokens": target}

    # -- chat ---------------------------------------------------------------------------------
    def model_name(self) -> str:
        """The model to request: the spec's, else the first one the server lists."""
        if self._model is not None:
            return self._model
        with self._model_lock:
            return self._model or self._list_model()

    def _list_model(self) -> str:
        listing = self.request("GET", "/models")
        data = listing.get("data") if isinstance(listing, dict) else None
        if not data or not isinstance(data[0], dict) or not data[0].get("id"):
            raise ConfigError(
                f"{self.url('/models')} lists no model; name one with "
                f"zps.local_model({self.spec.base_url!r}, model=...)."
            )
        self._model = str(data[0]["id"])
        return self._model

    def chat(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        logprobs: bool = False,
        extra: dict[str, Any] | None = None,
        call_offset: int = 0,
    ) -> Reply:
        """One chat completion, parsed. A body without ``choices`` is retried as malformed."""
        payload: dict[str, Any] = {"model": self.model_name(), "messages": messages}
        if tools:
            payload["tools"] = tools
        if max_tokens is not None:
            payload["max_tokens"] = max_tokens
        if temperature is not None:
            payload["temperature"] = temperature
        if logprobs:
            payload["logprobs"] = True
        if extra:
            payload.update(extra)
        reply: Reply = self.request(
            "POST", "/chat/completions", payload,
            parse=lambda body: parse_reply(body if isinstance(body, dict) else {},
                                           call_offset=call_offset))
        return reply


class ModelRole:
    """What a model playing a run role (the agent, the writer) shares: its client, and ending it.

    The engine calls ``stop()`` when the run is over and ``close()`` when it lets go.
    """

    client: ChatClient

    def stop(self) -> None:
        """Wake every call waiting to retry; they raise :class:`StoppedError`."""
        self.client.stop()

    def close(self) -> None:
        """Stop calls still waiting to retry (rollouts abandoned after ``stop_grace``) and
        close the HTTP sessions."""
        self.client.stop()
        self.client.close()
