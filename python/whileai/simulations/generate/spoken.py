"""A field as people say it: "your order number", "the payment method", "your zip code".

The agent asks for a detail with these words, the simulated person recognises which detail is
asked for with the same words, and asks never say a schema noun (``payment_method_id``,
``address1``, "user"). A field's words come from its role: an id is named by its entity, an
address part by what it is, an option by its name without underscores and id suffixes.

>>> from whileai.simulations.agent.spec import agent_spec
>>> from whileai.simulations.world.roles import lexicon
>>> spec = agent_spec(tools=[{"name": "cancel_order", "parameters": {"type": "object",
...     "properties": {"order_id": {"type": "string"}, "payment_method_id": {"type": "string"},
...     "zip": {"type": "string"}}}}])
>>> [spoken(r) for r in lexicon(spec).tool_roles("cancel_order")]
['order number', 'payment method', 'zip code']
"""

from __future__ import annotations

import re

from whileai.simulations.world.roles import Role, person_entity

__all__ = ["cues", "payment_words", "spoken"]

_ADDRESS = (("zip", "zip code"), ("postal", "postcode"), ("postcode", "postcode"),
            ("city", "city"), ("state", "state"), ("country", "country"),
            ("2", "apartment or unit"), ("apt", "apartment or unit"))
_CODES = ("reservation", "booking", "confirmation")  # ids people call a code


def spoken(role: Role) -> str:
    """The words a person uses for the field ``role`` describes (no underscores, no "id")."""
    name = role.param.name.lower()
    if role.kind in ("id", "ids"):
        entity = role.entity or "reference"
        if person_entity(entity):
            return "account ID"
        if "payment" in entity or "card" in entity:
            return "payment method"
        if entity in _CODES:
            return f"{entity} code"
        noun = f"{entity} number"
        return f"new {noun}" if role.qualifier == "new" else noun
    if role.kind == "address":
        for key, words in _ADDRESS:
            if key in name:
                return words
        return "address"
    if role.kind == "email":
        return "email address"
    if role.kind == "phone":
        return "phone number"
    if role.kind == "name":
        return "first name" if "first" in name else "last name" if "last" in name else "name"
    if role.kind == "date":
        return "date of birth" if "birth" in name or "dob" in name else (
            name.replace("_", " ") if "date" in name else "date")
    if role.kind == "place":
        return "departure airport" if name.startswith(("origin", "from", "depart")) \
            else "destination"
    words = re.sub(r"_?(ids?|number|no|code)$", "", name).replace("_", " ").strip()
    if role.kind == "quantity" and role.unit:
        return f"number of {role.unit}"
    return words or "details"


def cues(role: Role) -> tuple[str, ...]:
    """Words that show a message is about this field (for recognising what was asked)."""
    words = spoken(role)
    out = [words]
    if role.kind in ("id", "ids"):
        entity = role.entity or ""
        if person_entity(entity):
            out += ["user id", "account", "username", "customer id"]
        elif "payment" in entity or "card" in entity:
            out += ["payment", "card", "pay with"]
        else:
            out += [f"{entity} id", f"{entity} code", f"{entity} number", entity]
    elif role.kind == "address":
        out.append("address")
    elif role.kind == "attribute" and role.param.enum:
        out += [role.param.name.replace("_", " ")]
    return tuple(dict.fromkeys(w.lower() for w in out if w))


def payment_words(value: object) -> str:
    """How a person names a payment method id: ``gift_card_123`` -> "my gift card".

    >>> payment_words("credit_card_7815826"), payment_words("paypal_2")
    ('my credit card', 'my PayPal account')
    """
    text = str(value).lower()
    if "gift" in text:
        return "my gift card"
    if "paypal" in text:
        return "my PayPal account"
    if "certificate" in text:
        return "my travel certificate"
    if "debit" in text:
        return "my debit card"
    if "card" in text or "credit" in text:
        return "my credit card"
    if "bank" in text or "account" in text:
        return "my bank account"
    return "my usual card"
