"""The protocol survives version skew: the current schema breaks no frozen schema of its
major version, and the checker catches every kind of break (synthetic edits of a
snapshot)."""

from __future__ import annotations

import copy
import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from loom_jupyter.buildtools import compat, contract
from loom_jupyter.host.wire import protocol as p

ROOT = Path(__file__).resolve().parents[2]
V1_0 = ROOT / compat.snapshot_path("1.0")
Edit = Callable[[dict[str, Any]], None]


@pytest.fixture(scope="module")
def current() -> dict[str, Any]:
    return contract.schema()


@pytest.fixture
def frozen() -> dict[str, Any]:
    """The 1.0 schema as released (frozen from the last commit before 1.1)."""
    spec: dict[str, Any] = json.loads(V1_0.read_text(encoding="utf-8"))
    return spec


def test_the_current_schema_breaks_no_released_schema_of_its_major(
    current: dict[str, Any],
) -> None:
    found = compat.snapshots(ROOT)
    assert (1, 0) in found, "the 1.0 schema is frozen"
    breaks = compat.check(ROOT, current, p.PROTOCOL_VERSION)
    assert [str(b) for b in breaks] == [], (
        "an incompatible protocol change: make a new field optional with `since=` the next "
        "minor version (and raise PROTOCOL_VERSION's minor), or raise the major version"
    )


def test_every_released_version_up_to_the_current_one_is_frozen() -> None:
    versions = list(compat.snapshots(ROOT))
    current = compat.parse_version(p.PROTOCOL_VERSION)
    assert current is not None
    assert versions[-1] == current, "the current version's schema is in schema-history/"
    assert all(version <= current for version in versions)


def test_a_version_is_major_dot_minor_and_a_bare_integer_is_its_dot_zero() -> None:
    assert compat.parse_version("1.1") == (1, 1)
    assert compat.parse_version(1) == (1, 0)  # what a 1.0 page sends
    assert compat.parse_version("2") == (2, 0)
    assert compat.parse_version("1.12") == (1, 12)
    for nonsense in ("", "one", "1.x", "-1", True, -1, "1.1.1"):
        assert compat.parse_version(nonsense) is None, nonsense


# -- the checker itself: each kind of break, made on a copy of the 1.0 schema ---------------


def _defs(spec: dict[str, Any]) -> dict[str, Any]:
    defs: dict[str, Any] = spec["$defs"]
    return defs


def drop_type(union: str, name: str) -> Edit:
    def edit(spec: dict[str, Any]) -> None:
        refs = _defs(spec)[union]["oneOf"]
        refs[:] = [ref for ref in refs if not ref["$ref"].endswith(f"/{name}")]

    return edit


def drop_field(name: str, field: str) -> Edit:
    def edit(spec: dict[str, Any]) -> None:
        body = _defs(spec)[name]
        del body["properties"][field]
        body["required"].remove(field)

    return edit


def set_rule(name: str, field: str, rule: dict[str, Any]) -> Edit:
    def edit(spec: dict[str, Any]) -> None:
        _defs(spec)[name]["properties"][field] = rule

    return edit


def add_field(name: str, field: str, *, required: bool) -> Edit:
    def edit(spec: dict[str, Any]) -> None:
        body = _defs(spec)[name]
        body["properties"][field] = {"type": "string"}
        if required:
            body["required"].append(field)

    return edit


def unrequire(name: str, field: str) -> Edit:
    def edit(spec: dict[str, Any]) -> None:
        _defs(spec)[name]["required"].remove(field)

    return edit


