"""The verifier base: read the candidate and the gold off a row, return a judge-contract dict.

The candidate is the row's ``final_text``. The gold comes from ``field=`` (a key, or a dotted
path such as ``"privileged.reference"``), else ``privileged.reference``, else a flat ``answer``,
``target``, ``reference`` or ``gold`` field. A verifier that needs a gold and finds none returns
``reward: None`` (status ``missing_reward``), never a silent 0.

>>> @verifier
... def shouts(candidate):
...     return candidate.isupper()
>>> shouts({"final_text": "HI"})["reward"]
1.0
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from typing import Any

__all__ = ["GOLD_FIELDS", "Verifier", "get_path", "gold_of", "verifier"]

GOLD_FIELDS = ("answer", "target", "reference", "gold")
_MISSING = object()


def get_path(row: Any, path: str) -> Any:
    """Return the value at a dotted ``path`` in nested dicts (``_MISSING`` sentinel if absent).

    >>> get_path({"a": {"b": 2}}, "a.b")
    2
    """
    value = row
    for part in path.split("."):
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return _MISSING
    return value


def gold_of(row: dict[str, Any], field: str | None = None) -> Any:
    """The gold answer for ``row`` (``None`` when there is none).

    >>> gold_of({"privileged": {"reference": "42"}, "answer": "7"})
    '42'
    >>> gold_of({"privileged": {"reference": "the reply reports the sum", "answer": "42"}})
    '42'
    """
    if field is not None:
        value = get_path(row, field)
        return None if value is _MISSING else value
    privileged = row.get("privileged")
    if isinstance(privileged, dict):  # a simulated task's gold answer, else its reference
        for name in ("answer", "reference"):
            if privileged.get(name) is not None:
                return privileged[name]
    for name in GOLD_FIELDS:
        if row.get(name) is not None:
            return row[name]
    return None


class Verifier:
    """Base class: subclasses set ``needs_gold`` and implement ``check(candidate, gold, row)``.

    ``check`` returns a score in [0, 1] (bool allowed) or ``(score, reason)``.
    """

    needs_gold = True
    version = "1"

    def __init__(self, *, field: str | None = None, name: str | None = None) -> None:
        self.field = field
        self.name = name or type(self).__name__

    def check(self, candidate: str, gold: Any, row: dict[str, Any]) -> Any:
        raise NotImplementedError

    def __call__(self, row: dict[str, Any]) -> dict[str, Any]:
        if not isinstance(row, dict):
            return {"reward": None, "reason": f"{self.name}: expected a row dict"}
        text = row.get("final_text")
        candidate = text if isinstance(text, str) else ""
        gold = gold_of(row, self.field) if self.needs_gold else None
        if self.needs_gold and gold is None:
            where = self.field or "privileged.reference / answer / target / reference"
            return {"reward": None, "reason": f"{self.name}: no gold answer at {where}"}
        return _result(self.name, self.check(candidate, gold, row))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


def _result(name: str, out: Any) -> dict[str, Any]:
    """Normalise a check's return into ``{"reward", "reason", "verifier"}``."""
    if isinstance(out, dict):
        return {"verifier": name, **out}
    reason = ""
    if isinstance(out, tuple):
        out, reason = out
    if out is None:
        return {"reward": None, "reason": reason or f"{name}: no verdict", "verifier": name}
    score = float(out)
    if not math.isfinite(score):
        return {"reward": None, "reason": f"{name}: score {score}", "verifier": name}
    if not reason:
        reason = f"{name}: {'pass' if score >= 1.0 else 'fail' if score <= 0.0 else 'partial'}"
    return {"reward": min(1.0, max(0.0, score)), "reason": reason, "verifier": name}


class _FunctionVerifier(Verifier):
    def __init__(
        self, fn: Callable[..., Any], *, field: str | None = None, name: str | None = None
    ) -> None:
        super().__init__(field=field, name=name or getattr(fn, "__name__", "verifier"))
        self.fn = fn
        params = [
            p
            for p in inspect.signature(fn).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
        self.arity = len(params)
        self.needs_gold = self.arity >= 2

    def check(self, candidate: str, gold: Any, row: dict[str, Any]) -> Any:
        if self.arity >= 3:
            return self.fn(candidate, gold, row)
        if self.arity == 2:
            return self.fn(candidate, gold)
        return self.fn(candidate)


def verifier(
    fn: Callable[..., Any] | None = None, *, field: str | None = None, name: str | None = None
) -> Any:
    """Turn ``fn(candidate)``, ``fn(candidate, gold)`` or ``fn(candidate, gold, row)`` into a
    verifier that honours the judge contract. Use bare (``@verifier``) or with options
    (``@verifier(field="answer")``).

    >>> @verifier(field="answer")
    ... def same(candidate, gold):
    ...     return candidate.strip() == gold
    >>> same({"final_text": " 4 ", "answer": "4"})["reward"]
    1.0
    """
    if fn is None:
        return lambda f: _FunctionVerifier(f, field=field, name=name)
    return _FunctionVerifier(fn, field=field, name=name)
