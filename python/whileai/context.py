"""Process-wide and scoped defaults for which model plays each role.

Three roles take a model: ``agent`` (the rollout policy), ``simulator`` (the situation writer;
``writer`` is an alias) and ``judge``. Each is resolved in one order: the call's own keyword,
then ``with whileai.context(...)``, then ``whileai.configure(...)``, then the environment
variables ``WHILEAI_AGENT`` / ``WHILEAI_SIMULATOR`` / ``WHILEAI_JUDGE``.

>>> import whileai
>>> with whileai.context(judge="ollama:phi4"):
...     configured("judge")
'ollama:phi4'
>>> configured("judge") is None
True
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from types import MappingProxyType

__all__ = ["ROLES", "configure", "configured", "context"]

ROLES = ("agent", "simulator", "judge")
_ALIASES = {"writer": "simulator", "policy": "agent"}

# configure() is process-wide by definition; the lock keeps concurrent writers consistent.
_LOCK = threading.Lock()
_CONFIGURED: dict[str, object] = {}
_EMPTY: Mapping[str, object] = MappingProxyType({})
_SCOPED: ContextVar[Mapping[str, object]] = ContextVar("whileai_context", default=_EMPTY)


def _normalise(settings: Mapping[str, object], where: str) -> dict[str, object]:
    out: dict[str, object] = {}
    for key, value in settings.items():
        role = _ALIASES.get(key, key)
        if role not in ROLES:
            valid = ", ".join(sorted((*ROLES, *_ALIASES)))
            raise TypeError(f"{where}() got an unexpected keyword {key!r}; valid: {valid}")
        out[role] = value
    return out


def configure(**settings: object) -> dict[str, object]:
    """Set process-wide defaults for ``agent``, ``simulator`` (alias ``writer``) and ``judge``.

    A value of ``None`` clears that role. Values are backend specs (``"openai:gpt-4.1-mini"``,
    ``"vllm:<model>@<url>"``, ``zps.local_model(...)``, ...); they are checked when a call uses
    them. Returns the settings now in force.

    >>> configure(judge="ollama:phi4")["judge"]
    'ollama:phi4'
    >>> configure(judge=None)
    {}
    """
    values = _normalise(settings, "configure")
    with _LOCK:
        for role, value in values.items():
            if value is None:
                _CONFIGURED.pop(role, None)
            else:
                _CONFIGURED[role] = value
        return dict(_CONFIGURED)


@contextmanager
def context(**settings: object) -> Iterator[dict[str, object]]:
    """Override role defaults inside a ``with`` block (this thread / task only).

    >>> with context(agent="ollama:qwen3") as active:
    ...     active["agent"]
    'ollama:qwen3'
    """
    values = _normalise(settings, "context")
    merged = {**_SCOPED.get(), **values}
    token = _SCOPED.set(MappingProxyType(merged))
    try:
        yield dict(merged)
    finally:
        _SCOPED.reset(token)


def configured(role: str) -> object | None:
    """The default set for ``role`` by :func:`context`, else by :func:`configure`, else None."""
    role = _ALIASES.get(role, role)
    scoped = _SCOPED.get()
    if scoped.get(role) is not None:
        return scoped[role]
    with _LOCK:
        return _CONFIGURED.get(role)
