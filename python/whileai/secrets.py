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

import json
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["MASK", "configured_secrets", "key_needles", "mask_secrets", "mask_value"]

MASK = "***"
_MIN_KEY = 8
_SECRET_SUFFIXES = ("APIKEY", "API_KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "ACCESS_KEY",
                    "CREDENTIAL", "CREDENTIALS")
# every shape below contains one of these (lower-cased), so a text without any skips the regexes
# every shape below contains one of these literals or matches _ASSIGNED (in lower case), so a
# text without any skips the shape regexes; substring tests run in C
_TRIGGERS = ("sk-", "rk-", "pk-", "akia", "asia", "ghp_", "gho_", "ghu_", "ghs_", "ghr_",
             "github_pat_", "hf_", "glpat-", "xox", "bearer", "authorization")
_ASSIGNED = re.compile(r"(?:token|secret|passw(?:or)?d|api[_-]?key)[\"']?\s*[:=]")
_ASSIGNED_WORDS = ("token", "secret", "passw", "api")  # one is in every _ASSIGNED match
_SHAPES = (
    (re.compile(r"(?i)(\bauthorization[\"']?\s*[:=]\s*[\"']?[A-Za-z]+\s+)[^\s\"',;]{8,}"),
     r"\1" + MASK),
    (re.compile(r"(?i)\b(bearer\s+)(?=[A-Za-z._~+/=-]*[0-9])[A-Za-z0-9._~+/=-]{8,}"),
     r"\1" + MASK),
    (re.compile(r"\b(sk|rk|pk)-[A-Za-z0-9_-]{8,}"), r"\1-" + MASK),
    (re.compile(r"\b(AKIA|ASIA)[0-9A-Z]{16}\b"), r"\1" + MASK),
    (re.compile(r"\b(gh[pousr]_|github_pat_|hf_|glpat-)[A-Za-z0-9_-]{16,}"), r"\1" + MASK),
    (re.compile(r"\b(xox[abprs]-)[A-Za-z0-9-]{8,}"), r"\1" + MASK),
    (
        re.compile(
            r"(?i)((?:api[_-]?key|token|secret|password|passwd)[\"']?\s*[:=]\s*[\"']?)"
            r"(?!\*\*\*)[^\s\"',;}&]{8,}"
        ),
        r"\1" + MASK,
    ),
)


def configured_secrets(environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The values of the environment's key-like variables (``*_API_KEY``, ``*_TOKEN``, ...),
    longest first.

    >>> configured_secrets({"OPENAI_API_KEY": "abcd1234efgh", "HOME": "/root", "X_TOKEN": "no"})
    ('abcd1234efgh',)
    """
    env = os.environ if environ is None else environ
    names = [k for k in env if k.upper().endswith(_SECRET_SUFFIXES)]
    found = {v.strip() for v in (env.get(k, "") for k in names) if len(v.strip()) >= _MIN_KEY}
    return tuple(sorted(found, key=lambda v: (-len(v), v)))


def _keys(extra: Iterable[str | None]) -> tuple[str, ...]:
    more = {k.strip() for k in extra if k and len(k.strip()) >= _MIN_KEY}
    if not more:
        return configured_secrets()
    return tuple(sorted(set(configured_secrets()) | more, key=lambda v: (-len(v), v)))


def mask_secrets(text: str, *, keys: Iterable[str | None] = ()) -> str:
    """``text`` with every credential-shaped substring and every configured key replaced by
    ``***`` (a recognisable prefix such as ``sk-`` or ``Bearer`` is kept).

    Args:
        text: any text about to be written or raised.
        keys: further literal secrets to mask (``None`` and short values are ignored).

    Returns:
        The masked text (the same object when nothing matched).

    >>> mask_secrets("api_key=abc123def456 user=bob")
    'api_key=*** user=bob'
    >>> mask_secrets("the key is zzzz-9999-yyyy", keys=["zzzz-9999-yyyy"])
    'the key is ***'
    """
    if not isinstance(text, str) or not text:
        return text
    return _mask(text, _keys(keys))


def _mask(text: str, keys: tuple[str, ...], shapes: bool = True) -> str:
    if len(text) < _MIN_KEY:  # too short to hold any secret this module knows
        return text
    for key in keys:  # substring tests are cheap; most texts hold no key at all
        if key in text:
            text = text.replace(key, MASK)
    if shapes and _suspect(text.lower()):
        for pattern, repl in _SHAPES:
            text = pattern.sub(repl, text)
    return text


def _suspect(low: str) -> bool:
    if any(t in low for t in _TRIGGERS):
        return True
    # the assignment regex scans the whole text: run it only when one of its words is there
    return any(w in low for w in _ASSIGNED_WORDS) and _ASSIGNED.search(low) is not None


def key_needles(keys: Iterable[str | None] = ()) -> tuple[str, ...]:
    """The configured keys (and ``keys``) as a JSON text would hold them: raw and JSON-escaped.
    A text holding none of them holds no configured key (read the environment once, then test
    many texts with ``any(n in text for n in needles)``).

    >>> key_needles(["zzzz-9999-yyyy"])
    ('zzzz-9999-yyyy',)
    """
    return tuple(sorted({form for key in _keys(keys) for form in (key, json.dumps(key)[1:-1])}))


def _clean(value: Any, keys: tuple[str, ...], shapes: bool = True) -> bool:
    """True when the value certainly holds nothing to mask: one pass over its JSON text (a
    superset test: newline and tab escapes read as spaces), instead of a walk over every string.
    """
    try:
        text = json.dumps(value)
    except (TypeError, ValueError, RecursionError):
        return False
    if any(key in text or json.dumps(key)[1:-1] in text for key in keys):
        return False
    if not shapes or not _suspect(text.lower()):
        return True
    text = text.replace("\\n", " ").replace("\\t", " ").replace("\\r", " ")
    return not any(pattern.search(text) for pattern, _ in _SHAPES)


def mask_value(value: Any, *, keys: Iterable[str | None] = (), shapes: bool = True) -> Any:
    """A JSON-like value with :func:`mask_secrets` applied to every string in it (dict keys
    included): a masked copy, or ``value`` itself when nothing in it needs masking.
    ``shapes=False`` masks the configured keys only (not the credential shapes).

    >>> mask_value({"reason": "Bearer abcdefgh12345678", "n": [1, "sk-abcdefgh12345"]})
    {'reason': 'Bearer ***', 'n': [1, 'sk-***']}
    """
    found = _keys(keys)
    if _clean(value, found, shapes):
        return value
    # iterative walk: rows may nest deeply, and recursion would fail long before JSON does
    root: list[Any] = [value]
    stack: list[tuple[Any, Any, Any]] = [(root, 0, value)]
    while stack:
        parent, slot, item = stack.pop()
        if isinstance(item, str):
            parent[slot] = _mask(item, found, shapes)
        elif isinstance(item, dict):
            copy: dict[Any, Any] = {}
            for key, sub in item.items():
                new_key = _mask(key, found, shapes) if isinstance(key, str) else key
                copy[new_key] = sub
                stack.append((copy, new_key, sub))
            parent[slot] = copy
        elif isinstance(item, list):
            items = list(item)
            parent[slot] = items
            stack.extend((items, i, sub) for i, sub in enumerate(items))
    return root[0]
