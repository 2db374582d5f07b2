"""A notebook renamed (or saved under another name) while its kernel runs keeps its conversation.

A real ipykernel, the sidebar's comm and the fake Messages API: the sidebar says
where the notebook went, the archive follows once the kernel is idle, the same
comm goes on in the same session, and a new kernel of the renamed notebook
resumes it.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import pytest

from .conftest import archive_rows
from .sidebar_wire import Wire, hello, start_wire

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from loom_jupyter.testing import FakeAnthropic

pytestmark = pytest.mark.kernel

SESSION_ID = (
    "__import__('loom_jupyter.jupyter.coworker.registry', fromlist=['current'])"
    ".current(get_ipython()).session.session_id"
)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """The served folder the notebooks live in."""
    path = tmp_path / "project"
    path.mkdir()
    return path


@contextmanager
def _kernel(fake: FakeAnthropic, notebook: Path, approval: str = "auto") -> Iterator[Wire]:
    """A kernel on ``notebook`` with Loom loaded, shut down afterwards."""
    wire = start_wire(fake, notebook, notebook.parent.parent / "config", approval=approval)
    try:
        yield wire
    finally:
        wire.shutdown()


def _sidebar(wire: Wire, notebook: Path) -> str:
    """A sidebar comm that names the notebook as the front would, once welcomed."""
    comm = wire.open_comm(hello(notebook_path=notebook.name, server_root=str(notebook.parent)))
    _events(wire, comm, "welcome")
    return comm


def _notebook(path: Path) -> Path:
    path.write_text(json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    return path


def _events(wire: Wire, comm: str, kind: str, count: int = 1) -> list[dict[str, Any]]:
    def found() -> list[dict[str, Any]] | None:
        events = [e for e in wire.comm_events(comm) if e["type"] == kind]
        return events if len(events) >= count else None

    return wire.wait(found, f"{count} {kind!r} event(s)")


def _turn(wire: Wire, comm: str, fake: FakeAnthropic, text: str, number: int) -> None:
    fake.add(f"Answer {number}.")
    wire.send(comm, {"type": "send", "client_id": f"c-{number}", "text": text})
    _events(wire, comm, "turn_done", number)


def _renamed(wire: Wire, comm: str, path: str, root: Path) -> str:
    """Tell the kernel the notebook's new path; the notice it answers with."""
    wire.send(comm, {"type": "set_notebook", "path": path, "server_root": str(root)})
    notices = wire.wait(
        lambda: [
            e for e in wire.comm_events(comm) if e["type"] == "notice" and path in e["message"]
        ],
        "the notice that the conversation followed",
    )
    return str(notices[0]["message"])


def test_a_renamed_notebook_takes_its_conversation_to_the_next_kernel(
    fake: FakeAnthropic, folder: Path
) -> None:
    old = _notebook(folder / "Untitled.ipynb")
    with _kernel(fake, old) as wire:
        comm = _sidebar(wire, old)
        _turn(wire, comm, fake, "remember: the launch code is tulip", 1)
        session = wire.value(SESSION_ID)

        new = folder / "analysis.ipynb"
        old.rename(new)
        notice = _renamed(wire, comm, "analysis.ipynb", folder)
        assert "reopening it resumes this session" in notice
        assert not (folder / ".loom" / "Untitled.ipynb.sqlite").exists()
        _turn(wire, comm, fake, "and after the rename?", 2)  # the same comm, still open
        assert wire.value(SESSION_ID) == session

    rows = archive_rows(new, "SELECT DISTINCT session_id FROM conversation_turns")
    assert [f"'{sid}'" for (sid,) in rows] == [session]
    prompts = archive_rows(new, "SELECT content FROM conversation_turns WHERE role = 'user'")
    assert prompts == [("remember: the launch code is tulip",), ("and after the rename?",)]
    assert archive_rows(new, "SELECT DISTINCT notebook_path FROM cowork_sessions") == [(str(new),)]

    with _kernel(fake, new) as reopened:
        assert reopened.value(SESSION_ID) == session


def test_save_as_leaves_the_old_notebook_its_history_and_a_taken_name_is_refused(
    fake: FakeAnthropic, folder: Path
) -> None:
    old = _notebook(folder / "draft.ipynb")
    with _kernel(fake, old) as wire:
        comm = _sidebar(wire, old)
        _turn(wire, comm, fake, "the draft's question", 1)

        _notebook(folder / "final.ipynb")  # Save As: both files exist
        notice = _renamed(wire, comm, "final.ipynb", folder)
        assert "draft.ipynb keeps its copy" in notice
        _turn(wire, comm, fake, "only in the final notebook", 2)

        _notebook(folder / "taken.ipynb")
        (folder / ".loom" / "taken.ipynb.sqlite").write_bytes(b"")  # that name has an archive
        warning = _renamed(wire, comm, "taken.ipynb", folder)
        assert "already has its own conversation archive" in warning
        _turn(wire, comm, fake, "still in the final notebook", 3)

    user = "SELECT content FROM conversation_turns WHERE role = 'user' ORDER BY id"
    assert archive_rows(old, user) == [("the draft's question",)]
    assert archive_rows(folder / "final.ipynb", user) == [
        ("the draft's question",),
        ("only in the final notebook",),
        ("still in the final notebook",),
    ]


