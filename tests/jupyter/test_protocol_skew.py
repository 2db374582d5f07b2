"""Version skew holds both ways (issue 41.5): what a minor version adds — a message type either
way, a request — never reaches a side that does not know it, and a side that gets one anyway
does not break.

- An older page, a newer kernel: the kernel does not send a page a type added after the
  version its hello said; a page built from this code and an older version's frozen schema
  reads every message of this kernel it knows and skips the rest (once in the console,
  never a notice in the chat).
- A newer page, an older kernel: the page sends a type (a request too) only to a kernel whose
  welcome says a version that has it; a kernel that gets a type it does not know answers
  with an error notice that is the reply to that request, so the page's request settles.

The page side runs in node on the page's own protocol module (``labextension/test/skew.mjs``);
each older page gets the validator ajv makes from its version's frozen schema, as the
build makes this page's.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import shutil
import typing
from pathlib import Path
from typing import Any

import pytest
from test_protocol_contract import FRONT, GENERATED, INBOUND, OUTBOUND, run, wire

from loom_jupyter.buildtools import compat, contract
from loom_jupyter.host.wire import protocol as p
from loom_jupyter.jupyter.sidebar.bridge import CommLink, Peer

ROOT = Path(__file__).resolve().parents[2]
CURRENT = compat.parse_version(p.PROTOCOL_VERSION)
OLDER = [
    version
    for version in compat.snapshots(ROOT)
    if CURRENT is not None and version[0] == CURRENT[0] and version < CURRENT
]
NEXT = f"{p.PROTOCOL_MAJOR}.{p.PROTOCOL_MINOR + 1}"


def label(version: tuple[int, int]) -> str:
    return f"{version[0]}.{version[1]}"


def types_of(spec: dict[str, Any], union: str) -> list[str]:
    defs = spec["$defs"]
    return [
        defs[str(ref["$ref"]).rsplit("/", 1)[-1]]["properties"]["type"]["const"]
        for ref in defs[union]["oneOf"]
    ]


@pytest.fixture(scope="module")
def page_js(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The page's protocol module (src/protocol.ts with its generated files) as CommonJS."""
    node = shutil.which("node")
    assert node is not None, "node is needed (the labextension build needs it too)"
    src = tmp_path_factory.mktemp("page")
    run(node, "scripts/generate-protocol.mjs", src / "generated")
    shutil.copy(FRONT / "src" / "protocol.ts", src / "protocol.ts")
    shutil.copy(GENERATED / "lists.ts", src / "generated" / "lists.ts")
    run(node, "test/skew.mjs", "transpile", src)  # `jlpm typecheck` checks the types
    return src / "cjs" / "protocol.js"


@pytest.fixture(scope="module")
def older_pages() -> dict[tuple[int, int], dict[str, Any]]:
    """Each older version's page: its version and its frozen schema (the driver makes its
    validator and its list of kernel message types from it), and the front types it has."""
    return {
        version: {
            "version": label(version),
            "schema": str(ROOT / compat.snapshot_path(label(version))),
            "known": types_of(spec, "Outbound"),
            "inbound": types_of(spec, "Inbound"),
        }
        for version, spec in compat.snapshots(ROOT).items()
        if version in OLDER
    }


