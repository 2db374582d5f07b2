"""Is the protocol's schema still readable by the other side of an older release?

Each released protocol version's JSON Schema is frozen under
``labextension/schema-history/`` (``protocol.v1.0.schema.json`` ...). Within one major
version a page and a kernel of different minor versions must understand each other, so
:func:`breaking_changes` compares a frozen schema with the current one and names every
change that would break one of them (marimo's way: a diff of the wire schema that fails
on an incompatible change, not only on a stale file):

- a message type gone (in either direction);
- a field gone, or its type changed (its accepted values differ: wider breaks the old
  reader, narrower the new one);
- a field newly required: a kernel -> front field the older kernel does not send, or a
  front -> kernel field the older page does not send (a field added in a minor version is
  optional by construction: ``since=`` in ``protocol.py``);
- a kernel -> front field once required that is now optional (an older page requires it).

New message types and new optional fields are compatible, each way: a message type a minor
version adds is declared with the version that added it (``added_in`` in ``protocol.py``),
and :func:`version_breaks` holds those declarations to every frozen schema (a type the
frozen version lacks is declared newer than it; one it has, no newer). From them a page
sends a type only to a kernel that reads it, the kernel sends a type only to a page whose
``hello`` says a version that has it, and a page skips (logging it once) a type it does not
know from a newer kernel of its major. A change of major version is compatible with nothing,
and is not checked: the kernel refuses a page of another major with a notice.

``tests/jupyter/test_protocol_compat.py`` runs this against every frozen snapshot of the
current major.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

__all__ = [
    "HISTORY_PATH",
    "Break",
    "breaking_changes",
    "check",
    "parse_version",
    "snapshot_path",
    "snapshots",
    "version_breaks",
]

HISTORY_PATH = Path("labextension/schema-history")
"""Where the released schemas are frozen, one file a version."""
_SNAPSHOT = re.compile(r"protocol\.v(?P<major>\d+)\.(?P<minor>\d+)\.schema\.json")
_VERSION = re.compile(r"(?P<major>\d+)(?:\.(?P<minor>\d+))?")

Direction = Literal["kernel->front", "front->kernel"]


@dataclass(frozen=True)
class Break:
    """One incompatible change, and where it is."""

    direction: Direction
    where: str
    """The message type and the path to the field, e.g. ``welcome.state.detail``."""
    what: str

    def __str__(self) -> str:
        return f"{self.direction} {self.where}: {self.what}"


def parse_version(version: str | int) -> tuple[int, int] | None:
    """``"1.1"`` -> ``(1, 1)``; the integer ``1`` of a 1.0 page -> ``(1, 0)``; None when it
    is no version."""
    if isinstance(version, bool):
        return None
    if isinstance(version, int):
        return (version, 0) if version >= 0 else None
    found = _VERSION.fullmatch(version.strip())
    if found is None:
        return None
    return int(found["major"]), int(found["minor"] or 0)


def snapshot_path(version: str) -> Path:
    """Where version ``"1.1"``'s schema is frozen (relative to the repository)."""
    return HISTORY_PATH / f"protocol.v{version}.schema.json"


def snapshots(root: Path) -> dict[tuple[int, int], dict[str, Any]]:
    """Every frozen schema under ``root``'s history folder, by version, oldest first."""
    found: dict[tuple[int, int], dict[str, Any]] = {}
    for path in sorted((root / HISTORY_PATH).glob("protocol.v*.schema.json")):
        name = _SNAPSHOT.fullmatch(path.name)
        if name is not None:
            version = int(name["major"]), int(name["minor"])
            found[version] = json.loads(path.read_text(encoding="utf-8"))
    return dict(sorted(found.items()))


def breaking_changes(old: dict[str, Any], new: dict[str, Any]) -> list[Break]:
    """What in ``new`` breaks a reader or writer of ``old`` (both whole protocol schemas,
    as ``contract.schema()`` makes them); empty when ``new`` only adds."""
    found: list[Break] = []
    for union, direction in _SIDES:
        then, now = _messages(old, union), _messages(new, union)
        for kind in then.keys() - now.keys():
            found.append(Break(direction, kind, "the message type was removed"))
        for kind in then.keys() & now.keys():
            _Compare(old, new, direction, found).node(then[kind], now[kind], kind)
    if "Envelope" in old["$defs"]:
        envelope = _Compare(old, new, "kernel->front", found)
        envelope.node(old["$defs"]["Envelope"], new["$defs"].get("Envelope", {}), "envelope")
    return sorted(found, key=str)


_SIDES: tuple[tuple[str, Direction], ...] = (
    ("Outbound", "kernel->front"),
    ("Inbound", "front->kernel"),
)


def version_breaks(
    old: dict[str, Any],
    old_version: tuple[int, int],
    new: dict[str, Any],
    versions: dict[str, dict[str, str]],
) -> list[Break]:
    """Where the declared version of a message type of ``new`` (``versions``: by union,
    ``"Inbound"`` or ``"Outbound"``, then by ``type``; 1.0 when absent) disagrees with the
    frozen schema ``old`` of version ``old_version``: a type ``old`` lacks must be declared
    newer than it (an older side does not know it), one ``old`` has no newer."""
    found: list[Break] = []
    then = f"{old_version[0]}.{old_version[1]}"
    for union, direction in _SIDES:
        known = _messages(old, union).keys()
        for kind in _messages(new, union):
            said = versions.get(union, {}).get(kind, "1.0")
            declared = parse_version(said) or (0, 0)
            if kind in known and declared > old_version:
                found.append(Break(direction, kind, f"declared added in {said}, but {then} has it"))
            elif kind not in known and declared <= old_version:
                found.append(
                    Break(
                        direction,
                        kind,
                        f"a new message type (not in {then}): mark it `added_in` the next minor "
                        f"version (declared {said}), so an older side is never sent it",
                    )
                )
    return sorted(found, key=str)


