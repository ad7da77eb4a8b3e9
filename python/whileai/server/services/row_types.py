"""The JSON types row schema v1 gives each field, checked on every pushed row.

The server reads rows after they are stored (profile, preview, pages, cuts, the publish gate):
a ``steps`` that is a number or a ``reward`` that is a string would break those reads for good.
So a push checks each row's fields against the ``type`` the shipped schema
(``whileai/simulations/schemas/row-v1.json``) declares, and the types of array items and
nested objects the schema describes (a step's fields, a message's), nothing more: unknown keys
stay allowed, as the schema says.

>>> type_problem({"prompt": "p", "steps": 5})
'field `steps`: expected array or null, got int'
>>> type_problem({"prompt": "p", "steps": [{"tool": "t", "input_tokens": "9"}]})
'field `steps[0].input_tokens`: expected integer or null, got str'
>>> type_problem({"prompt": "p", "extra": {"any": "thing"}}) is None
True
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from whileai.rows.schema import row_schema

__all__ = ["type_problem"]

_PYTHON: dict[str, tuple[type, ...]] = {
    "object": (dict,), "array": (list,), "string": (str,), "integer": (int,),
    "number": (int, float), "boolean": (bool,), "null": (type(None),),
}


@dataclass(frozen=True, slots=True)
class _Check:
    """One schema node made ready to check: the Python types it allows (None: any), whether
    ``bool`` is among them (it is an ``int`` to Python), its items' and its fields' checks."""

    label: str
    types: tuple[type, ...] | None
    bool_ok: bool
    items: _Check | None
    fields: Mapping[str, _Check]


def _compile(node: Mapping[str, Any], defs: Mapping[str, Any]) -> _Check:
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        node = defs[ref.removeprefix("#/$defs/")]
    allowed = node.get("type")
    names = [allowed] if isinstance(allowed, str) else list(allowed or ())
    types = tuple(t for name in names for t in _PYTHON.get(name, ())) if names else None
    items = node.get("items")
    return _Check(label=" or ".join(names), types=types, bool_ok="boolean" in names,
                  items=_compile(items, defs) if isinstance(items, Mapping) else None,
                  fields={k: _compile(v, defs) for k, v in (node.get("properties") or {}).items()})


@cache
def _row_check() -> _Check:
    schema = row_schema()
    return _compile(schema, schema.get("$defs") or {})


def _problem(value: Any, check: _Check, where: str) -> str | None:
    if check.types is not None and (not isinstance(value, check.types) or (
            value.__class__ is bool and not check.bool_ok)):
        return f"field `{where}`: expected {check.label}, got {type(value).__name__}"
    if check.items is not None and isinstance(value, list):
        for i, item in enumerate(value):
            found = _problem(item, check.items, f"{where}[{i}]")
            if found:
                return found
    if check.fields and isinstance(value, dict):
        for key, item in value.items():
            inner = check.fields.get(key)
            if inner is not None:
                found = _problem(item, inner, f"{where}.{key}")
                if found:
                    return found
    return None


def type_problem(row: Mapping[str, Any]) -> str | None:
    """The first field of ``row`` whose JSON type breaks row schema v1, or None."""
    fields = _row_check().fields
    for key, value in row.items():
        check = fields.get(key)
        if check is not None:
            found = _problem(value, check, key)
            if found:
                return found
    return None
