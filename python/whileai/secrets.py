"""Mask credential-shaped text before it reaches an error message, a log line or a row.

One helper, :func:`mask_secrets`, used wherever the package turns outside text into something it
writes: ``WhileaiError`` messages (so every ``AuthError`` and ``BackendError``), the run report's
``first_agent_error``, judged rows' ``reason``, and every row leaving a run (``export_row``).

What counts as a secret:

- bearer tokens (``Authorization: Bearer ...``), OpenAI/Anthropic-style ``sk-...`` keys, AWS
  access key ids (``AKIA...``/``ASIA...``), GitHub (``ghp_...``), Hugging Face (``hf_...``) and
  Slack (``xoxb-...``) tokens;
- ``api_key=...``, ``"token": "..."``, ``password: ...`` style assignments (the value is masked);
- the configured keys themselves: the value of every environment variable whose name says it is
  a key, token, secret or password (8 characters or more), and any ``keys=`` passed in (a model
  spec's ``api_key``), wherever they appear, whatever their shape.

>>> mask_secrets("HTTP 401: bad key sk-proj-abcdef1234567890 (Bearer abc.def.ghi123)")
'HTTP 401: bad key sk-*** (Bearer ***)'
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["MASK", "configured_secrets", "mask_secrets", "mask_value"]

MASK = "***"
_MIN_KEY = 8
_SECRET_VAR = re.compile(r"(API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|ACCESS_KEY|CREDENTIALS?)$",
                         re.IGNORECASE)
_SHAPES = (
    (re.compile(r"(?i)\b(bearer|token|basic)(\s+)[A-Za-z0-9._~+/=-]{8,}"), r"\1\2" + MASK),
    (re.compile(r"\b(sk|rk|pk)-[A-Za-z0-9_-]{8,}"), r"\1-" + MASK),
    (re.compile(r"\b(AKIA|ASIA)[0-9A-Z]{16}\b"), r"\1" + MASK),
    (re.compile(r"\b(gh[pousr]_|github_pat_|hf_|glpat-)[A-Za-z0-9_-]{16,}"), r"\1" + MASK),
    (re.compile(r"\b(xox[abprs]-)[A-Za-z0-9-]{8,}"), r"\1" + MASK),
    (
        re.compile(
            r"(?i)(\b[\w-]*(?:api[_-]?key|token|secret|password|passwd)[\"']?\s*[:=]\s*[\"']?)"
            r"(?!\*\*\*)[^\s\"',;}&]{8,}"
        ),
        r"\1" + MASK,
    ),
)


def configured_secrets(environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The values of the environment's key-like variables (``*_API_KEY``, ``*_TOKEN``, ...).

    >>> configured_secrets({"OPENAI_API_KEY": "abcd1234efgh", "HOME": "/root", "X_TOKEN": "no"})
    ('abcd1234efgh',)
    """
    env = os.environ if environ is None else environ
    found = {v for k, v in env.items() if _SECRET_VAR.search(k) and len(v.strip()) >= _MIN_KEY}
    return tuple(sorted(found, key=lambda v: (-len(v), v)))


@functools.lru_cache(maxsize=32)
def _literal(keys: tuple[str, ...]) -> re.Pattern[str] | None:
    usable = sorted({k.strip() for k in keys if len(k.strip()) >= _MIN_KEY}, key=len, reverse=True)
    if not usable:
        return None
    return re.compile("|".join(re.escape(k) for k in usable))


def mask_secrets(text: str, *, keys: Iterable[str | None] = ()) -> str:
    """``text`` with every credential-shaped substring and every configured key replaced by
    ``***`` (a recognisable prefix such as ``sk-`` or ``Bearer`` is kept).

    Args:
        text: any text about to be written or raised.
        keys: further literal secrets to mask (``None`` and short values are ignored).

    Returns:
        The masked text (the same object when nothing matched).

    >>> mask_secrets("key=abc123def456 user=bob", keys=["zzzz-9999-yyyy"])
    'key=*** user=bob'
    >>> mask_secrets("the key is zzzz-9999-yyyy", keys=["zzzz-9999-yyyy"])
    'the key is ***'
    """
    if not isinstance(text, str) or not text:
        return text
    return _mask(text, _literal(configured_secrets() + tuple(k for k in keys if k)))


def _mask(text: str, literal: re.Pattern[str] | None) -> str:
    if literal is not None:
        text = literal.sub(MASK, text)
    for pattern, repl in _SHAPES:
        text = pattern.sub(repl, text)
    return text


def mask_value(value: Any, *, keys: Iterable[str | None] = ()) -> Any:
    """A copy of a JSON-like value with :func:`mask_secrets` applied to every string in it
    (dict keys included); other values are returned as they are.

    >>> mask_value({"reason": "Bearer abcdefgh12345678", "n": [1, "sk-abcdefgh12345"]})
    {'reason': 'Bearer ***', 'n': [1, 'sk-***']}
    """
    literal = _literal(configured_secrets() + tuple(k for k in keys if k))
    # iterative walk: rows may nest deeply, and recursion would fail long before JSON does
    root: list[Any] = [value]
    stack: list[tuple[Any, Any, Any]] = [(root, 0, value)]
    while stack:
        parent, slot, item = stack.pop()
        if isinstance(item, str):
            parent[slot] = _mask(item, literal)
        elif isinstance(item, dict):
            copy: dict[Any, Any] = {}
            for key, sub in item.items():
                new_key = _mask(key, literal) if isinstance(key, str) else key
                copy[new_key] = sub
                stack.append((copy, new_key, sub))
            parent[slot] = copy
        elif isinstance(item, list):
            items = list(item)
            parent[slot] = items
            stack.extend((items, i, sub) for i, sub in enumerate(items))
    return root[0]
