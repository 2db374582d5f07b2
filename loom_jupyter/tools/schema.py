"""Tool inputs as typed values: a frozen dataclass per tool, its JSON schema derived by pydantic.

A built-in tool declares its input as a frozen dataclass that subclasses
:class:`ToolInput` (fields in the order the model reads them; an attribute
docstring becomes the field's ``description``; :class:`Limit` says a field's
bounds). :func:`input_schema` is what the model is shown and :func:`parse_input`
turns the model's input into the dataclass, or raises :class:`InvalidInput`
whose sentences say which key is wrong and how (what the model needs to call
again). Both use pydantic (``TypeAdapter``, as ``buildtools/contract.py`` does
for the sidebar protocol), imported only when a tool is first called: a session
opens with the schemas of the built-in inputs read from the committed snapshot
``input_schemas.json`` (``python -m loom_jupyter.buildtools.tool_schemas``
rewrites it; ``tests/tools/test_input_schemas.py`` fails while it is stale).

An MCP server's tool comes with its server's schema, not a dataclass:
:func:`check_mapping` checks such an input against the subset of JSON Schema
that matters most (required keys, types, enums, bounds, unknown keys), in the
same words.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar, cast

if TYPE_CHECKING:
    from pydantic import GetCoreSchemaHandler, TypeAdapter
    from pydantic_core import CoreSchema
    from pydantic_core import ErrorDetails as PydanticError

__all__ = [
    "SNAPSHOT_PATH",
    "InvalidInput",
    "LenientInput",
    "Limit",
    "ToolInput",
    "check_mapping",
    "derive_schema",
    "input_schema",
    "parse_input",
    "without_null_optionals",
]

SNAPSHOT_PATH = Path(__file__).with_name("input_schemas.json")
"""The derived schemas of the built-in inputs, by ``module.QualName`` (generated)."""

T = TypeVar("T")
JsonObject = dict[str, object]

_TYPE_NAMES = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean (true or false)",
    "object": "an object",
    "array": "an array",
    "null": "null",
}


class ToolInput:
    """Base of a tool's input dataclass: unknown keys are refused, attribute docstrings are
    the fields' descriptions (pydantic reads ``__pydantic_config__``; nothing is imported)."""

    __pydantic_config__: ClassVar[dict[str, object]] = {
        "extra": "forbid",
        "use_attribute_docstrings": True,
    }


class LenientInput(ToolInput):
    """Base of an input whose schema allows more keys than it names (a forced tool's, read by
    its own lenient parser: ``submit_plan``, ``submit_verdict``)."""

    __pydantic_config__: ClassVar[dict[str, object]] = {"use_attribute_docstrings": True}


