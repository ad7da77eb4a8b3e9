"""JSON verifiers: the reply parses (``JSONValid``), fits a schema (``JSONSchema``), or carries
the right value at a path (``JSONField``). Code fences (```json) around the JSON are ignored.

Schemas are checked by the ``jsonschema`` library (extra ``json``), under the draft the schema
declares in ``$schema`` (2020-12 when it declares none): every vocabulary, ``$ref``/``$defs``,
``$dynamicRef``, ``unevaluatedProperties``/``unevaluatedItems``, and ``format`` when asked
(``formats=True``). A schema that is itself invalid, or a ``$ref`` that cannot be resolved (remote
references are never fetched), gives ``reward=None`` with the schema's error, never a score.

>>> JSONSchema({"type": "object", "required": ["id"]})({"final_text": '{"id": 4}'})["reward"]
1.0
>>> schema_errors({"type": "integer", "minimum": 3}, 2)
["$: 2 is less than the minimum of 3 (keyword 'minimum' at #/minimum)"]
"""

from __future__ import annotations

import json
import math
import re
from fractions import Fraction
from typing import Any

from whileai.errors import ConfigError
from whileai.simulations.judge.verify.base import _MISSING, Verifier, get_path

__all__ = ["JSONField", "JSONSchema", "JSONValid", "SchemaCheck", "parse_json_reply",
           "schema_errors"]

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


def _jsonschema() -> Any:
    try:
        import jsonschema  # type: ignore[import-untyped,unused-ignore]
    except ImportError as exc:
        raise ImportError(
            "JSON-schema checks need the jsonschema library: pip install 'whileai[json]'"
        ) from exc
    return jsonschema


def _formats(schema: Any) -> set[str]:
    """Every ``format`` named anywhere in ``schema``."""
    found: set[str] = set()
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if isinstance(node.get("format"), str):
                found.add(node["format"])
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return found


def _decimal_multiple_of(lib: Any) -> Any:
    """``multipleOf`` on the numbers as written: 0.3 is a multiple of 0.1 (in binary it is not)."""
    original = lib._keywords.multipleOf

    def multiple_of(validator: Any, step: Any, instance: Any, schema: Any) -> Any:
        if validator.is_type(instance, "number") and (isinstance(step, float)
                                                      or isinstance(instance, float)):
            try:
                exact = Fraction(repr(instance)) / Fraction(repr(step))
            except (ValueError, ZeroDivisionError):  # inf, nan: the library's rule
                exact = None
            if exact is not None:
                if exact.denominator != 1:
                    yield lib.ValidationError(f"{instance!r} is not a multiple of {step}")
                return
        yield from original(validator, step, instance, schema)

    return multiple_of


def _where(path: Any) -> str:
    return "#/" + "/".join(str(p) for p in path)


class SchemaCheck:
    """One schema compiled once: ``errors(value)`` lists how a value breaks it.

    Every schema use in the verifiers goes through this class. ``problem`` is set (and
    ``errors`` raises ``ConfigError``) when the schema itself is invalid or names an unknown
    ``$schema``.

    Raises:
        ImportError: ``jsonschema`` is not installed (``pip install 'whileai[json]'``).

    >>> SchemaCheck({"type": "string", "maxLength": 2}).errors("abc")
    ["$: 'abc' is too long (keyword 'maxLength' at #/maxLength)"]
    """

    def __init__(self, schema: Any, *, formats: bool = False) -> None:
        lib = _jsonschema()
        self.schema, self.formats = schema, formats
        self.problem: str | None = None
        self.unchecked: tuple[str, ...] = ()
        self._lib, self._validator = lib, None
        if not isinstance(schema, dict | bool):
            self.problem = f"a schema is a dict or a bool, got {type(schema).__name__}"
            return
        cls = lib.validators.validator_for(schema, default=None)
        if cls is None:
            if not isinstance(schema, dict) or "$schema" not in schema:
                cls = lib.Draft202012Validator
            else:
                self.problem = f"unknown $schema {schema['$schema']!r}"
                return
        try:
            cls.check_schema(schema)
        except lib.SchemaError as exc:
            self.problem = f"{exc.message} (at {_where(exc.schema_path)} of the metaschema, " \
                           f"schema location {_where(exc.path)})"
            return
        checker = cls.FORMAT_CHECKER if formats else None
        if "multipleOf" in cls.VALIDATORS:
            cls = lib.validators.extend(cls, {"multipleOf": _decimal_multiple_of(lib)})
        self._validator = cls(schema, format_checker=checker)
        if formats:
            self.unchecked = tuple(sorted(_formats(schema) - set(cls.FORMAT_CHECKER.checkers)))

    def errors(self, value: Any) -> list[str]:
        """Each way ``value`` breaks the schema (empty when it fits), the most relevant first.

        Raises:
            ConfigError: the schema is invalid or a ``$ref`` in it cannot be resolved.
        """
        if self._validator is None:
            raise ConfigError(f"the schema is invalid: {self.problem}")
        try:
            found = list(self._validator.iter_errors(value))
        except self._lib.exceptions._RefResolutionError as exc:
            raise ConfigError(f"the schema's $ref cannot be resolved: {exc}") from None
        best = self._lib.exceptions.best_match(found)
        ordered = [best, *(e for e in found if e is not best)] if best is not None else []
        return [f"{e.json_path}: {e.message[:160]} (keyword {e.validator!r} at "
                f"{_where(e.schema_path)})" for e in ordered]

    def verdict(self, value: Any) -> tuple[float | None, str]:
        """``(1.0, ...)`` fits, ``(0.0, first error)`` does not, ``(None, why)`` cannot judge."""
        try:
            errs = self.errors(value)
        except ConfigError as exc:
            return None, str(exc)
        if errs:
            more = f" (and {len(errs) - 1} more)" if len(errs) > 1 else ""
            return 0.0, errs[0] + more
        if self.unchecked:
            return None, f"fits, but format(s) {', '.join(self.unchecked)} cannot be checked"
        return 1.0, "fits the schema"


