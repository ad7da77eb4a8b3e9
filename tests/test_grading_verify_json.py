"""JSONSchema on jsonschema: each construct valid and invalid, drafts, formats, broken schemas."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

from whileai.errors import ConfigError
from whileai.simulations.verify import JSONField, JSONSchema, schema_errors

pytest.importorskip("jsonschema")

D2020 = "https://json-schema.org/draft/2020-12/schema"


def judged(schema: Any, value: Any, **knobs: Any) -> dict[str, Any]:
    return JSONSchema(schema, **knobs)({"final_text": json.dumps(value)})


DEFS = {"$defs": {"pos": {"type": "integer", "minimum": 1}},
        "type": "object", "properties": {"n": {"$ref": "#/$defs/pos"}}}
TREE = {
    "$schema": D2020,
    "$id": "https://example.com/strict-tree",
    "$dynamicAnchor": "node",
    "$ref": "tree",
    "unevaluatedProperties": False,
    "$defs": {"tree": {
        "$id": "https://example.com/tree",
        "$dynamicAnchor": "node",
        "type": "object",
        "properties": {"data": True,
                       "children": {"type": "array", "items": {"$dynamicRef": "#node"}}},
    }},
}
UNEVALUATED_PROPS = {"allOf": [{"properties": {"a": {"type": "string"}}}],
                     "properties": {"b": True}, "unevaluatedProperties": False}
UNEVALUATED_ITEMS = {"prefixItems": [{"type": "string"}], "unevaluatedItems": False}
IF_THEN = {"if": {"properties": {"kind": {"const": "refund"}}},
           "then": {"required": ["order_id"]}, "else": {"required": ["reason"]}}

# (schema, value, valid): each keyword family once valid, once invalid.
CASES = [
    (DEFS, {"n": 3}, True),
    (DEFS, {"n": 0}, False),
    (TREE, {"children": [{"data": 1}]}, True),
    (TREE, {"children": [{"daat": 1}]}, False),
    (UNEVALUATED_PROPS, {"a": "x", "b": 1}, True),
    (UNEVALUATED_PROPS, {"a": "x", "c": 1}, False),
    (UNEVALUATED_ITEMS, ["x"], True),
    (UNEVALUATED_ITEMS, ["x", 2], False),
    ({"patternProperties": {"^id_": {"type": "integer"}}}, {"id_a": 1}, True),
    ({"patternProperties": {"^id_": {"type": "integer"}}}, {"id_a": "1"}, False),
    (IF_THEN, {"kind": "refund", "order_id": 7}, True),
    (IF_THEN, {"kind": "refund"}, False),
    (IF_THEN, {"kind": "other"}, False),
    ({"dependentRequired": {"card": ["cvv"]}}, {"card": 1, "cvv": 2}, True),
    ({"dependentRequired": {"card": ["cvv"]}}, {"card": 1}, False),
    ({"dependentSchemas": {"card": {"required": ["cvv"]}}}, {"card": 1}, False),
    ({"propertyNames": {"pattern": "^[a-z]+$"}}, {"abc": 1}, True),
    ({"propertyNames": {"pattern": "^[a-z]+$"}}, {"aBc": 1}, False),
    ({"contains": {"type": "integer"}, "minContains": 2}, [1, "a", 2], True),
    ({"contains": {"type": "integer"}, "minContains": 2}, [1, "a"], False),
    ({"contains": {"type": "integer"}, "maxContains": 1}, [1, 2], False),
    ({"prefixItems": [{"type": "integer"}], "items": False}, [1], True),
    ({"prefixItems": [{"type": "integer"}], "items": False}, [1, 2], False),
    ({"oneOf": [{"type": "integer"}, {"minimum": 2}]}, 1, True),
    ({"oneOf": [{"type": "integer"}, {"minimum": 2}]}, 3, False),
    ({"not": {"type": "null"}}, None, False),
    ({"enum": [1, "a"]}, True, False),
    ({"const": 0}, False, False),
    ({"uniqueItems": True}, [1, 1.0], False),
    ({"type": "integer"}, 1.0, True),
    ({"multipleOf": 0.1}, 0.3, True),
]


@pytest.mark.parametrize(("schema", "value", "valid"), CASES)
def test_json_schema_constructs(schema: Any, value: Any, valid: bool) -> None:
    out = judged(schema, value)
    assert out["reward"] == (1.0 if valid else 0.0), out["reason"]


def test_agreement_on_the_case_table() -> None:
    hits = sum(judged(s, v)["reward"] == (1.0 if ok else 0.0) for s, v, ok in CASES)
    assert hits == len(CASES)


def test_the_draft_the_schema_declares_is_the_one_applied() -> None:
    # "items" as an array is draft-07's tuple form; 2020-12 (the default) rejects it as a schema
    d7 = {"$schema": "http://json-schema.org/draft-07/schema#",
          "items": [{"type": "integer"}], "additionalItems": False}
    assert judged(d7, [1])["reward"] == 1.0
    assert judged(d7, [1, 2])["reward"] == 0.0
    assert judged({k: v for k, v in d7.items() if k != "$schema"}, [1])["reward"] is None
    # draft-04's boolean exclusiveMinimum
    d4 = {"$schema": "http://json-schema.org/draft-04/schema#", "minimum": 3,
          "exclusiveMinimum": True}
    assert judged(d4, 4)["reward"] == 1.0
    assert judged(d4, 3)["reward"] == 0.0
    # draft 2019-09 knows dependentRequired too
    d19 = {"$schema": "https://json-schema.org/draft/2019-09/schema",
           "dependentRequired": {"a": ["b"]}}
    assert judged(d19, {"a": 1})["reward"] == 0.0


def test_formats_are_checked_only_when_asked() -> None:
    schema = {"type": "object", "properties": {
        "email": {"format": "email"}, "when": {"format": "date-time"},
        "ip": {"format": "ipv4"}, "id": {"format": "uuid"}}}
    good = {"email": "a@b.co", "when": "2026-01-02T03:04:05Z", "ip": "10.0.0.1",
            "id": "12345678-1234-5678-1234-567812345678"}
    assert judged(schema, good, formats=True)["reward"] == 1.0
    for key, bad in (("email", "nobody"), ("when", "yesterday"), ("ip", "300.1.1.1"),
                     ("id", "xyz")):
        out = judged(schema, {**good, key: bad}, formats=True)
        assert out["reward"] == 0.0, key
        assert f"$.{key}" in out["reason"]
        assert "'format'" in out["reason"]
        assert judged(schema, {**good, key: bad})["reward"] == 1.0  # an annotation by default


def test_a_format_no_checker_knows_is_unjudged_when_formats_are_asked() -> None:
    schema = {"type": "string", "format": "order-number"}
    assert judged(schema, "A-1")["reward"] == 1.0
    out = judged(schema, "A-1", formats=True)
    assert out["reward"] is None
    assert "order-number" in out["reason"]
    assert judged({**schema, "maxLength": 1}, "A-1", formats=True)["reward"] == 0.0


def test_reason_names_the_first_failing_path_and_keyword() -> None:
    schema = {"type": "object", "properties": {
        "items": {"type": "array", "items": {"enum": ["a", "b"]}}}}
    out = judged(schema, {"items": ["a", "c"]})
    assert out["reason"].startswith("$.items[1]: 'c' is not one of ['a', 'b']")
    assert "keyword 'enum' at #/properties/items/items/enum" in out["reason"]
    assert "keyword 'required'" in judged({"required": ["id"]}, {})["reason"]


@pytest.mark.parametrize("schema", [
    {"type": "mystery"},
    {"minimum": "three"},
    {"$schema": "https://example.com/my-own-draft", "type": "object"},
    {"$ref": "#/$defs/missing"},
    {"$ref": "https://example.com/remote.json"},  # never fetched: no network in a verifier
    ["not", "a", "schema"],
])
def test_an_invalid_schema_is_unjudged_with_its_error(schema: Any) -> None:
    out = JSONSchema(schema)({"final_text": "{}"})
    assert out["reward"] is None
    assert "schema" in out["reason"]
    with pytest.raises(ConfigError):
        schema_errors(schema, {})


def test_invalid_schema_reason_says_where() -> None:
    out = judged({"properties": {"n": {"type": "mystery"}}}, {"n": 1})
    assert out["reward"] is None
    assert "'mystery'" in out["reason"]
    assert "#/properties/n/type" in out["reason"]


def test_boolean_schemas_and_unparseable_replies() -> None:
    assert judged(True, {"any": 1})["reward"] == 1.0
    assert judged(False, 1)["reward"] == 0.0
    assert JSONSchema({"type": "object"})({"final_text": "{'a': 1}"})["reward"] == 0.0


def test_json_field_goes_through_the_same_validator() -> None:
    reply = {"final_text": json.dumps({"order": {"id": "A-7", "when": "2026-13-01"}})}
    assert JSONField("order.id", "A-7", schema={"type": "string"})(reply)["reward"] == 1.0
    wrong = JSONField("order.id", "A-7", schema={"type": "string", "maxLength": 2})(reply)
    assert wrong["reward"] == 0.0
    assert "keyword 'maxLength'" in wrong["reason"]
    assert JSONField("order.id", "A-8", schema={"type": "string"})(reply)["reward"] == 0.0
    date = JSONField("order.when", schema={"format": "date"}, formats=True)(reply)
    assert date["reward"] == 0.0
    assert "'format'" in date["reason"]
    assert JSONField("order.id", schema={"$ref": "#/nowhere"})(reply)["reward"] is None
    assert JSONField("order.id")({**reply, "answer": "A-7"})["reward"] == 1.0


def test_schema_errors_lists_every_error_best_first() -> None:
    errs = schema_errors({"required": ["a", "b"], "maxProperties": 0}, {"c": 1})
    assert len(errs) == 3
    assert all("keyword" in e for e in errs)


def test_without_the_extra_construction_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "jsonschema", None)
    with pytest.raises(ImportError, match=r"pip install 'whileai\[json\]'"):
        JSONSchema({"type": "object"})
    with pytest.raises(ImportError, match=r"whileai\[json\]"):
        JSONField("a", 1, schema={"type": "integer"})
    with pytest.raises(ImportError, match=r"whileai\[json\]"):
        schema_errors({}, 1)
    # what needs no schema keeps working without the library
    assert JSONField("a", 1)({"final_text": '{"a": 1}'})["reward"] == 1.0