def _messages(spec: dict[str, Any], union: str) -> dict[str, dict[str, Any]]:
    """A direction's messages by their ``type``."""
    defs = spec["$defs"]
    bodies = [defs[str(ref["$ref"]).rsplit("/", 1)[-1]] for ref in defs[union]["oneOf"]]
    return {body["properties"]["type"]["const"]: body for body in bodies}


_PROSE = frozenset({"title", "description", "$comment", "default", "examples"})


class _Compare:
    """One walk of an old and a new rule side by side, for one direction."""

    def __init__(
        self, old: dict[str, Any], new: dict[str, Any], direction: Direction, out: list[Break]
    ) -> None:
        self._defs = old["$defs"], new["$defs"]
        self._direction = direction
        self._out = out
        self._seen: set[tuple[int, int]] = set()

    def node(self, old: dict[str, Any], new: dict[str, Any], where: str) -> None:
        old, new = self._resolve(old, 0), self._resolve(new, 1)
        if (id(old), id(new)) in self._seen:  # a recursive type: compared once
            return
        self._seen.add((id(old), id(new)))
        if "properties" in old and "properties" in new:
            self._object(old, new, where)
        elif "items" in old and "items" in new:
            self.node(old["items"], new["items"], f"{where}[]")
        elif _alternatives(old) and _alternatives(new):
            then, now = _alternatives(old), _alternatives(new)
            if len(then) != len(now):
                self._break(where, f"retyped: {_shape(old)} became {_shape(new)}")
                return
            for choice, (a, b) in enumerate(zip(then, now, strict=True)):
                self.node(a, b, f"{where}<{choice}>")
        elif _rules(old) != _rules(new) or _kind(old) != _kind(new):
            self._break(where, f"retyped: {_shape(old)} became {_shape(new)}")

    def _object(self, old: dict[str, Any], new: dict[str, Any], where: str) -> None:
        fields_then, fields_now = old["properties"], new["properties"]
        required_then, required_now = set(old.get("required", ())), set(new.get("required", ()))
        for name in fields_then.keys() - fields_now.keys():
            self._break(f"{where}.{name}", "the field was removed")
        for name in (fields_now.keys() - fields_then.keys()) & required_now:
            self._break(
                f"{where}.{name}",
                "a new required field (mark it `since=` the next minor version: optional)",
            )
        for name in fields_then.keys() & fields_now.keys():
            at = f"{where}.{name}"
            if name not in required_then and name in required_now:
                self._break(at, "an optional field became required")
            if self._direction == "kernel->front" and name in required_then - required_now:
                self._break(at, "a required field became optional (an older page requires it)")
            self.node(fields_then[name], fields_now[name], at)
        if old.get("additionalProperties", True) != new.get("additionalProperties", True):
            self._break(where, "its additionalProperties changed")

    def _resolve(self, rule: dict[str, Any], side: int) -> dict[str, Any]:
        while "$ref" in rule:
            rule = self._defs[side].get(str(rule["$ref"]).rsplit("/", 1)[-1], {})
        return rule

    def _break(self, where: str, what: str) -> None:
        self._out.append(Break(self._direction, where, what))


def _alternatives(rule: dict[str, Any]) -> list[dict[str, Any]]:
    choices: list[dict[str, Any]] = rule.get("anyOf") or rule.get("oneOf") or []
    return choices


def _rules(rule: dict[str, Any]) -> dict[str, Any]:
    """A rule without its prose: what it accepts."""
    return {key: value for key, value in rule.items() if key not in _PROSE}


def _kind(rule: dict[str, Any]) -> str:
    return "object" if "properties" in rule else "array" if "items" in rule else "value"


def _shape(rule: dict[str, Any]) -> str:
    return json.dumps(_rules(rule), sort_keys=True)[:120]


def check(
    root: Path,
    spec: dict[str, Any],
    version: str | int,
    versions: dict[str, dict[str, str]] | None = None,
) -> list[Break]:
    """Every break of ``spec`` (protocol ``version``) against the frozen schemas of the same
    major version under ``root``; a snapshot of another major is not held against it. With
    ``versions`` (the version that added each message type, ``contract.type_versions()``),
    also every declaration a frozen schema contradicts (:func:`version_breaks`)."""
    current = parse_version(version)
    if current is None:
        raise ValueError(f"{version!r} is no protocol version (major.minor)")
    found: list[Break] = []
    for frozen, old in snapshots(root).items():
        if frozen[0] == current[0] and frozen <= current:
            tag = f"(against {frozen[0]}.{frozen[1]})"
            breaks = breaking_changes(old, spec)
            if versions is not None:
                breaks += version_breaks(old, frozen, spec, versions)
            found += [Break(b.direction, b.where, f"{b.what} {tag}") for b in breaks]
    return found
