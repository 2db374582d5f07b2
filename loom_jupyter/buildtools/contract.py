"""The protocol's JSON Schema and the page's message tables, derived from ``protocol.py``.

``protocol.py`` is the one source. From it this module makes (with pydantic):

- ``labextension/src/generated/protocol.schema.json``, which the labextension's
  build turns into TypeScript types and validators
  (``labextension/scripts/generate-protocol.mjs``);
- the tables between the ``GENERATED`` markers of ``docs/sidebar-protocol.md``;
- ``labextension/src/generated/trust.ts``: the trust card's words
  (``STATUS_WORDS``, ``LOOSEN_QUESTION``), from :mod:`loom_jupyter.trust`, so every
  front says a folder's trust the same way;
- ``labextension/src/generated/lists.ts``: the page's other lists of Python facts — the
  requests and the reply type of each (``protocol.REPLIES``), the version that added each
  message type (``protocol.added_in``), the tools that change the notebook and the slash
  command table.

Run ``python -m loom_jupyter.buildtools.contract`` after changing a message,
then ``jlpm build`` in ``labextension/`` (and after changing the trust words);
``tests/jupyter/test_protocol_contract.py`` fails while any generated file is stale.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import operator
import re
import sys
import typing
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from loom_jupyter.buildtools.compat import parse_version, snapshot_path
from loom_jupyter.host.wire import protocol as p

if TYPE_CHECKING:
    from collections.abc import Iterator

    from pydantic import TypeAdapter
    from pydantic.json_schema import GenerateJsonSchema

__all__ = [
    "DOC_PATH",
    "LISTS_PATH",
    "SCHEMA_PATH",
    "TRUST_WORDS_PATH",
    "lists",
    "render",
    "schema",
    "tables",
    "trust_words",
    "type_versions",
    "write",
]

SCHEMA_PATH = Path("labextension/src/generated/protocol.schema.json")
DOC_PATH = Path("docs/sidebar-protocol.md")
TRUST_WORDS_PATH = Path("labextension/src/generated/trust.ts")
LISTS_PATH = Path("labextension/src/generated/lists.ts")
_VALUES = (
    p.Envelope,
    p.SessionSummary,
    p.HistoryItem,
    p.ToolItem,
    p.Queued,
    p.SessionRow,
    p.SearchHitItem,
    p.SubtaskItem,
)
_UNIONS = {
    "Inbound": (p.Inbound, "A message from the front (`comm_open` data, then `comm_msg` data)."),
    "Outbound": (p.Outbound, "The fields of a message from the kernel, by `type`."),
}


def schema() -> dict[str, Any]:
    """The whole protocol as one JSON Schema: every message and value under ``$defs``."""
    from pydantic import TypeAdapter

    forms = {name: _tagged(union) for name, (union, _) in _UNIONS.items()}
    forms["values"] = functools.reduce(operator.or_, _VALUES)  # only for their $defs
    mode: Literal["serialization"] = "serialization"  # the wire as the kernel writes it
    adapters = [(name, mode, _adapter(form)) for name, form in forms.items()]
    found, top = TypeAdapter.json_schemas(adapters, schema_generator=_generator())
    defs: dict[str, Any] = dict(top.get("$defs", {}))
    for name, (_, about) in _UNIONS.items():
        defs[name] = {"title": name, "description": about, "type": "object"}
        defs[name].update(found[(name, mode)])
    defs.update(_extras())
    root = {
        "$comment": "Generated from loom_jupyter/host/wire/protocol.py: do not edit.",
        "title": "LoomMessage",
        "description": "Any message on the `loom` comm.",
        "anyOf": [{"$ref": "#/$defs/KernelMessage"}, {"$ref": "#/$defs/Inbound"}],
        "$defs": dict(sorted(defs.items())),
    }
    spec: dict[str, Any] = _wire_only(root, added())
    return spec


_CURRENT = (p.PROTOCOL_MAJOR, p.PROTOCOL_MINOR)


def added() -> dict[str, dict[str, str]]:
    """The fields added in a minor version (``since=`` in ``protocol.py``), by class name:
    field name -> version. Every other field is 1.0. A field added in a minor version needs a
    default (an older side's message lacks it) and a version of this major, not above the
    protocol's own."""
    found: dict[str, dict[str, str]] = {}
    for cls in _dataclasses():
        for f in dataclasses.fields(cls):
            version = f.metadata.get(p.SINCE)
            if version is None:
                continue
            where = f"{cls.__name__}.{f.name}"
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise ValueError(f"{where} is marked since {version} but has no default")
            parsed = parse_version(str(version))
            if parsed is None or not (p.PROTOCOL_MAJOR, 1) <= parsed <= _CURRENT:
                raise ValueError(f"{where}: since {version} in protocol {p.PROTOCOL_VERSION}")
            found.setdefault(cls.__name__, {})[f.name] = str(version)
    return found


def type_versions() -> dict[str, dict[str, str]]:
    """The version that added each message type (``added_in`` in ``protocol.py``; 1.0 when
    not marked), by direction (``"Inbound"``, ``"Outbound"``) and ``type``. A type added in
    a minor version names a version of this major, not above the protocol's own."""
    found: dict[str, dict[str, str]] = {}
    for name, (union, _) in _UNIONS.items():
        for cls in typing.get_args(union):
            version = p.message_since(cls)
            parsed = parse_version(version)
            if parsed is None or not (p.PROTOCOL_MAJOR, 0) <= parsed <= _CURRENT:
                raise ValueError(f"{cls.__name__}: added in {version} in {p.PROTOCOL_VERSION}")
            found.setdefault(name, {})[cls.type] = version
    return found


def _dataclasses() -> list[type]:
    """Every dataclass a message may hold, found through the annotations."""
    seen: dict[type, None] = {}
    todo: list[Any] = [p.Inbound, p.Outbound, *_VALUES]
    while todo:
        hint = todo.pop()
        if dataclasses.is_dataclass(hint) and isinstance(hint, type):
            if hint not in seen:
                seen[hint] = None
                todo.extend(typing.get_type_hints(hint).values())
        else:
            todo.extend(typing.get_args(hint))
    return list(seen)


def _tagged(union: Any) -> Any:
    from typing import Annotated

    from pydantic import Field

    return Annotated[union, Field(discriminator="type")]


def _adapter(form: Any) -> TypeAdapter[Any]:
    """An adapter whose config reaches the dataclasses inside ``form``."""
    from pydantic import ConfigDict, TypeAdapter

    return TypeAdapter(form, config=ConfigDict(use_attribute_docstrings=True))


def _generator() -> type[GenerateJsonSchema]:
    from pydantic.json_schema import GenerateJsonSchema

    class NoFieldTitles(GenerateJsonSchema):
        def field_title_should_be_set(self, schema: Any) -> bool:
            return False  # a field's name is its title; titles would become TS type names

    return NoFieldTitles


def _extras() -> dict[str, Any]:
    """What the classes do not say alone: the stamped kernel message and the version."""
    return {
        "KernelMessage": {
            "title": "KernelMessage",
            "description": "A message from the kernel: its fields and the envelope.",
            "allOf": [{"$ref": "#/$defs/Envelope"}, {"$ref": "#/$defs/Outbound"}],
        },
        "ProtocolVersion": {
            "title": "ProtocolVersion",
            "description": (
                "The protocol's version, `major.minor`: a page sends its major in "
                "`hello.protocol` and its minor in `hello.minor`; a kernel tells its own in "
                "`welcome.protocol`."
            ),
            "const": p.PROTOCOL_VERSION,
        },
    }


def _wire_only(node: Any, added: dict[str, dict[str, str]]) -> Any:
    """The wire's rules: every 1.0 field is always sent (so required, and no defaults); a
    field added in a minor version is not required (an older side does not send it) and
    says since when; the discriminator has no ``mapping`` (ajv finds the branch by each
    one's ``const``)."""
    if isinstance(node, list):
        return [_wire_only(item, added) for item in node]
    if not isinstance(node, dict):
        return node
    kept = {key: _wire_only(value, added) for key, value in node.items() if key != "default"}
    if isinstance(kept.get("properties"), dict):
        newer = added.get(str(kept.get("title")), {})
        kept["required"] = [name for name in kept["properties"] if name not in newer]
        for name, version in newer.items():
            rule = kept["properties"][name]
            about = rule.get("description", "")
            rule["description"] = f"{about} (Protocol {version}; may be absent.)".strip()
    if isinstance(kept.get("discriminator"), dict):
        kept["discriminator"] = {"propertyName": kept["discriminator"]["propertyName"]}
    return kept


# -- the page's tables --------------------------------------------------------------


def tables(spec: dict[str, Any]) -> dict[str, str]:
    """The markdown tables of the page, by marker name."""
    defs = spec["$defs"]
    return {
        "front-to-kernel": _message_table(defs, "Inbound"),
        "kernel-to-front": _message_table(defs, "Outbound"),
        "types": _value_table(defs),
        "slash-commands": _command_table(),
    }


def _message_table(defs: dict[str, Any], union: str) -> str:
    rows = ["| message | fields | meaning |", "|---|---|---|"]
    for ref in defs[union]["oneOf"]:
        body = defs[_name(ref)]
        kind = body["properties"]["type"]["const"]
        fields = {k: v for k, v in body["properties"].items() if k != "type"}
        rows.append(f"| `{kind}` | {_fields(fields)} | {_meaning(body, fields)} |")
    return "\n".join(rows)


def _value_table(defs: dict[str, Any]) -> str:
    rows = ["| type | fields | meaning |", "|---|---|---|"]
    for value in _VALUES:
        body = defs[value.__name__]
        fields = body["properties"]
        rows.append(f"| {value.__name__} | {_fields(fields)} | {_meaning(body, fields)} |")
    return "\n".join(rows)


def _command_table() -> str:
    from loom_jupyter.host.commands.slash import SLASH_COMMANDS

    rows = ["| command | answered by | what it does |", "|---|---|---|"]
    for c in SLASH_COMMANDS:
        by = "the front" if c.front else "the kernel (`command`)"
        rows.append(f"| `{_cell(c.usage)}` | {by} | {_cell(c.description)} |")
    return "\n".join(rows)


def _fields(fields: dict[str, Any]) -> str:
    return ", ".join(f"`{name}`: {_type(rule)}" for name, rule in fields.items()) or "—"


def _meaning(body: dict[str, Any], fields: dict[str, Any]) -> str:
    notes = [
        f"— `{k}`: {rule['description']}" for k, rule in fields.items() if "description" in rule
    ]
    return _cell(" ".join(" ".join([body.get("description", ""), *notes]).split()))


def _type(rule: dict[str, Any]) -> str:
    if "$ref" in rule:
        return _name(rule)
    if "const" in rule:
        return f'`"{rule["const"]}"`'
    if "enum" in rule:
        return "\\|".join(f'`"{choice}"`' for choice in rule["enum"])
    if "anyOf" in rule:
        return "\\|".join(_type(choice) for choice in rule["anyOf"])
    if rule.get("type") == "array":
        return f"[{_type(rule['items'])}]"
    return _SCALARS.get(rule.get("type", ""), "object")


_SCALARS = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "null": "null"}


