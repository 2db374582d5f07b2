"""An MCP server's input schema is applied by jsonschema (issue 41.8): every rule of the
draft it names, told in the words Loom's own tools use."""

from __future__ import annotations

import pytest

from loom_jupyter.tools.schema import InvalidInput, check_mapping

SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {
        "sku": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]+$"},
        "amount": {"anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}]},
        "where": {"$ref": "#/$defs/place"},
        "tags": {"type": "array", "items": {"type": "string", "minLength": 1}},
    },
    "required": ["sku"],
    "additionalProperties": False,
    "$defs": {"place": {"type": "object", "required": ["city"], "properties": {"city": {}}}},
}


def problems(args: object) -> list[str]:
    with pytest.raises(InvalidInput) as raised:
        check_mapping(args, SCHEMA)
    return raised.value.problems


def test_a_valid_call_passes_with_its_optional_nulls_left_out() -> None:
    assert check_mapping({"sku": "ABC-12", "amount": None}, SCHEMA) == {"sku": "ABC-12"}


def test_patterns_alternatives_and_references_are_applied() -> None:
    found = problems({"sku": "abc", "amount": 0, "where": {}, "tags": [""], "x": 1})
    assert any(p.startswith("sku: 'abc' does not match") for p in found), found
    assert any(p.startswith("amount: 0 is not valid under any") for p in found), found
    assert "missing required key where.'city'" in found
    assert "tags[0] must not be empty" in found
    assert "unknown key 'x' (known keys: sku, amount, where, tags)" in found


def test_a_missing_key_and_a_wrong_type_are_told_once_each() -> None:
    assert problems({"tags": "a"}) == [
        "missing required key 'sku'",
        "tags must be an array, got a string ('a')",
    ]


def test_a_schema_that_is_not_json_schema_is_left_to_its_server() -> None:
    broken = {"type": "object", "properties": {"a": {"type": 5}}}
    assert check_mapping({"a": 1}, broken) == {"a": 1}
    with pytest.raises(InvalidInput, match="input must be an object"):
        check_mapping(["a"], broken)
