"""A small validator for the JSON schemas of tool inputs.

It checks what the model most often gets wrong (missing required keys, wrong
types, values outside an enum, unknown keys) and explains each problem in a
sentence, so the model can correct its call. It covers the subset of JSON
Schema the built-in tools use; no dependency is needed for that.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["object_schema", "validate_input", "without_null_optionals"]

_TYPE_NAMES = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean (true or false)",
    "object": "an object",
    "array": "an array",
    "null": "null",
}


def object_schema(
    properties: Mapping[str, Mapping[str, Any]], *, required: tuple[str, ...] = ()
) -> dict[str, Any]:
    """A closed object schema (no extra keys) with the given properties."""
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {k: dict(v) for k, v in properties.items()},
        "additionalProperties": False,
    }
    if required:
        schema["required"] = list(required)
    return schema


def without_null_optionals(args: Any, schema: Mapping[str, Any]) -> Any:
    """``args`` without keys that are optional and ``null``.

    Models often send ``"query": null`` for an option they mean to leave out;
    that is read as leaving it out rather than as a type error.
    """
    if not isinstance(args, Mapping):
        return args
    required = set(schema.get("required", ()))
    return {k: v for k, v in args.items() if v is not None or k in required}


def validate_input(args: Any, schema: Mapping[str, Any]) -> list[str]:
    """Every problem of ``args`` against ``schema``, as sentences (empty when valid)."""
    return _check(args, schema, "input")


def _check(value: Any, schema: Mapping[str, Any], where: str) -> list[str]:
    expected = schema.get("type")
    if expected is not None and not _is_type(value, expected):
        return [f"{where} must be {_describe_type(expected)}, got {_json_type(value)}"]
    problems: list[str] = []
    if "enum" in schema and value not in schema["enum"]:
        allowed = ", ".join(repr(v) for v in schema["enum"])
        problems.append(f"{where} must be one of {allowed}; got {value!r}")
    problems += _check_bounds(value, schema, where)
    if isinstance(value, dict):
        problems += _check_object(value, schema, where)
    if isinstance(value, list) and "items" in schema:
        for index, item in enumerate(value):
            problems += _check(item, schema["items"], f"{where}[{index}]")
    return problems


def _check_object(value: dict[str, Any], schema: Mapping[str, Any], where: str) -> list[str]:
    properties: Mapping[str, Any] = schema.get("properties", {})
    prefix = "" if where == "input" else f"{where}."
    problems = [
        f"missing required key {prefix}{key!r}"
        for key in schema.get("required", ())
        if key not in value
    ]
    for key, item in value.items():
        if key in properties:
            problems += _check(item, properties[key], f"{prefix}{key}")
        elif schema.get("additionalProperties", True) is False:
            known = ", ".join(properties) or "none"
            problems.append(f"unknown key {prefix}{key!r} (known keys: {known})")
    return problems


def _check_bounds(value: Any, schema: Mapping[str, Any], where: str) -> list[str]:
    problems: list[str] = []
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            problems.append(f"{where} must be at least {schema['minimum']}; got {value}")
        if "maximum" in schema and value > schema["maximum"]:
            problems.append(f"{where} must be at most {schema['maximum']}; got {value}")
    if isinstance(value, str) and len(value) < schema.get("minLength", 0):
        problems.append(f"{where} must not be empty")
    if isinstance(value, str) and len(value) > schema.get("maxLength", len(value)):
        problems.append(f"{where} must be at most {schema['maxLength']:,} characters")
    return problems


def _is_type(value: Any, expected: str | list[str]) -> bool:
    if isinstance(expected, list):
        return any(_is_type(value, one) for one in expected)
    checks = {
        "string": lambda v: isinstance(v, str),
        "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
        "boolean": lambda v: isinstance(v, bool),
        "object": lambda v: isinstance(v, dict),
        "array": lambda v: isinstance(v, list),
        "null": lambda v: v is None,
    }
    check = checks.get(expected)
    return True if check is None else bool(check(value))


def _describe_type(expected: str | list[str]) -> str:
    if isinstance(expected, list):
        return " or ".join(_TYPE_NAMES.get(one, one) for one in expected)
    return _TYPE_NAMES.get(expected, expected)


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    names = {
        str: "a string",
        int: "an integer",
        float: "a number",
        dict: "an object",
        list: "an array",
    }
    for kind, name in names.items():
        if isinstance(value, kind):
            return f"{name} ({_preview(value)})" if kind in (str, int, float) else name
    return type(value).__name__


def _preview(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