def _name(ref: dict[str, Any]) -> str:
    return str(ref["$ref"]).rsplit("/", 1)[-1]


def _cell(text: str) -> str:
    return re.sub(r"(?<!\\)\|", r"\\|", text)


# -- the trust card's words --------------------------------------------------------------


def trust_words() -> str:
    """``trust.ts``: the words of :mod:`loom_jupyter.trust` the trust card shows — each
    status (``STATUS_WORDS``) and the loosening checkbox's label (``LOOSEN_QUESTION``)."""
    from loom_jupyter.trust import LOOSEN_QUESTION, STATUS_WORDS

    words = "".join(
        f"  {json.dumps(status)}: {json.dumps(text, ensure_ascii=True)},\n"
        for status, text in STATUS_WORDS.items()
    )
    return (
        "/* Generated by `python -m loom_jupyter.buildtools.contract` from\n"
        " * loom_jupyter/trust.py: do not edit. */\n"
        "import type { TrustView } from './protocol';\n"
        "\n"
        "/** What each trust status means, in the words every front shows (lower case, no\n"
        " * full stop: `loom_jupyter.trust.STATUS_WORDS`). */\n"
        "export const STATUS_WORDS: Record<TrustView['status'], string> = {\n"
        f"{words.rstrip(',' + chr(10))}\n"
        "};\n"
        "\n"
        '/** The label of the trust card\'s loosening checkbox `[data-loom="trust-approval"]`\n'
        " * (`loom_jupyter.trust.LOOSEN_QUESTION`). */\n"
        f"export const LOOSEN_QUESTION = {json.dumps(LOOSEN_QUESTION, ensure_ascii=True)};\n"
    )


