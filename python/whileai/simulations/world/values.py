"""Plausible fake values for tool parameters (ids, emails, amounts), from a seeded stream.

>>> from whileai.simulations.agent.spec import Param
>>> "@" in fake_value(Param(name="email"), draws(0, 1))
True
"""

from __future__ import annotations

from typing import Any

from whileai import _backend
from whileai.simulations.agent.spec import Param

__all__ = ["Draw", "draws", "entity_noun", "fake_value", "is_id_param"]

_MASK64 = (1 << 64) - 1
_CHUNK = 16  # floats fetched at a time: most units (a task's world, a wording) need fewer


class Draw:
    """Seeded draws for the world and the writer: the splitmix64 stream ``(seed, unit)`` of
    ``_backend.uniform_floats``, the same in every process, platform and backend."""

    __slots__ = ("_floats", "_next", "_seed", "_unit")

    def __init__(self, seed: int, unit: int) -> None:
        self._seed, self._unit = seed & _MASK64, unit & _MASK64
        self._floats = _backend.uniform_floats(self._seed, self._unit, _CHUNK)
        self._next = 0

    def unit(self) -> float:
        """A float in [0, 1)."""
        i = self._next
        if i == len(self._floats):  # read on: the stream again, twice as far
            self._floats = _backend.uniform_floats(self._seed, self._unit, 2 * i)
        self._next = i + 1
        return self._floats[i]

    def below(self, bound: int) -> int:
        """An int in [0, bound) (bound >= 1; small bounds, so the float draw is unbiased enough)."""
        return int(self.unit() * bound)


def draws(seed: int, unit: int) -> Draw:
    """The draws of one independent unit (a task, a rollout, a wording) under ``seed``."""
    return Draw(seed, unit)


FIRST = (
    "maria", "james", "aisha", "chen", "olga", "diego", "priya", "tom", "fatima", "lucas",
    "yuki", "noah", "amara", "ivan", "sofia", "omar", "grace", "mateo", "lena", "kwame",
)
LAST = (
    "lopez", "smith", "khan", "wang", "petrova", "garcia", "patel", "brown", "haddad", "silva",
    "tanaka", "miller", "okafor", "ivanov", "rossi", "nasser", "kim", "fernandez", "novak",
    "mensah",
)
CITIES = (
    "Lisbon", "Austin", "Denver", "Leeds", "Osaka", "Toronto", "Porto", "Dublin", "Chicago",
    "Seattle", "Lyon", "Boston", "Phoenix", "Madrid", "Nairobi", "Oslo",
)
STREETS = ("Elm Street", "Oak Avenue", "Maple Road", "Cedar Lane", "Park Drive", "Hill Street",
           "River Road", "Lake View", "Main Street", "Station Road")
WORDS = ("blue", "large", "standard", "express", "premium", "basic", "red", "small", "annual",
         "monthly", "black", "green", "medium", "weekly", "silver", "classic")
DOMAINS = ("example.com", "mail.test", "inbox.example", "post.example.org")


def is_id_param(name: str) -> bool:
    """Whether a parameter names a record (``order_id``, ``id``, ``ticket_number``)."""
    low = name.lower()
    return low == "id" or low.endswith(("_id", "id", "_number", "_no", "_code", "_ref"))


def entity_noun(param: str, tool: str = "") -> str:
    """The thing an id parameter points at, in words (``order_id`` -> ``order``)."""
    low = param.lower()
    for suffix in ("_id", "_number", "_no", "_code", "_ref", "id"):
        if low.endswith(suffix) and len(low) > len(suffix):
            return low[: -len(suffix)].strip("_").replace("_", " ")
    words = [w for w in tool.lower().split("_") if w]
    return words[-1] if len(words) > 1 else "record"


def _digits(draw: Draw, n: int) -> str:
    return str(10 ** (n - 1) + draw.below(9 * 10 ** (n - 1)))


def fake_value(param: Param, draw: Draw) -> Any:
    """One plausible value for ``param``, chosen by its enum, type and name."""
    name = param.name.lower()
    if param.enum:
        return param.enum[draw.below(len(param.enum))]
    if param.type == "boolean":
        return bool(draw.below(2))
    if param.type == "integer":
        return 1 + draw.below(5) if "id" not in name else int(_digits(draw, 4))
    if param.type == "number":
        return round(5 + draw.below(49500) / 100, 2)
    if param.type == "array":
        return [fake_value(Param(name=name.rstrip("s")), draw)]
    if param.type == "object":
        return {}
    first, last = FIRST[draw.below(len(FIRST))], LAST[draw.below(len(LAST))]
    if "email" in name:
        return f"{first}.{last}{draw.below(90) + 10}@{DOMAINS[draw.below(len(DOMAINS))]}"
    if is_id_param(name):
        style = draw.below(3)
        if style == 0:
            return _digits(draw, 4)
        if style == 1:
            return "#W" + _digits(draw, 7)
        return name[:1].upper() + "-" + _digits(draw, 5)
    if "first" in name:
        return first.title()
    if "last" in name:
        return last.title()
    if "name" in name:
        return f"{first.title()} {last.title()}"
    if "zip" in name or "postal" in name:
        return _digits(draw, 5)
    if "city" in name:
        return CITIES[draw.below(len(CITIES))]
    if "address" in name or "street" in name:
        return f"{draw.below(180) + 2} {STREETS[draw.below(len(STREETS))]}"
    if "phone" in name:
        return f"555-{_digits(draw, 3)}-{_digits(draw, 4)}"
    if "date" in name or "time" in name or "day" in name:
        return f"2026-{draw.below(12) + 1:02d}-{draw.below(28) + 1:02d}"
    if any(k in name for k in ("amount", "price", "total", "cost", "fee")):
        return f"{draw.below(480) + 12}.{draw.below(100):02d}"
    if "expression" in name:
        return f"{draw.below(90) + 10} * {draw.below(9) + 2}"
    return WORDS[draw.below(len(WORDS))]
