"""Project instructions (AGENTS.md, CLAUDE.md, .loom/instructions.md) in the system prompt.

Real files in a temporary project: the notebook sits in ``outer/proj/a/b``, the project
root is ``outer/proj`` (it holds ``.git``), and ``outer`` has an AGENTS.md that is not
the project's.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

import pytest

from loom_jupyter.engine.context import ContextWindow, WindowConfig
from loom_jupyter.engine.events import Notice
from loom_jupyter.engine.prompts import SYSTEM_PROMPT
from loom_jupyter.models.scripted import ScriptedModel, text
from loom_jupyter.session import instructions as module
from loom_jupyter.session.instructions import ProjectInstructions
from loom_jupyter.trust import decide, read_request

from .conftest import FakeApi, OpenSession, collect

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture
def notebook(tmp_path: Path) -> Path:
    """A notebook two folders below a project root, with a folder above the root."""
    folder = tmp_path / "outer" / "proj" / "a" / "b"
    folder.mkdir(parents=True)
    (tmp_path / "outer" / "proj" / ".git").mkdir()
    path = folder / "analysis.ipynb"
    path.write_text(json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    return path


@pytest.fixture
def open_session(open_session: OpenSession, notebook: Path) -> OpenSession:
    """Sessions in a folder the person trusts as it is when the session opens (untrusted
    folders send no instructions: tests/security/test_folder_trust.py)."""

    async def trusting(model: Any, **options: Any) -> Any:
        decide(notebook, "trust", shown=read_request(notebook).digest)
        return await open_session(model, **options)

    return trusting  # type: ignore[return-value]


def _root(notebook: Path) -> Path:
    return notebook.parents[2]


def _write(path: Path, content: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def _notices(events: list[object]) -> list[str]:
    return [e.message for e in events if isinstance(e, Notice)]


async def test_files_from_the_root_down_outermost_first(
    open_session: OpenSession, notebook: Path
) -> None:
    root = _root(notebook)
    _write(root.parent / "AGENTS.md", "ABOVE THE ROOT")  # outside the project: never read
    _write(root / "AGENTS.md", "ROOT AGENTS")
    _write(root / "a" / "CLAUDE.md", "A CLAUDE")
    _write(notebook.parent / "AGENTS.md", "B AGENTS")
    _write(notebook.parent / ".loom" / "instructions.md", "B LOOM")
    model = ScriptedModel([text("ok")])
    session = await open_session(model)

    events = await collect(session, "hello")

    system = model.requests[0].system
    assert system.startswith(SYSTEM_PROMPT)  # the static prompt stays first, unchanged
    order = [system.index(s) for s in ("ROOT AGENTS", "A CLAUDE", "B AGENTS", "B LOOM")]
    assert order == sorted(order)
    assert "ABOVE THE ROOT" not in system
    assert '<project_instructions file="a/b/.loom/instructions.md">' in system
    assert _notices(events) == []
    loaded = await session.project_instructions()
    assert loaded.root == root
    assert [f.name for f in loaded.files] == [
        "AGENTS.md",
        "a/CLAUDE.md",
        "a/b/AGENTS.md",
        "a/b/.loom/instructions.md",
    ]
    assert {f.status for f in loaded.files} == {"included"}


async def test_no_git_means_the_notebook_folder_is_the_root(
    open_session: OpenSession, notebook: Path
) -> None:
    root = _root(notebook)
    (root / ".git").rmdir()
    _write(root / "AGENTS.md", "ROOT AGENTS")
    _write(notebook.parent / "CLAUDE.md", "B CLAUDE")
    model = ScriptedModel([text("ok")])
    session = await open_session(model)

    await collect(session, "hello")

    assert "B CLAUDE" in model.requests[0].system
    assert "ROOT AGENTS" not in model.requests[0].system


async def test_without_files_the_system_prompt_is_the_static_one(
    open_session: OpenSession,
) -> None:
    model = ScriptedModel([text("ok")])
    session = await open_session(model)
    await collect(session, "hello")
    assert model.requests[0].system == SYSTEM_PROMPT


async def test_the_cap_keeps_the_first_part_and_tells_the_person_once(
    open_session: OpenSession, notebook: Path
) -> None:
    root = _root(notebook)
    _write(root / "AGENTS.md", "R" * 60)
    _write(notebook.parent / "CLAUDE.md", "N" * 60)
    _write(notebook.parent / ".loom" / "instructions.md", "LAST")  # after CLAUDE.md
    model = ScriptedModel([text("one"), text("two")])
    session = await open_session(model, instructions_max_chars=100)

    first = await collect(session, "hello")
    second = await collect(session, "again")

    system = model.requests[0].system
    assert "R" * 60 in system
    assert "N" * 40 in system
    assert "N" * 41 not in system
    assert "LAST" not in system
    assert "cut here" in system
    [notice] = _notices(first)
    assert "instructions_max_chars (100)" in notice
    assert "a/b/CLAUDE.md was cut" in notice
    assert "a/b/.loom/instructions.md was left out" in notice
    assert _notices(second) == []  # told once
    loaded = await session.project_instructions()
    assert [(f.status, f.included) for f in loaded.files] == [
        ("included", 60),
        ("cut", 40),
        ("left out", 0),
    ]
    assert (loaded.total_chars, loaded.included_chars) == (124, 100)


async def test_an_edit_is_picked_up_on_the_next_turn(
    open_session: OpenSession, notebook: Path
) -> None:
    """An edit changes what the folder asks for: it is not sent until the person trusts the
    folder again (DESIGN §12), then it is; a folder that asks for nothing needs no trust."""
    path = _write(_root(notebook) / "CLAUDE.md", "Use polars.")
    model = ScriptedModel([text("one"), text("two"), text("three"), text("four")])
    session = await open_session(model)

    await collect(session, "hello")
    _write(path, "Use pandas, never polars.")
    changed = await collect(session, "again")
    decide(notebook, "trust", shown=read_request(notebook).digest)
    await collect(session, "trusted again")
    path.unlink()
    await collect(session, "and again")

    systems = [r.system for r in model.requests]
    assert "Use polars." in systems[0]
    assert systems[1] == SYSTEM_PROMPT
    assert any("changed since you trusted it" in n for n in _notices(changed))
    assert "Use pandas, never polars." in systems[2]
    assert systems[3] == SYSTEM_PROMPT


async def test_an_edit_of_the_same_size_is_seen_by_its_time(notebook: Path) -> None:
    path = _write(_root(notebook) / "AGENTS.md", "alpha")
    loader = ProjectInstructions(notebook, max_chars=1_000)
    assert "alpha" in loader.current().text
    _write(path, "omega")
    stamp = path.stat().st_mtime_ns + 5_000_000_000
    os.utime(path, ns=(stamp, stamp))
    assert "omega" in loader.current().text


async def test_the_cached_prefix_is_byte_identical_while_nothing_changes(
    open_session: OpenSession, notebook: Path, fake_api: FakeApi
) -> None:
    _write(_root(notebook) / "AGENTS.md", "Always label plot axes.")
    model, server = fake_api.model(["one", "two", "three"])
    session = await open_session(model)

    for prompt in ("hello", "again", "and again"):
        await collect(session, prompt)

    bodies = [r.body for r in server.message_requests]
    wire = [json.dumps([b["tools"], b["system"]], sort_keys=True) for b in bodies]
    assert len(wire) == 3
    assert wire[0] == wire[1] == wire[2]
    assert "Always label plot axes." in wire[0]
    assert bodies[0]["system"][-1]["cache_control"]["ttl"] == "1h"


async def test_unchanged_files_are_only_stat_ed(
    notebook: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _root(notebook)
    _write(root / "AGENTS.md", "root")
    changed = _write(notebook.parent / "CLAUDE.md", "near")
    reads: list[Path] = []
    real_read = module._read

    def counting(path: Path, real_root: Path, limit: int) -> module._Read:
        reads.append(path)
        return real_read(path, real_root, limit)

    monkeypatch.setattr(module, "_read", counting)
    loader = ProjectInstructions(notebook, max_chars=1_000)
    first = loader.current()
    assert len(reads) == 2
    assert loader.current() is first  # nothing changed: nothing read, the same text
    assert len(reads) == 2
    _write(changed, "nearer")
    assert "nearer" in loader.current().text
    assert reads[2:] == [changed]  # only the changed file is read again


async def test_a_binary_file_is_skipped_with_a_notice(
    open_session: OpenSession, notebook: Path
) -> None:
    _write(_root(notebook) / "AGENTS.md", "Readable rules.")
    _write(notebook.parent / "CLAUDE.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00IHDR")
    _write(notebook.parent / ".loom" / "instructions.md", b"caf\xe9 latin-1")
    model = ScriptedModel([text("one"), text("two")])
    session = await open_session(model)

    first = await collect(session, "hello")
    second = await collect(session, "again")

    system = model.requests[0].system
    assert "Readable rules." in system
    assert "PNG" not in system
    assert "latin-1" not in system
    assert _notices(first) == [
        "Project instructions: a/b/CLAUDE.md was skipped (a binary file, not UTF-8 text).",
        "Project instructions: a/b/.loom/instructions.md was skipped (not UTF-8 text).",
    ]
    assert _notices(second) == []


async def test_a_link_out_of_the_project_is_not_followed(notebook: Path) -> None:
    root = _root(notebook)
    secret = _write(root.parent / "private.md", "SECRET NOTES")
    (notebook.parent / "AGENTS.md").symlink_to(secret)
    _write(root / "docs" / "rules.md", "SHARED RULES")
    (root / "CLAUDE.md").symlink_to(root / "docs" / "rules.md")  # inside: followed
    (root / "AGENTS.md").symlink_to(root / "CLAUDE.md")  # the same file: included once

    loader = ProjectInstructions(notebook, max_chars=1_000)
    loaded = loader.current()

    assert "SECRET NOTES" not in loaded.text
    assert loaded.text.count("SHARED RULES") == 1
    statuses = {f.name: f.status for f in loaded.files}
    assert statuses == {
        "AGENTS.md": "included",
        "CLAUDE.md": "duplicate",
        "a/b/AGENTS.md": "skipped",
    }
    [notice] = loader.take_notices()
    assert "a/b/AGENTS.md was skipped" in notice
    assert "outside the project root" in notice


def test_the_window_keeps_its_system_until_it_changes() -> None:
    window = ContextWindow(WindowConfig(budget_tokens=50_000), system=SYSTEM_PROMPT)
    assert window.set_system(SYSTEM_PROMPT) is False
    before = window.build(model="m", state_text="s").system
    assert window.set_system(SYSTEM_PROMPT + "\n\n# Project instructions\nx") is True
    after = window.build(model="m", state_text="s").system
    assert before == SYSTEM_PROMPT
    assert after.endswith("# Project instructions\nx")
