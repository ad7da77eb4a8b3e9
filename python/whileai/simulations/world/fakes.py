"""Values for a parameter by its role: ids in their entity's format, amounts, dates, addresses.

>>> from whileai.simulations.agent.spec import agent_spec
>>> from whileai.simulations.world.roles import lexicon
>>> spec = agent_spec(tools=[{"name": "get_order", "parameters": {"type": "object",
...     "properties": {"order_id": {"type": "string", "description": "such as '#W0000000'"}}}}])
>>> value = role_value(lexicon(spec).role("get_order", "order_id"), draws(0, 1))
>>> value.startswith("#W") and len(value) == 9
True
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from functools import lru_cache
from typing import Any

from whileai.simulations.world.roles import IdFormat, Role
from whileai.simulations.world.values import (
    DOMAINS,
    FIRST,
    LAST,
    STREETS,
    Draw,
    _digits,
    draws,
    fake_value,
)

__all__ = ["AIRPORTS", "DEFAULT_TODAY", "PLACES", "draws", "id_value", "policy_today",
           "role_value"]

AIRPORTS = ("JFK", "LAX", "SFO", "ORD", "SEA", "BOS", "DEN", "ATL", "MIA", "PHX", "DFW", "LAS",
            "EWR", "IAH", "MSP", "DTW")
# city, state and the first three digits of its zip codes: one address hangs together
PLACES = (("Austin", "TX", "787"), ("Denver", "CO", "802"), ("Chicago", "IL", "606"),
          ("Seattle", "WA", "981"), ("Boston", "MA", "021"), ("Phoenix", "AZ", "850"),
          ("Portland", "OR", "972"), ("San Diego", "CA", "921"), ("Miami", "FL", "331"),
          ("Columbus", "OH", "432"), ("Nashville", "TN", "372"), ("Atlanta", "GA", "303"),
          ("Minneapolis", "MN", "554"), ("Raleigh", "NC", "276"),
          ("Salt Lake City", "UT", "841"), ("Pittsburgh", "PA", "152"))
DEFAULT_TODAY = date(2026, 3, 2)  # "today" when the policy names none
_TODAY = re.compile(r"\b(?:today(?:'s date)?|(?:the )?current (?:date|time)|the date)"
                    r"(?: is|:)\s+(\d{4})-(\d{2})-(\d{2})", re.IGNORECASE)
COUNTRIES = ("USA",)
UNITS2 = ("Apt 4", "Suite 210", "Unit 7", "Apt 12B", "Floor 3", "Apt 301")
TEXTS = ("the package arrived damaged", "it is the wrong size", "I found a better option",
         "my plans changed", "it stopped working after a week", "I was charged twice")
DAMAGE = ("the back tyre is flat", "the chain keeps slipping", "the front brake is loose",
          "there is a deep scratch on the frame", "the bell fell off", "a spoke is bent",
          "the gears skip under load", "the light stopped working")
_ALNUM = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"


def id_value(fmt: IdFormat, draw: Draw) -> str:
    """One id in ``fmt`` (a shape drawn among the format's alternatives)."""
    shape = fmt.shapes[draw.below(len(fmt.shapes))]
    kind, _, rest = shape.partition(":")
    if kind == "name":
        first, last = FIRST[draw.below(len(FIRST))], LAST[draw.below(len(LAST))]
        return f"{first}_{last}_{_digits(draw, int(rest))}"
    if kind == "alnum":
        n = int(rest)
        chars = [_ALNUM[draw.below(len(_ALNUM))] for _ in range(n)]
        chars[draw.below(n // 2)] = "ABCDEFGHJKLMNPQRSTUVWXYZ"[draw.below(24)]
        chars[n // 2 + draw.below(n - n // 2)] = "23456789"[draw.below(8)]
        return "".join(chars)
    prefix, _, digits = rest.rpartition(":")
    return prefix + _digits(draw, int(digits))


@lru_cache(maxsize=64)
def policy_today(policy: str) -> date:
    """The date the policy calls today ("The current time is 2024-05-15 15:00:00 EST"), else
    ``DEFAULT_TODAY``.

    >>> policy_today("The current time is 2024-05-15 15:00:00 EST."), policy_today("Be kind.")
    (datetime.date(2024, 5, 15), datetime.date(2026, 3, 2))
    """
    found = _TODAY.search(policy)
    if found is None:
        return DEFAULT_TODAY
    try:
        return date(int(found.group(1)), int(found.group(2)), int(found.group(3)))
    except ValueError:
        return DEFAULT_TODAY


def _date(draw: Draw, birth: bool, today: date) -> str:
    if birth:
        return f"{today.year - 20 - draw.below(55)}-{draw.below(12) + 1:02d}-" \
               f"{draw.below(28) + 1:02d}"
    return (today + timedelta(days=1 + draw.below(120))).isoformat()  # ahead of today


def role_value(role: Role, draw: Draw, *, count: int = 1, place: int = 0,
               today: date = DEFAULT_TODAY) -> Any:
    """One plausible value for the parameter ``role`` describes; lists hold ``count`` items.

    ``place`` picks the city every address part of one task shares (``PLACES``); dates other
    than birth dates fall in the four months after ``today``.
    """
    param, kind = role.param, role.kind
    name = param.name.lower()
    if kind == "id" and role.id_format is not None:
        value = id_value(role.id_format, draw)
        return int(value) if param.type == "integer" and value.isdigit() else value
    if kind == "ids" and role.id_format is not None:
        fmt = role.id_format
        out: list[str] = []
        while len(out) < count:
            candidate = id_value(fmt, draw)
            if candidate not in out:
                out.append(candidate)
        return out
    if kind in ("attribute", "flag") and param.enum:
        return param.enum[draw.below(len(param.enum))]
    if kind == "flag":
        return bool(draw.below(2))
    if kind == "quantity":
        return 1 + draw.below(4)
    if kind == "money":
        amount = round(10 + draw.below(48000) / 100, 2)
        return amount if param.type == "number" else f"{amount:.2f}"
    if kind == "date":
        return _date(draw, "birth" in name or "dob" in name, today)
    if kind == "phone":
        return f"555-{_digits(draw, 3)}-{_digits(draw, 4)}"
    if kind == "email":
        first, last = FIRST[draw.below(len(FIRST))], LAST[draw.below(len(LAST))]
        return f"{first}.{last}{draw.below(90) + 10}@{DOMAINS[draw.below(len(DOMAINS))]}"
    if kind == "name":
        first, last = FIRST[draw.below(len(FIRST))], LAST[draw.below(len(LAST))]
        return first.title() if "first" in name else last.title() if "last" in name \
            else f"{first.title()} {last.title()}"
    if kind == "place":
        return AIRPORTS[draw.below(len(AIRPORTS))]
    if kind == "address":
        return _address_part(name, draw, place)
    if kind == "expression":
        a, b = 10 + draw.below(490) + draw.below(100) / 100, 2 + draw.below(8)
        op = (" + ", " * ", " - ")[draw.below(3)]
        return f"{a:.2f}{op}{b if op == ' * ' else f'{10 + draw.below(90)}.{draw.below(90) + 10}'}"
    if kind == "records":
        fields = role.fields
        if param.type == "object":
            return _record(fields, draw, place, today)
        return [_record(fields, draw, place, today) for _ in range(count)]
    if kind == "text":
        bank = DAMAGE if "damag" in (name + " " + param.description.lower()) else TEXTS
        return bank[draw.below(len(bank))]
    return fake_value(param, draw)


def _address_part(name: str, draw: Draw, place: int) -> str:
    city, state, zip3 = PLACES[place % len(PLACES)]
    if "2" in name or "line2" in name or "apt" in name:
        return UNITS2[draw.below(len(UNITS2))]
    if "city" in name:
        return city
    if "state" in name:
        return state
    if "country" in name:
        return COUNTRIES[draw.below(len(COUNTRIES))]
    if "zip" in name or "postal" in name or "postcode" in name:
        return zip3 + f"{draw.below(100):02d}"
    return f"{draw.below(880) + 12} {STREETS[draw.below(len(STREETS))]}"


def _record(fields: tuple[Role, ...], draw: Draw, place: int, today: date) -> dict[str, Any]:
    return {f.param.name: role_value(f, draw, place=place, today=today) for f in fields}