class Limit:
    """Bounds of one field, in an ``Annotated`` type: ``Annotated[str, Limit(min_length=1)]``.

    ``min_length``/``max_length`` bound a string's characters or an array's items,
    ``ge``/``le`` a number. pydantic reads them when it derives a schema (JSON Schema's
    ``minLength``, ``maxItems``, ``minimum``...), so they cost no import before that.
    """

    def __init__(
        self,
        *,
        min_length: int | None = None,
        max_length: int | None = None,
        ge: int | None = None,
        le: int | None = None,
    ) -> None:
        given = {"min_length": min_length, "max_length": max_length, "ge": ge, "le": le}
        self.bounds = {key: value for key, value in given.items() if value is not None}

    def __repr__(self) -> str:
        shown = ", ".join(f"{key}={value}" for key, value in self.bounds.items())
        return f"Limit({shown})"

    def __get_pydantic_core_schema__(
        self, source: type[object], handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        """The field's core schema with these bounds (keys of pydantic-core's str, int and
        tuple schemas)."""
        schema = dict(handler(source))
        schema.update(self.bounds)
        return cast("CoreSchema", schema)


class InvalidInput(Exception):
    """A tool's input that does not fit its schema: ``problems`` say what, one sentence each."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


# --- schemas -------------------------------------------------------------------------


def input_schema(cls: type[object]) -> JsonObject:
    """The JSON schema the model is shown for ``cls``: the committed snapshot's when it holds
    ``cls`` (no pydantic import), else :func:`derive_schema`'s."""
    found = _snapshot().get(_key(cls))
    return found if found is not None else derive_schema(cls)


def derive_schema(cls: type[object]) -> JsonObject:
    """``cls``'s JSON schema as pydantic derives it, made compact for the model: no titles,
    nested inputs inlined, and a field that may be left out (default ``None``) shown as its
    type alone (``null`` is read as leaving it out)."""
    from pydantic.json_schema import GenerateJsonSchema

    class NoTitles(GenerateJsonSchema):
        def field_title_should_be_set(self, schema: object) -> bool:
            return False

    raw = _adapter(cls).json_schema(schema_generator=NoTitles)
    defs = raw.pop("$defs", {})
    compact = _compact(raw, defs)
    assert isinstance(compact, dict)
    return compact


def _key(cls: type[object]) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


@functools.cache
def _snapshot() -> dict[str, JsonObject]:
    try:
        data = json.loads(SNAPSHOT_PATH.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # a broken install: derive instead
        return {}
    return data if isinstance(data, dict) else {}


def _compact(node: object, defs: Mapping[str, object]) -> object:
    if isinstance(node, list):
        return [_compact(item, defs) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str):  # one level of dataclasses inside a dataclass: inlined
        return _compact(defs[ref.rsplit("/", 1)[-1]], defs)
    kept: dict[str, object] = {}
    for key, value in node.items():
        if key == "properties" and isinstance(value, dict):  # by field name ("title" too)
            kept[key] = {name: _compact(field, defs) for name, field in value.items()}
        elif key != "title":
            kept[key] = _compact(value, defs)
    if "properties" in kept:
        kept.pop("description", None)  # the class docstring: for people; the tool describes it
    options = kept.get("anyOf")
    if isinstance(options, list) and len(options) == 2 and {"type": "null"} in options:
        (inner,) = [option for option in options if option != {"type": "null"}]
        if isinstance(inner, dict) and isinstance(inner.get("type"), str):
            del kept["anyOf"]
            if "default" in kept and kept["default"] is None:
                del kept["default"]  # may be left out: its type alone
                kept = {**inner, **kept}
            else:  # may be null: both types
                kept = {**inner, "type": [inner["type"], "null"], **kept}
    return kept


_adapters: dict[type[object], object] = {}


def _adapter(cls: type[T]) -> TypeAdapter[T]:
    """pydantic's validator of ``cls``, built on first use (pydantic loads ~50 ms)."""
    found = _adapters.get(cls)
    if found is None:
        from pydantic import TypeAdapter

        found = _adapters[cls] = TypeAdapter(cls)
    return cast("TypeAdapter[T]", found)


# --- validation ----------------------------------------------------------------------


def parse_input(cls: type[T], raw: object) -> T:
    """The model's input for a tool as ``cls``; :class:`InvalidInput` says what is wrong.

    Checked as JSON, strictly (no ``"3"`` for 3, no ``true`` for 1); an optional key sent
    as ``null`` counts as left out.
    """
    schema = input_schema(cls)
    args = without_null_optionals(raw, schema)
    try:
        text = json.dumps(args, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidInput([f"input must be JSON ({exc})"]) from None
    from pydantic import ValidationError

    try:
        return _adapter(cls).validate_json(text, strict=True)
    except ValidationError as exc:
        raise InvalidInput(_problems(exc.errors(include_url=False), schema)) from None


def without_null_optionals(args: object, schema: Mapping[str, object]) -> object:
    """``args`` without keys that are optional and ``null``.

    Models often send ``"query": null`` for an option they mean to leave out;
    that is read as leaving it out rather than as a type error.
    """
    if not isinstance(args, Mapping):
        return args
    listed = schema.get("required", ())
    required = set(listed) if isinstance(listed, list | tuple) else set()
    return {k: v for k, v in args.items() if v is not None or k in required}


def _problems(errors: list[PydanticError], schema: JsonObject) -> list[str]:
    """pydantic's errors as the sentences :func:`check_mapping` writes, each once; an error
    that an error inside it explains (an array's item) is left out."""
    places = [tuple(error["loc"]) for error in errors]
    problems: list[str] = []
    for error, loc in zip(errors, places, strict=True):
        if any(len(other) > len(loc) and other[: len(loc)] == loc for other in places):
            continue
        sentence = _sentence(error, loc, schema)
        if sentence not in problems:
            problems.append(sentence)
    return problems


def _sentence(error: PydanticError, loc: tuple[int | str, ...], schema: JsonObject) -> str:
    kind, ctx, value = error["type"], error.get("ctx") or {}, error["input"]
    where = _where(loc)
    parent = _where(loc[:-1])
    prefix = "" if parent == "input" else f"{parent}."
    node = _node(schema, loc)
    if kind == "missing":
        return f"missing required key {prefix}{loc[-1]!r}"
    if kind in ("unexpected_keyword_argument", "extra_forbidden"):
        known = _node(schema, loc[:-1]).get("properties")
        names = ", ".join(known) if isinstance(known, dict) and known else "none"
        return f"unknown key {prefix}{loc[-1]!r} (known keys: {names})"
    if kind in ("literal_error", "enum"):
        allowed = ", ".join(repr(v) for v in _enum(node))
        return f"{where} must be one of {allowed}; got {value!r}"
    if kind == "greater_than_equal":
        return f"{where} must be at least {ctx['ge']}; got {value}"
    if kind == "less_than_equal":
        return f"{where} must be at most {ctx['le']}; got {value}"
    if kind == "string_too_short":
        return f"{where} must not be empty"
    if kind == "string_too_long":
        return f"{where} must be at most {ctx['max_length']:,} characters"
    if kind == "too_short":
        return f"{where} must have at least {ctx['min_length']} item(s)"
    if kind == "too_long":
        return f"{where} must have at most {ctx['max_length']:,} item(s)"
    if kind == "json_invalid":
        return f"input could not be read ({error['msg']})"
    if kind.endswith("_type") or kind in ("none_required", "int_from_float"):
        expected = node.get("type")
        if isinstance(expected, str | list):
            return f"{where} must be {_describe_type(expected)}, got {_json_type(value)}"
    return f"{where}: {error['msg']}"


def _where(loc: tuple[int | str, ...]) -> str:
    where = "input"
    for part in loc:
        if isinstance(part, int):
            where += f"[{part}]"
        else:
            where = part if where == "input" else f"{where}.{part}"
    return where


def _node(schema: Mapping[str, object], loc: tuple[int | str, ...]) -> Mapping[str, object]:
    """The part of ``schema`` that describes the value at ``loc`` (``{}`` if none does)."""
    node: object = schema
    for part in loc:
        if not isinstance(node, Mapping):
            return {}
        if isinstance(part, int):
            node = node.get("items")
        else:
            properties = node.get("properties")
            node = properties.get(part) if isinstance(properties, Mapping) else None
    return node if isinstance(node, Mapping) else {}


def _enum(node: Mapping[str, object]) -> list[object]:
    values = node.get("enum")
    return list(values) if isinstance(values, list) else []


# --- an MCP server's schema ------------------------------------------------------------


def check_mapping(args: object, schema: Mapping[str, object]) -> Mapping[str, object]:
    """``args`` checked against an outside schema (an MCP server's) by ``jsonschema`` (the
    draft the schema names, else 2020-12), optional ``null`` keys left out;
    :class:`InvalidInput` says what is wrong in the words the model reads for Loom's own
    tools. A schema that is not valid JSON Schema is the server's to apply: left unchecked."""
    kept = without_null_optionals(args, schema)
    validator = _validator(json.dumps(schema, default=str))
    if validator is not None:
        problems = _schema_problems(list(validator.iter_errors(kept)))
        if problems:
            raise InvalidInput(problems)
    if not isinstance(kept, Mapping):
        raise InvalidInput([f"input must be an object, got {_json_type(kept)}"])
    return kept


@functools.lru_cache(maxsize=256)
def _validator(schema_json: str) -> Any:
    """The validator for a schema (as JSON, keys in their order: the words name properties
    so); ``None`` for one that is not valid JSON Schema. ``jsonschema`` is imported on the
    first outside call."""
    import jsonschema
    from jsonschema.validators import validator_for

    schema = json.loads(schema_json)
    cls = validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError:
        return None
    return cls(schema)


def _schema_problems(errors: list[Any]) -> list[str]:
    """Each error in words, in the order of the places they are about; a value of the
    wrong type is told once, without what its other rules say."""
    errors.sort(key=lambda e: [str(part) for part in e.absolute_path])
    mistyped = {tuple(e.absolute_path) for e in errors if e.validator == "type"}
    problems: list[str] = []
    for error in errors:
        path = tuple(error.absolute_path)
        if path in mistyped and error.validator != "type":
            continue
        for words in _words(error, path):
            if words not in problems:
                problems.append(words)
    return problems


def _words(error: Any, path: tuple[int | str, ...]) -> list[str]:
    where = _where(path)
    prefix = "" if not path else f"{where}."
    value, rule, kind = error.instance, error.validator_value, error.validator
    if kind == "type":
        return [f"{where} must be {_describe_type(rule)}, got {_json_type(value)}"]
    if kind == "enum":
        allowed = ", ".join(repr(v) for v in rule)
        return [f"{where} must be one of {allowed}; got {value!r}"]
    if kind == "required":
        return [f"missing required key {prefix}{key!r}" for key in rule if key not in value]
    if kind == "additionalProperties" and isinstance(value, dict):
        properties = error.schema.get("properties", {})
        known = ", ".join(properties) or "none"
        return [
            f"unknown key {prefix}{key!r} (known keys: {known})"
            for key in value
            if key not in properties
        ]
    bounds = {
        "minimum": f"{where} must be at least {rule}; got {value}",
        "maximum": f"{where} must be at most {rule}; got {value}",
        "minLength": f"{where} must not be empty" if rule == 1 else "",
        "maxLength": f"{where} must be at most {rule:,} characters"
        if isinstance(rule, int)
        else "",
    }
    return [bounds.get(kind) or f"{where}: {error.message}"]


# --- words -------------------------------------------------------------------------------


def _describe_type(expected: str | list[str]) -> str:
    if isinstance(expected, list):
        return " or ".join(_TYPE_NAMES.get(one, one) for one in expected)
    return _TYPE_NAMES.get(expected, expected)


def _json_type(value: object) -> str:
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


def _preview(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
