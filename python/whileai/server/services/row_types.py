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
from functools import cache
from typing import Any

from whileai.simulations.schema import row_schema

__all__ = ["type_problem"]

_CHECKS: dict[str, Any] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


@cache
def _schema() -> dict[str, Any]:
    return row_schema()


def _resolve(node: Mapping[str, Any]) -> Mapping[str, Any]:
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        found: Mapping[str, Any] = _schema()["$defs"][ref.removeprefix("#/$defs/")]
        return found
    return node


def _problem(value: Any, node: Mapping[str, Any], where: str) -> str | None:
    node = _resolve(node)
    types = node.get("type")
    if types is not None:
        allowed = [types] if isinstance(types, str) else list(types)
        if not any(_CHECKS[t](value) for t in allowed if t in _CHECKS):
            return f"field `{where}`: expected {' or '.join(allowed)}, got {type(value).__name__}"
    if isinstance(value, list) and isinstance(node.get("items"), Mapping):
        for i, item in enumerate(value):
            found = _problem(item, node["items"], f"{where}[{i}]")
            if found:
                return found
    if isinstance(value, dict) and isinstance(node.get("properties"), Mapping):
        for key, child in node["properties"].items():
            if key in value:
                found = _problem(value[key], child, f"{where}.{key}")
                if found:
                    return found
    return None


def type_problem(row: Mapping[str, Any]) -> str | None:
    """The first field of ``row`` whose JSON type breaks row schema v1, or None."""
    properties = _schema()["properties"]
    for key, node in properties.items():
        if key in row:
            found = _problem(row[key], node, key)
            if found:
                return found
    return None
