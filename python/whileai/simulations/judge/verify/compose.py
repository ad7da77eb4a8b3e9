"""Composing verifiers: ``All`` (every one passes), ``Any`` (one is enough), ``Weighted``.

>>> from whileai.simulations.judge.verify.text import Includes, Regex
>>> both = All(Includes("4412"), Regex(r"shipped"))
>>> both({"final_text": "4412 shipped"})["reward"], both({"final_text": "4412 lost"})["reward"]
(1.0, 0.0)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any as AnyType

from whileai.errors import ConfigError

__all__ = ["All", "Any", "Weighted"]

Judge = Callable[[dict[str, AnyType]], AnyType]


def _reward(out: AnyType) -> float | None:
    value = out.get("reward") if isinstance(out, dict) else out
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value)
    return None


def _reason(out: AnyType) -> str:
    return str(out.get("reason", "")) if isinstance(out, dict) else ""


class _Group:
    version = "1"

    def __init__(self, *verifiers: Judge, name: str | None = None) -> None:
        if not verifiers:
            raise ConfigError(f"{type(self).__name__} needs at least one verifier")
        for v in verifiers:
            if not callable(v):
                raise ConfigError(f"{type(self).__name__}: {v!r} is not a verifier (callable)")
        self.verifiers = verifiers
        self.name = name or f"{type(self).__name__}({', '.join(_name(v) for v in verifiers)})"

    def _parts(self, row: dict[str, AnyType]) -> list[tuple[float | None, str]]:
        return [(_reward(out), _reason(out)) for out in (v(row) for v in self.verifiers)]


def _name(v: AnyType) -> str:
    return str(getattr(v, "name", None) or getattr(v, "__name__", type(v).__name__))


class All(_Group):
    """Passes only when every verifier passes; the reward is the smallest part."""

    def __call__(self, row: dict[str, AnyType]) -> dict[str, AnyType]:
        parts = self._parts(row)
        if any(r is None for r, _ in parts):
            missing = [why for r, why in parts if r is None]
            return {"reward": None, "reason": f"{self.name}: a part gave no reward: {missing[0]}"}
        worst = min(parts, key=lambda p: p[0])  # type: ignore[arg-type,return-value]
        return {"reward": worst[0], "reason": worst[1] if worst[0] < 1.0 else "all passed"}  # type: ignore[operator]


class Any(_Group):
    """Passes when any verifier passes; the reward is the largest part (unjudged parts skipped)."""

    def __call__(self, row: dict[str, AnyType]) -> dict[str, AnyType]:
        scored = [(r, why) for r, why in self._parts(row) if r is not None]
        if not scored:
            return {"reward": None, "reason": f"{self.name}: no part gave a reward"}
        best = max(scored, key=lambda p: p[0])
        return {"reward": best[0], "reason": best[1]}


class Weighted:
    """A graded rubric: the weighted mean of the parts' rewards (weights need not sum to 1).

    >>> from whileai.simulations.judge.verify.text import Includes
    >>> w = Weighted([(Includes("a"), 3), (Includes("b"), 1)])
    >>> w({"final_text": "a"})["reward"]
    0.75
    """

    version = "1"

    def __init__(
        self,
        parts: Mapping[Judge, float] | Sequence[tuple[Judge, float]],
        *,
        name: str | None = None,
    ) -> None:
        pairs = list(parts.items()) if isinstance(parts, Mapping) else list(parts)
        if not pairs:
            raise ConfigError("Weighted needs at least one (verifier, weight) pair")
        for v, w in pairs:
            if not callable(v) or isinstance(w, bool) or not isinstance(w, (int, float)) or w < 0:
                raise ConfigError(f"Weighted parts are (verifier, weight >= 0), got {(v, w)!r}")
        if sum(w for _, w in pairs) <= 0:
            raise ConfigError("Weighted needs a positive total weight")
        self.parts = pairs
        self.name = name or "Weighted"

    def __call__(self, row: dict[str, AnyType]) -> dict[str, AnyType]:
        total = weight = 0.0
        markers: dict[str, float] = {}
        for v, w in self.parts:
            out = v(row)
            r = _reward(out)
            if r is None:
                return {"reward": None, "reason": f"{_name(v)} gave no reward: {_reason(out)}"}
            total += w * r
            weight += w
            markers[f"rubric:{_name(v)}"] = r
        return {"reward": total / weight, "reason": "weighted rubric", "markers": markers}
