"""JSON verifiers: the reply parses (``JSONValid``), fits a schema (``JSONSchema``), or carries
the right value at a path (``JSONField``). Code fences (```json) around the JSON are ignored.

``schema_errors`` is a dependency-free validator for the common JSON-Schema keywords: ``type``,
``enum``, ``const``, ``properties``, ``required``, ``additionalProperties``, ``items``,
``minItems``, ``maxItems``, ``uniqueItems``, ``minimum``, ``maximum``, ``exclusiveMinimum``,
``exclusiveMaximum``, ``multipleOf``, ``minLength``, ``maxLength``, ``pattern``, ``allOf``,
``anyOf``, ``oneOf``, ``not``. Other keywords are ignored.

>>> JSONSchema({"type": "object", "required": ["id"]})({"final_text": '{"id": 4}'})["reward"]
1.0
>>> schema_errors({"type": "integer", "minimum": 3}, 2)
['$: 2 is below minimum 3']
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from whileai.errors import ConfigError
from whileai.simulations.judge.verify.base import _MISSING, Verifier, get_path

__all__ = ["JSONField", "JSONSchema", "JSONValid", "parse_json_reply", "schema_errors"]

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.S)


def parse_json_reply(text: str) -> tuple[Any, str | None]:
    """Parse the JSON in a reply; return ``(value, None)`` or ``(None, error)``.

    >>> parse_json_reply("```json\\n[1, 2]\\n```")
    ([1, 2], None)
    """
    fenced = _FENCE.search(text)
    body = fenced.group(1) if fenced else text
    try:
        return json.loads(body.strip()), None
    except (json.JSONDecodeError, RecursionError) as exc:
        return None, f"not valid JSON: {exc}"


_TYPES: dict[str, Any] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "integer": lambda v: (
        (isinstance(v, int) and not isinstance(v, bool))
        or (isinstance(v, float) and v.is_integer())
    ),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
}


_BOUNDS = {
    "minimum": "below minimum",
    "maximum": "above maximum",
    "exclusiveMinimum": "not above exclusiveMinimum",
    "exclusiveMaximum": "not below exclusiveMaximum",
}


def _num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def schema_errors(schema: Any, value: Any, path: str = "$") -> list[str]:
    """Every way ``value`` breaks ``schema`` (empty when it fits), each prefixed by its path."""
    if schema is True or schema == {}:
        return []
    if schema is False:
        return [f"{path}: no value is allowed here"]
    if not isinstance(schema, dict):
        raise ConfigError(f"schema at {path} must be a dict or bool, got {type(schema).__name__}")
    errs: list[str] = []
    kind = schema.get("type")
    if kind is not None:
        kinds = kind if isinstance(kind, list) else [kind]
        unknown = [k for k in kinds if k not in _TYPES]
        if unknown:
            raise ConfigError(f"schema at {path} has unknown type(s) {unknown}")
        if not any(_TYPES[k](value) for k in kinds):
            return [f"{path}: expected {'/'.join(kinds)}, got {type(value).__name__}"]
    if "enum" in schema and value not in schema["enum"]:
        errs.append(f"{path}: {value!r:.40} is not one of {schema['enum']!r:.60}")
    if "const" in schema and value != schema["const"]:
        errs.append(f"{path}: expected {schema['const']!r:.40}")
    if isinstance(value, dict):
        props = schema.get("properties", {})
        errs += [
            f"{path}: missing required {k!r}" for k in schema.get("required", []) if k not in value
        ]
        for key, item in value.items():
            if key in props:
                errs += schema_errors(props[key], item, f"{path}.{key}")
            else:
                extra = schema.get("additionalProperties", True)
                if extra is False:
                    errs.append(f"{path}: unexpected property {key!r}")
                elif isinstance(extra, dict):
                    errs += schema_errors(extra, item, f"{path}.{key}")
    if isinstance(value, list):
        if "items" in schema and isinstance(schema["items"], (dict, bool)):
            for i, item in enumerate(value):
                errs += schema_errors(schema["items"], item, f"{path}[{i}]")
        if len(value) < schema.get("minItems", 0):
            errs.append(f"{path}: fewer than {schema['minItems']} items")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            errs.append(f"{path}: more than {schema['maxItems']} items")
        if schema.get("uniqueItems"):
            seen = [json.dumps(v, sort_keys=True) for v in value]
            if len(set(seen)) != len(seen):
                errs.append(f"{path}: items are not unique")
    if _num(value):
        bounds = {k: schema[k] for k in _BOUNDS if _num(schema.get(k))}
        for key, bound in bounds.items():
            word = _BOUNDS[key]
            broken = {
                "minimum": value < bound,
                "maximum": value > bound,
                "exclusiveMinimum": value <= bound,
                "exclusiveMaximum": value >= bound,
            }[key]
            if broken:
                errs.append(f"{path}: {value} is {word} {bound}")
        step = schema.get("multipleOf")
        if step is not None and _num(step) and step > 0:
            ratio = value / step
            if not math.isclose(ratio, round(ratio), abs_tol=1e-9):
                errs.append(f"{path}: {value} is not a multiple of {step}")
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            errs.append(f"{path}: shorter than {schema['minLength']}")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            errs.append(f"{path}: longer than {schema['maxLength']}")
        if "pattern" in schema and not re.search(schema["pattern"], value):
            errs.append(f"{path}: does not match pattern {schema['pattern']!r}")
    for sub in schema.get("allOf", []):
        errs += schema_errors(sub, value, path)
    if "anyOf" in schema and all(schema_errors(s, value, path) for s in schema["anyOf"]):
        errs.append(f"{path}: matches none of anyOf")
    if "oneOf" in schema:
        hits = sum(not schema_errors(s, value, path) for s in schema["oneOf"])
        if hits != 1:
            errs.append(f"{path}: matches {hits} of oneOf (need exactly 1)")
    if "not" in schema and not schema_errors(schema["not"], value, path):
        errs.append(f"{path}: matches a schema it must not")
    return errs


class JSONValid(Verifier):
    """1 when the reply is valid JSON."""

    needs_gold = False

    def check(self, candidate: str, gold: Any, row: dict[str, Any]) -> Any:
        _, error = parse_json_reply(candidate)
        return (0.0, error) if error else (1.0, "valid JSON")


class JSONSchema(Verifier):
    """1 when the reply is JSON that fits ``schema`` (checked once, up front)."""

    needs_gold = False

    def __init__(self, schema: dict[str, Any], *, name: str | None = None) -> None:
        super().__init__(name=name)
        schema_errors(schema, None)  # raises ConfigError on a malformed schema
        self.schema = schema

    def check(self, candidate: str, gold: Any, row: dict[str, Any]) -> Any:
        value, error = parse_json_reply(candidate)
        if error:
            return 0.0, error
        errs = schema_errors(self.schema, value)
        return (0.0, "; ".join(errs[:3])) if errs else (1.0, "fits the schema")


class JSONField(Verifier):
    """1 when the reply's JSON has ``expected`` (or the row's gold) at the dotted ``path``."""

    def __init__(
        self,
        path: str,
        expected: Any = _MISSING,
        *,
        field: str | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(field=field, name=name)
        self.path, self.expected = path, expected
        self.needs_gold = expected is _MISSING

    def check(self, candidate: str, gold: Any, row: dict[str, Any]) -> Any:
        value, error = parse_json_reply(candidate)
        if error:
            return 0.0, error
        got = get_path(value, self.path)
        if got is _MISSING:
            return 0.0, f"no value at {self.path}"
        want = gold if self.expected is _MISSING else self.expected
        same = got == want or (_num(got) and _num(want) and math.isclose(got, want))
        if not same and isinstance(want, str) and not isinstance(got, str):
            same = json.dumps(got) == want or str(got) == want
        return (1.0 if same else 0.0), f"{self.path} = {got!r:.40}, want {want!r:.40}"