# -- the page's lists --------------------------------------------------------------------


def lists() -> str:
    """``lists.ts``: the Python facts the page acts on, so none is a hand copy."""
    from loom_jupyter.host.commands.slash import SLASH_COMMANDS
    from loom_jupyter.tools.approval import NOTEBOOK_CHANGES

    replies: dict[str, str] = {request.type: reply.type for request, reply in p.REPLIES.items()}
    versions = type_versions()
    commands = [dataclasses.asdict(c) for c in SLASH_COMMANDS]
    return (
        "/* Generated by `python -m loom_jupyter.buildtools.contract` from\n"
        " * loom_jupyter/host/wire/protocol.py, loom_jupyter/tools/approval.py and\n"
        " * loom_jupyter/host/commands/registry.py: do not edit. */\n"
        "import type { Inbound, Outbound, SlashCommand } from './protocol';\n"
        "\n"
        "/**\n"
        " * The front's requests and the type of the reply each gets (`protocol.REPLIES`): one\n"
        " * message to that front, or an error `notice`, whose `reply_to` is the request's\n"
        " * `request_id`.\n"
        " */\n"
        f"export const REQUEST_REPLIES = {_ts_object(replies)} as const satisfies "
        "Partial<Record<Inbound['type'], Outbound['type']>>;\n"
        "\n"
        "/**\n"
        " * The protocol version that added each front -> kernel message type\n"
        " * (`protocol.added_in`): a kernel of an older minor version does not read it.\n"
        " */\n"
        f"export const FRONT_SINCE = {_ts_object(versions['Inbound'])} as const satisfies "
        "Record<Inbound['type'], string>;\n"
        "\n"
        "/**\n"
        " * The protocol version that added each kernel -> front message type: what this page\n"
        " * knows; a newer kernel of this major version may send more (skipped, logged once).\n"
        " */\n"
        f"export const KERNEL_SINCE = {_ts_object(versions['Outbound'])} as const satisfies "
        "Record<Outbound['type'], string>;\n"
        "\n"
        '/** The tools that change the notebook: a turn that ran one offers "revert"\n'
        " * (`loom_jupyter.tools.approval.NOTEBOOK_CHANGES`). */\n"
        "export const NOTEBOOK_TOOLS: ReadonlySet<string> = new Set("
        f"{json.dumps(sorted(NOTEBOOK_CHANGES))});\n"
        "\n"
        "/**\n"
        " * The slash commands of this release's kernel, in the order the front lists them\n"
        " * (`loom_jupyter.host.commands.slash.SLASH_COMMANDS`). A page completes from its\n"
        " * kernel's own table (`welcome.commands`); this one is what it offers a 1.0 kernel\n"
        " * (the rows the front answers) and the table its tests use.\n"
        " */\n"
        "export const SLASH_COMMANDS: readonly SlashCommand[] = "
        f"{json.dumps(commands, indent=2, ensure_ascii=True)};\n"
    )