def schema_errors(schema: Any, value: Any, *, formats: bool = False) -> list[str]:
    """Every way ``value`` breaks ``schema`` (empty when it fits), each with its path and keyword.

    Raises:
        ConfigError: the schema is invalid or a ``$ref`` in it cannot be resolved.
        ImportError: ``jsonschema`` is not installed (``pip install 'whileai[json]'``).
    """
    return SchemaCheck(schema, formats=formats).errors(value)


class JSONValid(Verifier):
    """1 when the reply is valid JSON."""

    needs_gold = False

    def check(self, candidate: str, gold: Any, row: dict[str, Any]) -> Any:
        _, error = parse_json_reply(candidate)
        return (0.0, error) if error else (1.0, "valid JSON")


class JSONSchema(Verifier):
    """1 when the reply is JSON that fits ``schema``; the reason names the first failing path
    and keyword. ``formats=True`` asserts ``format`` (dates, emails, URIs, ...).

    Raises:
        ImportError: ``jsonschema`` is not installed (``pip install 'whileai[json]'``).
    """

    needs_gold = False
    version = "2"

    def __init__(
        self, schema: dict[str, Any] | bool, *, formats: bool = False, name: str | None = None
    ) -> None:
        super().__init__(name=name)
        self.schema = schema
        self._check = SchemaCheck(schema, formats=formats)

    def check(self, candidate: str, gold: Any, row: dict[str, Any]) -> Any:
        if self._check.problem is not None:
            return None, f"the schema is invalid: {self._check.problem}"
        value, error = parse_json_reply(candidate)
        if error:
            return 0.0, error
        return self._check.verdict(value)


class JSONField(Verifier):
    """1 when the reply's JSON has ``expected`` (or the row's gold) at the dotted ``path``.

    With ``schema=``, the value at ``path`` must also fit that schema (checked as ``JSONSchema``
    checks, which needs the ``json`` extra); with a schema and no ``expected``, only the schema is
    checked.
    """

    def __init__(
        self,
        path: str,
        expected: Any = _MISSING,
        *,
        schema: dict[str, Any] | bool | None = None,
        formats: bool = False,
        field: str | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(field=field, name=name)
        self.path, self.expected = path, expected
        self._check = None if schema is None else SchemaCheck(schema, formats=formats)
        self.needs_gold = expected is _MISSING and schema is None

    def check(self, candidate: str, gold: Any, row: dict[str, Any]) -> Any:
        if self._check is not None and self._check.problem is not None:
            return None, f"the schema is invalid: {self._check.problem}"
        value, error = parse_json_reply(candidate)
        if error:
            return 0.0, error
        got = get_path(value, self.path)
        if got is _MISSING:
            return 0.0, f"no value at {self.path}"
        if self._check is not None:
            score, reason = self._check.verdict(got)
            if score != 1.0 or self.expected is _MISSING:
                return score, f"{self.path}: {reason}"
        want = gold if self.expected is _MISSING else self.expected
        same = got == want or (_num(got) and _num(want) and math.isclose(got, want))
        if not same and isinstance(want, str) and not isinstance(got, str):
            same = json.dumps(got) == want or str(got) == want
        return (1.0 if same else 0.0), f"{self.path} = {got!r:.40}, want {want!r:.40}"


def _num(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)