def node_cases(page_js: Path, tmp: Path, cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What the page's code does in each case (one node run for them all)."""
    path = tmp / "cases.json"
    path.write_text(json.dumps([{"kernel": "", "front_types": []} | case for case in cases]))
    found: list[dict[str, Any]] = json.loads(run("node", "test/skew.mjs", page_js, path))
    return found


def from_this_kernel(message: p.Outbound) -> p.Outbound:
    """A sample as this kernel sends it: a welcome says this kernel's version."""
    if isinstance(message, p.Welcome):
        return dataclasses.replace(message, protocol=p.PROTOCOL_VERSION)
    return message


def welcome_of(version: str) -> dict[str, Any]:
    welcome = next(m for m in OUTBOUND if isinstance(m, p.Welcome))
    return wire(dataclasses.replace(welcome, protocol=version)) | {"reply_to": ""}


def test_there_are_older_versions_to_hold_to() -> None:
    assert [label(v) for v in OLDER] == ["1.0", "1.1", "1.2", "1.3"]


# -- an older page, a newer kernel -------------------------------------------------------


def test_an_older_page_reads_what_it_knows_of_a_newer_kernel_and_skips_the_rest(
    page_js: Path, older_pages: dict[tuple[int, int], dict[str, Any]], tmp_path: Path
) -> None:
    messages = [wire(from_this_kernel(m)) for m in OUTBOUND]
    cases = [{"page": page, "messages": messages} for page in older_pages.values()]
    results = node_cases(page_js, tmp_path, cases)
    for (version, page), found in zip(older_pages.items(), results, strict=True):
        newer = {m.type for m in OUTBOUND if m.type not in page["known"]}
        assert newer == {  # what the declarations say that version lacks
            cls.type
            for cls in typing.get_args(p.Outbound)
            if (compat.parse_version(p.message_since(cls)) or (0, 0)) > version
        }, label(version)
        expected = [
            {"skipped": m.type, "reply_to": None} if m.type in newer else {"message": m.type}
            for m in OUTBOUND
        ]
        assert found["readings"] == expected, label(version)
        infos = [text for level, text in found["logged"] if level == "info"]
        assert len(infos) == len(newer), label(version)  # once per type, however many came
        assert all(f"protocol {p.PROTOCOL_VERSION}) is newer" in text for text in infos)
        assert [entry for entry in found["logged"] if entry[0] != "info"] == []


def test_this_page_skips_a_type_a_newer_minor_adds_but_not_one_from_its_own_version(
    page_js: Path, tmp_path: Path
) -> None:
    nap = {"seq": 9, "kernel_session": "k1", "turn": None, "reply_to": None, "type": "nap"}
    kernels: dict[str, dict[str, Any]] = {
        NEXT: {"skipped": "nap", "reply_to": None},
        p.PROTOCOL_VERSION: {"notice": f"This page (Loom protocol {p.PROTOCOL_VERSION})"},
        f"{p.PROTOCOL_MAJOR + 1}.0": {"notice": "This page"},
    }
    cases = [
        {"page": None, "messages": [welcome_of(kernel), nap, {**nap, "seq": 10}]}
        for kernel in kernels
    ]
    results = node_cases(page_js, tmp_path, cases)
    for (kernel, reading), found in zip(kernels.items(), results, strict=True):
        readings = found["readings"]
        if "skipped" in reading:
            assert readings[1:] == [reading, reading], kernel
        else:  # a fault, told once in the chat
            assert str(readings[1]["notice"]).startswith(str(reading["notice"])), kernel
            assert readings[2] == {"notice": None}, kernel


class FakeComm:
    def __init__(self) -> None:
        self.comm_id = "c1"
        self.sent: list[dict[str, Any]] = []

    def send(self, data: dict[str, Any]) -> None:
        self.sent.append(data)


def link_and_peer() -> tuple[CommLink, Peer, FakeComm, asyncio.AbstractEventLoop, list[Any]]:
    loop = asyncio.new_event_loop()
    delivered: list[Any] = []
    rejected: list[Any] = []

    async def deliver(peer: Peer, message: p.Inbound) -> None:
        delivered.append(message)

    def reject(peer: Peer, problem: str, request_id: str) -> None:
        rejected.append((problem, request_id))

    link = CommLink(object(), loop, deliver, reject)
    comm = FakeComm()
    peer = Peer(comm)
    return link, peer, comm, loop, [delivered, rejected]


def test_the_kernel_sends_a_page_only_the_types_its_hello_has() -> None:
    link, peer, comm, loop, (delivered, _) = link_and_peer()
    try:
        for version in OLDER:
            hello = wire(p.Hello(protocol=version[0], minor=version[1]))
            link._received(peer, {"content": {"data": hello}})
            loop.run_until_complete(asyncio.sleep(0))
            assert peer.minor == version[1]
            comm.sent.clear()
            for message in OUTBOUND:
                link.send(peer, wire(message))
            sent = {data["type"] for data in comm.sent}
            expected = {m.type for m in OUTBOUND if p.page_reads(m.type, version[1])}
            assert sent == expected, label(version)
            assert {"ping", "pages"}.isdisjoint(sent) == (version < (1, 3))  # both 1.3
        assert len(delivered) == len(OLDER)
        peer.minor = p.PROTOCOL_MINOR  # a page of this version gets every type
        comm.sent.clear()
        for message in OUTBOUND:
            link.send(peer, wire(message))
        assert len(comm.sent) == len(OUTBOUND)
    finally:
        loop.close()


# -- a newer page, an older kernel -------------------------------------------------------


def test_a_newer_page_sends_an_older_kernel_only_the_types_it_reads(
    page_js: Path, older_pages: dict[tuple[int, int], dict[str, Any]], tmp_path: Path
) -> None:
    types = [m.type for m in INBOUND]
    kernels = [*(label(version) for version in older_pages), p.PROTOCOL_VERSION]
    cases = [{"page": None, "messages": [], "front_types": types, "kernel": k} for k in kernels]
    *older, this = node_cases(page_js, tmp_path, cases)
    for page, found in zip(older_pages.values(), older, strict=True):
        assert found["sends"] == {kind: kind in page["inbound"] for kind in types}, page
    assert this["sends"] == dict.fromkeys(types, True)


def test_a_request_a_newer_minor_adds_goes_only_to_kernels_of_that_version(
    page_js: Path, tmp_path: Path
) -> None:
    """A request added in the next minor version (its reply type too): the page sends it to
    a kernel of that version, and never to this one (which would not know it)."""
    since = dict(json.loads(_object_after(GENERATED / "lists.ts", "FRONT_SINCE")))
    since["nap_please"] = NEXT
    case = {"page": None, "messages": [], "front_types": ["nap_please", "sessions"]}
    kernels = (p.PROTOCOL_VERSION, NEXT)
    cases = [case | {"kernel": kernel, "front_since": since} for kernel in kernels]
    assert [found["sends"] for found in node_cases(page_js, tmp_path, cases)] == [
        {"nap_please": False, "sessions": True},  # this kernel would not know it
        {"nap_please": True, "sessions": True},
    ]


def _object_after(path: Path, name: str) -> str:
    """The JSON object literal a generated ``export const NAME = {...}`` holds."""
    text = path.read_text(encoding="utf-8").split(f"export const {name} = ", 1)[1]
    return text[: text.index("}") + 1]


def test_an_older_kernel_answers_a_request_it_does_not_know_as_a_reply_to_it() -> None:
    """Sent anyway (a page that did not check), a request of a newer minor gets the kernel's
    error notice as its reply (the notice's `reply_to` is the request's id), so the page's
    request settles at once instead of waiting for its timeout."""
    link, peer, _, loop, (delivered, rejected) = link_and_peer()
    try:
        link._received(peer, {"content": {"data": {"type": "nap_please", "request_id": "r9"}}})
        loop.run_until_complete(asyncio.sleep(0))
    finally:
        loop.close()
    assert delivered == []
    assert rejected == [("unknown message type 'nap_please'", "r9")]
    from loom_jupyter.host.runtime.replay import EventLog

    notice = EventLog(kernel_session="k1").reply(p.NoticeMsg("bad", "error"), to="r9")
    assert notice["reply_to"] == "r9"  # how the hub sends that rejection


def test_every_request_names_its_reply_and_the_page_has_the_same_table() -> None:
    assert set(p.REPLIES) == set(typing.get_args(p.Request))
    replies = json.loads(_object_after(GENERATED / "lists.ts", "REQUEST_REPLIES"))
    assert replies == {request.type: reply.type for request, reply in p.REPLIES.items()}
    assert (ROOT / contract.LISTS_PATH).read_text(encoding="utf-8") == contract.lists()