def test_a_rename_during_a_turn_waits_for_the_turn_to_end(
    fake: FakeAnthropic, folder: Path
) -> None:
    old = _notebook(folder / "before.ipynb")
    with _kernel(fake, old, approval="ask") as wire:
        comm = _sidebar(wire, old)
        code = "made_before_the_move = 1"
        fake.add(
            {"content": [{"type": "tool_use", "name": "run_python", "input": {"code": code}}]},
            "Done.",
        )
        wire.send(comm, {"type": "send", "client_id": "c-1", "text": "set a variable"})
        (approval,) = _events(wire, comm, "approval")  # the turn waits for the person

        old.rename(folder / "after.ipynb")
        wire.send(comm, {"type": "set_notebook", "path": "after.ipynb", "server_root": str(folder)})
        wire.send(comm, {"type": "sessions"})
        _events(wire, comm, "sessions")  # the rename was read; the turn still runs
        assert (folder / ".loom" / "before.ipynb.sqlite").exists()

        decision = {"type": "approve", "request_id": approval["request_id"], "decision": "allow"}
        wire.send(comm, decision)
        _events(wire, comm, "turn_done")
        wire.wait(
            lambda: [e for e in wire.comm_events(comm) if "after.ipynb" in e.get("message", "")],
            "the conversation to follow once the turn ended",
        )
        assert wire.value("made_before_the_move") == "1"
    roles = archive_rows(folder / "after.ipynb", "SELECT role FROM conversation_turns ORDER BY id")
    assert [r for (r,) in roles] == ["user", "assistant", "tool", "assistant"]
    assert not (folder / ".loom" / "before.ipynb.sqlite").exists()


def _printed(wire: Wire, msg_id: str) -> str:
    """What a cell printed, once the kernel is idle again after it (iopub may trail the reply)."""
    wire.reply_of(msg_id)

    def mine(msg: dict[str, Any]) -> bool:
        return bool(msg["parent_header"].get("msg_id") == msg_id)

    wire.wait(
        lambda: any(
            mine(m) and m["msg_type"] == "status" and m["content"]["execution_state"] == "idle"
            for _, m in wire.log
        ),
        "the cell's idle status",
    )
    return "".join(
        msg["content"]["text"]
        for channel, msg in wire.log
        if channel == "iopub" and msg["msg_type"] == "stream" and mine(msg)
    )


def test_a_notebook_renamed_while_its_kernel_was_off_can_adopt_its_conversation(
    fake: FakeAnthropic, folder: Path
) -> None:
    old = _notebook(folder / "Untitled.ipynb")
    with _kernel(fake, old) as first:
        fake.add("Noted.")
        assert first.run("%cowork remember: the launch code is tulip")["status"] == "ok"
        session = first.value(SESSION_ID)
    new = folder / "analysis.ipynb"
    old.rename(new)  # in the file browser, with no kernel running

    with _kernel(fake, new) as second:

        def streamed() -> str | None:  # the banner wraps at words; iopub may trail the reply
            text = "".join(m["content"]["text"] for _, m in second.log if m["msg_type"] == "stream")
            return " ".join(text.split()) if "brings that conversation over" in text else None

        banner = second.wait(streamed, "the banner offering the conversation")
        comm = _sidebar(second, new)
        second.wait(
            lambda: [e for e in second.comm_events(comm) if "Untitled.ipynb is gone" in str(e)],
            "the sidebar's offer",
        )
        assert "Untitled.ipynb is gone but its conversation is still here (1 session" in banner
        assert "%cowork adopt Untitled.ipynb brings that conversation over" in banner

        adopted = _printed(second, second.execute("%cowork adopt Untitled.ipynb"))
        assert "The conversation of Untitled.ipynb is now this notebook's." in adopted
        assert "resumed “remember: the launch code is tulip” (1 prompt)" in adopted
        assert second.value(SESSION_ID) == session
        again = _printed(second, second.execute("%cowork adopt Untitled.ipynb"))
        assert "There is no conversation of Untitled.ipynb" in again

        fake.add("It is tulip.")
        assert second.run("%cowork what was the launch code?")["status"] == "ok"
        assert "the launch code is tulip" in json.dumps(fake.message_requests[-1].body)
    assert not (folder / ".loom" / "Untitled.ipynb.sqlite").exists()
    prompts = archive_rows(new, "SELECT content FROM conversation_turns WHERE role = 'user'")
    assert prompts == [("remember: the launch code is tulip",), ("what was the launch code?",)]