BREAKS: dict[str, tuple[Edit, str]] = {
    "a kernel message type removed": (
        drop_type("Outbound", "TextMsg"),
        "kernel->front text: the message type was removed",
    ),
    "a front message type removed": (
        drop_type("Inbound", "Search"),
        "front->kernel search: the message type was removed",
    ),
    "a kernel field removed": (
        drop_field("Welcome", "busy"),
        "kernel->front welcome.busy: the field was removed",
    ),
    "a front field removed": (
        drop_field("Send", "client_id"),
        "front->kernel send.client_id: the field was removed",
    ),
    "an envelope field removed": (
        drop_field("Envelope", "seq"),
        "kernel->front envelope.seq: the field was removed",
    ),
    "a kernel field retyped": (
        set_rule("TextMsg", "delta", {"type": "integer"}),
        'kernel->front text.delta: retyped: {"type": "string"} became {"type": "integer"}',
    ),
    "a front field retyped": (
        set_rule("LoadMore", "before_turn", {"type": "string"}),
        "front->kernel load_more.before_turn: retyped",
    ),
    "a field made nullable": (
        set_rule("TextMsg", "turn", {"anyOf": [{"type": "integer"}, {"type": "null"}]}),
        "kernel->front text.turn: retyped",
    ),
    "an enum value added": (
        set_rule(
            "Status",
            "state",
            {"enum": ["idle", "thinking", "waiting-approval", "queued", "waiting-cell", "nap"],
             "type": "string"},
        ),
        "kernel->front status.state: retyped",
    ),
    "a nested value's field retyped": (
        set_rule("HistoryItem", "turn", {"type": "string"}),
        "kernel->front welcome.history[]<0>.turn: retyped",
    ),
    "a new required kernel field": (
        add_field("Welcome", "flavour", required=True),
        "kernel->front welcome.flavour: a new required field",
    ),
    "a new required front field": (
        add_field("Send", "mood", required=True),
        "front->kernel send.mood: a new required field",
    ),
    "a new required field in a nested value": (
        add_field("SessionSummary", "colour", required=True),
        "kernel->front welcome.session<0>.colour: a new required field",
    ),
    "a required kernel field made optional": (
        unrequire("TurnDoneMsg", "text"),
        "kernel->front turn_done.text: a required field became optional",
    ),
}  # fmt: skip


@pytest.mark.parametrize("kind", BREAKS)
def test_the_checker_catches_each_kind_of_break(kind: str, frozen: dict[str, Any]) -> None:
    edit, expected = BREAKS[kind]
    changed = copy.deepcopy(frozen)
    edit(changed)
    found = [str(b) for b in compat.breaking_changes(frozen, changed)]
    assert any(line.startswith(expected) for line in found), found


def test_additions_that_old_readers_ignore_are_no_break(frozen: dict[str, Any]) -> None:
    changed = copy.deepcopy(frozen)
    add_field("Welcome", "flavour", required=False)(changed)  # kernel -> front, optional
    add_field("Sessions", "request_id", required=False)(changed)  # front -> kernel, optional
    add_field("Envelope", "reply_to", required=False)(changed)
    unrequire("Send", "text")(changed)  # a kernel that takes more from a page
    _defs(changed)["Welcome"]["properties"]["busy"]["description"] = "reworded"
    _defs(changed)["Nap"] = {"properties": {"type": {"const": "nap", "type": "string"}}}
    _defs(changed)["Outbound"]["oneOf"].append({"$ref": "#/$defs/Nap"})  # a new message type
    assert compat.breaking_changes(frozen, changed) == []


def test_a_break_counts_only_within_the_same_major_version(
    frozen: dict[str, Any], tmp_path: Path
) -> None:
    history = tmp_path / compat.HISTORY_PATH
    history.mkdir(parents=True)
    (history / "protocol.v1.0.schema.json").write_text(json.dumps(frozen))
    broken = copy.deepcopy(frozen)
    drop_field("Welcome", "busy")(broken)
    assert [b.where for b in compat.check(tmp_path, broken, "1.1")] == ["welcome.busy"]
    assert compat.check(tmp_path, broken, "2.0") == []  # a new major: the kernel refuses 1.x
    with pytest.raises(ValueError, match="no protocol version"):
        compat.check(tmp_path, broken, "one")


# -- `since`: what a minor version adds is optional by construction ------------------------


def test_every_field_of_a_minor_version_is_optional_in_the_schema_and_has_a_default(
    current: dict[str, Any],
) -> None:
    added = contract.added()
    assert added["Welcome"] == {
        "protocol": "1.1",
        "commands": "1.1",
        "kernel_process": "1.3",
        "usage": "1.3",
    }
    assert added["Envelope"] == {"reply_to": "1.1"}
    assert added["Hello"]["minor"] == "1.1"
    assert added["TrustView"] == dict.fromkeys(
        ("digest", "loosens", "with_approval", "note"), "1.2"
    )
    assert added["TrustDecisionMsg"] == {"digest": "1.2", "with_approval": "1.2"}
    assert added["ApprovalModeView"] == dict.fromkeys(("managed", "overrides", "by_policy"), "1.4")
    for cls_name, fields in added.items():
        body = current["$defs"][cls_name]
        assert not set(fields) & set(body["required"]), cls_name
        assert all(f"(Protocol {version}; may be absent.)" in body["properties"][f]["description"]
                   for f, version in fields.items())  # fmt: skip