def _ts_object(entries: dict[str, str]) -> str:
    """A TypeScript object literal of string keys and values, one pair a line."""
    pairs = ",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in entries.items())
    return "{\n" + pairs + "\n}"


# -- files ----------------------------------------------------------------------------

_MARKER = re.compile(
    r"(<!-- GENERATED (?P<name>[a-z-]+): [^>]*-->\n)(?P<body>.*?)(<!-- END GENERATED -->)",
    re.DOTALL,
)


def render(root: Path) -> dict[Path, str]:
    """Every generated file's content under the repository ``root``, by path."""
    spec = schema()
    page = (root / DOC_PATH).read_text(encoding="utf-8")
    made = tables(spec)
    missing = set(made) - {m["name"] for m in _MARKER.finditer(page)}
    if missing:
        raise ValueError(f"{DOC_PATH} lacks GENERATED markers for {sorted(missing)}")
    page = _MARKER.sub(lambda m: m[1] + made[m["name"]] + "\n" + m[4], page)
    text = json.dumps(spec, indent=2, ensure_ascii=False) + "\n"
    return {
        SCHEMA_PATH: text,
        snapshot_path(p.PROTOCOL_VERSION): text,  # the current version's, until the next
        DOC_PATH: page,
        TRUST_WORDS_PATH: trust_words(),
        LISTS_PATH: lists(),
    }


def write(root: Path) -> Iterator[Path]:
    """Write the generated files that changed; yields their paths."""
    for path, content in render(root).items():
        target = root / path
        if not target.exists() or target.read_text(encoding="utf-8") != content:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content, encoding="utf-8")
            yield path


def main() -> None:
    """``python -m loom_jupyter.buildtools.contract [REPO]``: regenerate."""
    root = Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    if not (root / DOC_PATH).is_file():
        raise SystemExit(f"run this from the loom_jupyter repository (no {DOC_PATH} here)")
    changed = list(write(root))
    print("\n".join(f"wrote {path}" for path in changed) or "up to date")
    print("now run `jlpm build` in labextension/ (it regenerates the TypeScript)")


if __name__ == "__main__":
    main()
