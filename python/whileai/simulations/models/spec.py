"""Model backend specs: which OpenAI-compatible endpoint plays a role, and with which key.

Accepted forms (one string each, or a :func:`local_model` object):

- ``"openai:<model>"``: ``OPENAI_BASE_URL`` (default ``https://api.openai.com/v1``), key from
  ``OPENAI_API_KEY`` (required).
- ``"vllm:<model>@<url>"``: a vLLM (or any OpenAI-compatible) server at ``<url>``; key from
  ``VLLM_API_KEY`` when set.
- ``"ollama:<model>"``: the local Ollama server's OpenAI-compatible API at
  ``http://localhost:11434/v1`` (``OLLAMA_HOST`` moves it).
- ``"http://host:port/v1"``: a bare base URL; the model is the first one the server lists.

Parsing is pure apart from reading those environment variables; nothing here opens a socket.

>>> spec = parse_spec("vllm:Qwen/Qwen3-4B@http://127.0.0.1:8000/v1")
>>> spec.model, spec.base_url
('Qwen/Qwen3-4B', 'http://127.0.0.1:8000/v1')
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from whileai.errors import ConfigError

__all__ = ["ACCEPTED_FORMS", "ModelSpec", "local_model", "parse_spec"]

OPENAI_DEFAULT_URL = "https://api.openai.com/v1"
OLLAMA_DEFAULT_URL = "http://localhost:11434/v1"

ACCEPTED_FORMS = (
    '"openai:<model>" (reads OPENAI_API_KEY, optional OPENAI_BASE_URL), '
    '"vllm:<model>@<url>", "ollama:<model>", a bare base URL such as '
    '"http://127.0.0.1:8000/v1", or zps.local_model(url, model=..., api_key=...)'
)


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelSpec:
    """A resolved model endpoint.

    Attributes:
        kind: ``"openai"``, ``"vllm"``, ``"ollama"``, ``"url"`` or ``"local"``.
        model: the model name sent in each request; ``None`` means "ask the server".
        base_url: the OpenAI-compatible base URL, without a trailing slash.
        api_key: the bearer token, or ``None`` for servers that need none.
        api_key_var: the environment variable the key comes from (named in auth errors).
        text: the spec as the user wrote it (kept for reports).
    """

    kind: str
    model: str | None
    base_url: str
    api_key: str | None = None
    api_key_var: str | None = None
    text: str = ""

    @property
    def label(self) -> str:
        """A short name for reports: the model when known, else the URL."""
        return self.model or self.base_url

    def __repr__(self) -> str:  # never print the key
        return f"ModelSpec(kind={self.kind!r}, model={self.model!r}, base_url={self.base_url!r})"


def _is_url(text: str) -> bool:
    return text.startswith(("http://", "https://"))


def _clean_url(url: str, where: str) -> str:
    url = url.strip().rstrip("/")
    if not _is_url(url) or len(url.split("://", 1)[1]) == 0:
        raise ConfigError(
            f"model spec {where!r}: {url!r} is not an http(s) URL. "
            f"Accepted forms: {ACCEPTED_FORMS}."
        )
    return url


def local_model(url: str, *, model: str | None = None, api_key: str | None = None) -> ModelSpec:
    """Name an OpenAI-compatible server you run yourself (vLLM, llama.cpp, SGLang, ...).

    Args:
        url: the base URL, for example ``"http://127.0.0.1:8000/v1"``.
        model: the model name to request; ``None`` asks the server for its first model.
        api_key: a bearer token when the server wants one.

    >>> local_model("http://127.0.0.1:8000/v1/", model="qwen").base_url
    'http://127.0.0.1:8000/v1'
    """
    return ModelSpec(
        kind="local",
        model=model or None,
        base_url=_clean_url(url, url),
        api_key=api_key or None,
        api_key_var=None,
        text=f"local:{model or ''}@{url}",
    )


def _env(name: str) -> str | None:
    value = os.environ.get(name, "").strip()
    return value or None


def parse_spec(spec: str | ModelSpec) -> ModelSpec:
    """Parse one backend spec string (see the module docstring for the accepted forms).

    Raises:
        ConfigError: the spec is malformed or names an unknown backend; the message lists the
            accepted forms. A missing ``OPENAI_API_KEY`` for ``openai:`` is refused here too.

    >>> parse_spec("ollama:llama3.2").base_url
    'http://localhost:11434/v1'
    """
    if isinstance(spec, ModelSpec):
        return spec
    if not isinstance(spec, str):
        raise ConfigError(
            f"model spec must be a string or zps.local_model(...), got {type(spec).__name__}. "
            f"Accepted forms: {ACCEPTED_FORMS}."
        )
    text = spec.strip()
    if _is_url(text):
        return ModelSpec(kind="url", model=None, base_url=_clean_url(text, spec), text=spec)
    prefix, sep, rest = text.partition(":")
    rest = rest.strip()
    if not sep or not rest:
        raise ConfigError(f"model spec {spec!r} is malformed. Accepted forms: {ACCEPTED_FORMS}.")
    prefix = prefix.strip().lower()
    if prefix == "openai":
        key = _env("OPENAI_API_KEY")
        if key is None:
            raise ConfigError(
                f"model spec {spec!r} needs an API key: export OPENAI_API_KEY=... "
                "(and OPENAI_BASE_URL=... for a non-OpenAI endpoint), or pass "
                "zps.local_model(url, model=..., api_key=...)."
            )
        base = _clean_url(_env("OPENAI_BASE_URL") or OPENAI_DEFAULT_URL, "OPENAI_BASE_URL")
        return ModelSpec(
            kind="openai", model=rest, base_url=base, api_key=key,
            api_key_var="OPENAI_API_KEY", text=spec,
        )
    if prefix == "vllm":
        at = max(rest.rfind("@http://"), rest.rfind("@https://"))
        if at <= 0:
            raise ConfigError(
                f"model spec {spec!r}: vllm needs the server URL, as "
                f'"vllm:<model>@http://host:port/v1". Accepted forms: {ACCEPTED_FORMS}.'
            )
        return ModelSpec(
            kind="vllm", model=rest[:at], base_url=_clean_url(rest[at + 1 :], spec),
            api_key=_env("VLLM_API_KEY"), api_key_var="VLLM_API_KEY", text=spec,
        )
    if prefix == "ollama":
        host = _env("OLLAMA_HOST")
        base = OLLAMA_DEFAULT_URL
        if host is not None:
            host = host if _is_url(host) else "http://" + host
            base = host.rstrip("/") + "/v1"
        return ModelSpec(kind="ollama", model=rest, base_url=_clean_url(base, "OLLAMA_HOST"),
                         text=spec)
    raise ConfigError(
        f"model spec {spec!r}: unknown backend {prefix!r}. Accepted forms: {ACCEPTED_FORMS}."
    )