def test_a_since_field_needs_a_default_and_a_version_of_this_major(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    @dataclasses.dataclass(frozen=True)
    class NoDefault:
        flag: bool = dataclasses.field(metadata={p.SINCE: "1.1"})

    @dataclasses.dataclass(frozen=True)
    class TooNew:
        flag: bool = p.since("9.9", False)

    monkeypatch.setattr(contract, "_dataclasses", lambda: [NoDefault])
    with pytest.raises(
        ValueError, match=r"NoDefault\.flag is marked since 1\.1 but has no default"
    ):
        contract.added()
    monkeypatch.setattr(contract, "_dataclasses", lambda: [TooNew])
    with pytest.raises(
        ValueError, match=rf"TooNew\.flag: since 9\.9 in protocol {p.PROTOCOL_VERSION}"
    ):
        contract.added()


# -- message types a minor version adds: declared, so neither side is sent what it lacks ----


def add_type(spec: dict[str, Any], union: str, name: str, kind: str, **fields: Any) -> None:
    """A new message type ``kind`` (class ``name``) in ``union``, its fields' rules given."""
    properties = {**fields, "type": {"const": kind, "type": "string"}}
    _defs(spec)[name] = {"title": name, "properties": properties, "required": list(properties)}
    _defs(spec)[union]["oneOf"].append({"$ref": f"#/$defs/{name}"})


def test_every_message_type_is_declared_with_the_version_that_added_it(
    current: dict[str, Any],
) -> None:
    versions = contract.type_versions()
    assert versions["Outbound"]["outside_result"] == versions["Inbound"]["outside_call"] == "1.1"
    assert versions["Outbound"]["ping"] == versions["Inbound"]["pong"] == "1.3"
    assert versions["Inbound"]["search"] == versions["Outbound"]["search_results"] == "1.0"
    breaks = compat.check(ROOT, current, p.PROTOCOL_VERSION, versions)
    assert [str(b) for b in breaks] == [], "mark a new message type `added_in` its version"


def test_a_message_type_added_either_way_is_compatible_once_declared_newer(
    frozen: dict[str, Any],
) -> None:
    changed = copy.deepcopy(frozen)
    add_type(changed, "Outbound", "Nap", "nap", minutes={"type": "integer"})  # kernel -> front
    add_type(changed, "Inbound", "NapPlease", "nap_please", request_id={"type": "string"})
    assert compat.breaking_changes(frozen, changed) == []  # neither old reader is broken...
    undeclared = [str(b) for b in compat.version_breaks(frozen, (1, 0), changed, {})]
    assert undeclared == [  # ...once neither side is sent what it does not know
        "front->kernel nap_please: a new message type (not in 1.0): mark it `added_in` the next "
        "minor version (declared 1.0), so an older side is never sent it",
        "kernel->front nap: a new message type (not in 1.0): mark it `added_in` the next minor "
        "version (declared 1.0), so an older side is never sent it",
    ]
    declared = {"Outbound": {"nap": "1.1"}, "Inbound": {"nap_please": "1.1"}}
    assert compat.version_breaks(frozen, (1, 0), changed, declared) == []
    late = {"Inbound": {"search": "1.1"}}  # a type 1.0 has cannot be newer than 1.0
    assert [str(b) for b in compat.version_breaks(frozen, (1, 0), frozen, late)] == [
        "front->kernel search: declared added in 1.1, but 1.0 has it"
    ]


def test_a_message_type_declared_beyond_the_protocol_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    @p.added_in("9.1")
    @dataclasses.dataclass(frozen=True)
    class Nap:
        type: str = "nap"

    monkeypatch.setattr(contract, "_UNIONS", {"Outbound": (Nap | p.Ping, "")})
    with pytest.raises(ValueError, match=rf"Nap: added in 9\.1 in {p.PROTOCOL_VERSION}"):
        contract.type_versions()
