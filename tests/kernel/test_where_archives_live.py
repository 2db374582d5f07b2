"""Where a real kernel's archive lives (DESIGN §13), against the fake Messages API.

VS Code's ``__vsc_ipynb_file__`` names the notebook; ``archive_dir`` holds the archives
(resume, recall across the project, a rename, the CLI); a kernel that cannot place its
notebook writes nothing before it has said where; the sidebar's hello places it; a resume
that cannot happen is loud and leaves the old file as it was; a session held on another
host gets a session of its own, said in the banner.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import sqlite3
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from jupyter_client.manager import start_new_kernel

import loom_jupyter
from loom_jupyter.archive import Archive, archive_path_for
from loom_jupyter.archive.paths import folder_key
from loom_jupyter.messages import TurnDraft

from .sidebar_wire import Wire, hello

if TYPE_CHECKING:
    from collections.abc import Iterator

    from loom_jupyter.testing import FakeAnthropic

pytestmark = pytest.mark.kernel

CURRENT = (
    "__import__('loom_jupyter.jupyter.coworker.registry', fromlist=['c']).current(get_ipython())"
)
SESSION_ID = f"{CURRENT}.session.session_id"
OTHER_HOST_OWNER = "elsewhere.example:4242:0000/1/1:feedbeef"


@contextmanager
def kernel(fake: FakeAnthropic, cwd: Path, **env: str) -> Iterator[Wire]:
    """A kernel started in ``cwd`` with no notebook name unless ``env`` gives one."""
    base = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANTHROPIC_", "LOOM_", "JPY_", "KERNEL_"))
    }
    base.update(
        ANTHROPIC_BASE_URL=fake.base_url,
        ANTHROPIC_API_KEY="test-key",
        LOOM_APPROVAL="auto",
        XDG_CONFIG_HOME=str(cwd.parent / "config"),
    )
    km, kc = start_new_kernel(kernel_name="python3", env={**base, **env}, cwd=str(cwd))
    wire = Wire(km, kc)
    try:
        yield wire
    finally:
        wire.shutdown()


def printed(wire: Wire, code: str) -> str:
    """Run a cell; what it printed (stdout, stderr and errors), once the kernel is idle."""
    msg_id = wire.execute(code)
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
    parts = []
    for channel, msg in wire.log:
        if channel != "iopub" or not mine(msg):
            continue
        if msg["msg_type"] == "stream":
            parts.append(msg["content"]["text"])
        elif msg["msg_type"] == "error":
            parts.append("\n".join(msg["content"]["traceback"]))
        elif msg["msg_type"] in ("display_data", "update_display_data", "execute_result"):
            parts.append(msg["content"]["data"].get("text/plain", ""))
    return "".join(parts)


def restart(wire: Wire) -> None:
    wire.km.restart_kernel(now=False)
    wire.kc.wait_for_ready(timeout=60)


def comm_messages(wire: Wire, comm: str, kind: str, count: int = 1) -> list[dict[str, Any]]:
    def found() -> list[dict[str, Any]] | None:
        events = wire.events(comm, kind)
        return events if len(events) >= count else None

    return wire.wait(found, f"{count} {kind!r} message(s)")


def user_turns(archive: Path) -> list[str]:
    with sqlite3.connect(f"file:{archive}?mode=ro", uri=True) as db:
        rows = db.execute("SELECT content FROM conversation_turns WHERE role = 'user' ORDER BY id")
        return [text for (text,) in rows]


def files_under(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) if folder.exists() else []


def notebook_file(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    return path


# -- VS Code ----------------------------------------------------------------------------------


def test_vscode_notebooks_in_one_folder_keep_their_own_archives_and_sessions(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    folder = tmp_path / "project"
    a, b = notebook_file(folder / "a.ipynb"), notebook_file(folder / "b.ipynb")
    with kernel(fake, folder) as first, kernel(fake, folder) as second:
        for wire, notebook, topic in ((first, a, "alpha"), (second, b, "beta")):
            # VS Code puts the path in the namespace when it starts the kernel
            wire.run(f"__vsc_ipynb_file__ = {str(notebook)!r}")
            banner = printed(wire, "%load_ext loom_jupyter")
            assert f"loom: {notebook.name} — new session" in banner
            fake.add(f"About {topic}.")
            assert f"About {topic}." in printed(wire, f"%cowork tell me about {topic}")
        for wire, notebook, topic in ((first, a, "alpha"), (second, b, "beta")):
            restart(wire)
            wire.run(f"__vsc_ipynb_file__ = {str(notebook)!r}")
            banner = printed(wire, "%load_ext loom_jupyter")
            assert f"loom: {notebook.name} — resumed “tell me about {topic}”" in banner
    assert user_turns(folder / ".loom" / "a.ipynb.sqlite") == ["tell me about alpha"]
    assert user_turns(folder / ".loom" / "b.ipynb.sqlite") == ["tell me about beta"]
    assert not (folder / ".loom" / "ipython-session.sqlite").exists()


# -- archive_dir --------------------------------------------------------------------------------


async def _archive_of(notebook: Path, fact: str) -> None:
    async with Archive.open(archive_path_for(notebook)) as archive:
        sid = await archive.create_session(notebook_path=str(notebook), model="m")
        await archive.append_turn(sid, TurnDraft(role="user", content=fact))
        await archive.append_turn(sid, TurnDraft(role="assistant", content="Noted."))


def _tool_results(fake: FakeAnthropic) -> str:
    blocks = [
        block
        for message in fake.message_requests[-1].body["messages"]
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]
    return json.dumps(blocks[-1])


def test_archive_dir_holds_the_archive_through_resume_recall_rename_and_the_cli(
    fake: FakeAnthropic, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "persistent" / "loom"
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    old = notebook_file(project / "Untitled.ipynb")
    monkeypatch.setenv("LOOM_ARCHIVE_DIR", str(home))  # this process writes the neighbour
    neighbour = notebook_file(project / "prep" / "cleaning.ipynb")
    asyncio.run(_archive_of(neighbour, "The churn cut-off we agreed on is 0.37."))
    own = home / folder_key(project)
    env = {"JPY_SESSION_NAME": str(old), "LOOM_ARCHIVE_DIR": str(home)}
    with kernel(fake, project, **env) as wire:
        assert "loom: Untitled.ipynb — new session" in printed(wire, "%load_ext loom_jupyter")
        query = {"action": "search", "query": "churn cut-off", "scope": "all_notebooks"}
        recall = {"content": [{"type": "tool_use", "name": "conversation_recall", "input": query}]}
        fake.add(recall, "It is 0.37.")
        printed(wire, "%cowork what churn cut-off did we agree on in the other notebook?")
        found = _tool_results(fake)
        assert "prep/cleaning.ipynb" in found
        assert "0.37" in found
        assert (own / "Untitled.ipynb.sqlite").is_file()
        assert not (project / ".loom").exists()  # nothing beside the notebook

        restart(wire)
        banner = printed(wire, "%load_ext loom_jupyter")
        assert "resumed “what churn cut-off did we agree on" in banner
        assert "what churn cut-off did we agree on" in printed(wire, "%cowork sessions")
        session = wire.value(SESSION_ID)

        comm = wire.open_comm(hello(notebook_path=old.name, server_root=str(project)))
        comm_messages(wire, comm, "welcome")
        new = old.rename(project / "analysis.ipynb")
        wire.send(comm, {"type": "set_notebook", "path": new.name, "server_root": str(project)})
        notice = wire.wait(
            lambda: [e for e in wire.events(comm, "notice") if "analysis.ipynb" in e["message"]],
            "the notice that the conversation followed",
        )[0]["message"]
        assert str(own / "analysis.ipynb.sqlite") in notice
        assert wire.value(SESSION_ID) == session
    assert not (own / "Untitled.ipynb.sqlite").exists()
    assert user_turns(own / "analysis.ipynb.sqlite") == [
        "what churn cut-off did we agree on in the other notebook?"
    ]
    listed = _cli("sessions", str(new), LOOM_ARCHIVE_DIR=str(home))
    assert listed.returncode == 0, listed.stderr
    assert "what churn cut-off" in listed.stdout
    assert not (project / ".loom").exists()


def _cli(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    root = str(Path(loom_jupyter.__file__).parent.parent)
    return subprocess.run(
        [sys.executable, "-m", "loom_jupyter.cli", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={"COLUMNS": "200", "PATH": "/usr/bin:/bin", "PYTHONPATH": root, **env},
        check=False,
    )


# -- a kernel that cannot place its notebook -------------------------------------------------


def test_a_kernel_with_no_name_writes_nothing_until_it_said_where(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    folder = tmp_path / "runs"
    folder.mkdir()
    with kernel(fake, folder) as wire:  # nbclient without env=: no name at all
        banner = printed(wire, "%load_ext loom_jupyter")
        stand_in = folder / ".loom" / "ipython-session.sqlite"
        assert "This kernel does not know its notebook" in banner
        assert "Nothing is written yet" in banner
        assert str(stand_in) in banner.replace("\n", " ")
        assert "%cowork --notebook" in banner
        assert files_under(folder) == []
        fake.add("Hello there.")
        out = printed(wire, "%cowork hello")
        told = out.index("Conversations go to")
        assert told < out.index("Hello there.")  # said before the turn
        assert user_turns(stand_in) == ["hello"]


def test_the_sidebars_hello_places_a_kernel_with_no_name_under_archive_dir(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    root = tmp_path / "server-root"
    notebook = notebook_file(root / "work" / "analysis.ipynb")
    home = tmp_path / "archives"
    with kernel(fake, root / "work", LOOM_ARCHIVE_DIR=str(home)) as wire:
        banner = printed(wire, "%load_ext loom_jupyter")
        assert "does not know its notebook" in banner
        assert files_under(home) == []  # said where; made nothing
        agent = wire.open_comm(hello(agent="Early Agent", minor=3), target="loom-agent")
        why = comm_messages(wire, agent, "notice")[0]  # held, told why: not refused as unloaded
        assert "does not know its notebook" in why["message"]
        comm = wire.open_comm(hello(notebook_path="work/analysis.ipynb", server_root=str(root)))
        welcome = comm_messages(wire, comm, "welcome")[0]
        assert welcome["session"] is None  # a new conversation, in the placed notebook
        assert comm_messages(wire, agent, "pages")[0]["pages"] == 1  # handed over: its hello
        assert not wire.events(agent, "welcome")
        archive = home / folder_key(notebook.parent) / "analysis.ipynb.sqlite"
        assert archive.is_file()
        fake.add("Placed.")
        assert "Placed." in printed(wire, "%cowork where am I?")
        assert wire.value(f"str({CURRENT}.location.path)") == repr(str(notebook))
    assert user_turns(archive) == ["where am I?"]
    assert files_under(root / "work") == ["analysis.ipynb"]


# -- a resume that cannot happen --------------------------------------------------------------


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_an_archive_that_cannot_be_opened_is_loud_and_left_as_it_was(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    folder = tmp_path / "project"
    notebook = notebook_file(folder / "nb.ipynb")
    broken = archive_path_for(notebook)
    broken.write_bytes(b"this was an archive once\x00" * 100)
    before = _digest(broken)
    with kernel(fake, folder, JPY_SESSION_NAME=str(notebook)) as wire:
        banner = printed(wire, "%load_ext loom_jupyter")
        assert f"loom: The archive {broken}" in banner.replace("\n", " ")
        assert "not a database" in banner or "SQLite" in banner
        comm = wire.open_comm(hello(notebook_path="nb.ipynb", server_root=str(folder)))
        notice = comm_messages(wire, comm, "notice")[0]  # the sidebar hears why, too
        assert notice["level"] == "error"
        assert str(broken) in notice["message"]
        out = printed(wire, "%cowork are you there?")
        assert str(broken) in out.replace("\n", " ")
    assert fake.message_requests == [] or "are you there?" not in json.dumps(
        fake.message_requests[-1].body
    )
    assert _digest(broken) == before
    assert files_under(folder) == [".loom", ".loom/.gitignore", ".loom/nb.ipynb.sqlite", "nb.ipynb"]


HOLD = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("PRAGMA locking_mode = EXCLUSIVE")
db.execute("BEGIN EXCLUSIVE")
db.execute("SELECT count(*) FROM cowork_sessions").fetchone()
print("held", flush=True)
sys.stdin.readline()
"""


def test_a_locked_archive_in_archive_dir_is_loud_and_nothing_starts_elsewhere(
    fake: FakeAnthropic, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "project"
    notebook = notebook_file(folder / "nb.ipynb")
    home = tmp_path / "archives"
    monkeypatch.setenv("LOOM_ARCHIVE_DIR", str(home))
    asyncio.run(_archive_of(notebook, "an earlier conversation"))
    archive = archive_path_for(notebook, create=False)
    before = _digest(archive)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(archive)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "held"
        env = {
            "JPY_SESSION_NAME": str(notebook),
            "LOOM_ARCHIVE_DIR": str(home),
            "LOOM_BUSY_TIMEOUT_SECONDS": "0.5",
        }
        with kernel(fake, folder, **env) as wire:
            banner = printed(wire, "%load_ext loom_jupyter")
            assert str(archive) in banner.replace("\n", " ")
            assert "new session" not in banner
            assert "resumed" not in banner
            out = printed(wire, "%cowork are you there?")
            assert str(archive) in out.replace("\n", " ")
    finally:
        holder.communicate("\n", timeout=30)
    assert _digest(archive) == before
    assert user_turns(archive) == ["an earlier conversation"]
    assert not (folder / ".loom").exists()  # no fresh start beside the notebook
    made = [name for name in files_under(home) if not name.endswith(("-wal", "-shm"))]
    expected = (archive.parent, archive.parent / ".gitignore", archive)
    assert made == sorted(str(p.relative_to(home)) for p in expected)


def test_an_archive_left_in_loom_is_named_when_archive_dir_is_set(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    folder = tmp_path / "project"
    notebook = notebook_file(folder / "nb.ipynb")
    earlier = archive_path_for(notebook)
    asyncio.run(_archive_of(notebook, "before archive_dir"))
    before = _digest(earlier)
    home = tmp_path / "archives"
    with kernel(fake, folder, JPY_SESSION_NAME=str(notebook), LOOM_ARCHIVE_DIR=str(home)) as wire:
        banner = printed(wire, "%load_ext loom_jupyter").replace("\n", " ")
    assert "new session" in banner
    assert f"This notebook's earlier conversations are in {earlier}" in banner
    moved = home / folder_key(folder) / "nb.ipynb.sqlite"
    assert f"mv {earlier} {moved}" in banner
    assert _digest(earlier) == before


# -- another host ----------------------------------------------------------------------------


async def _held_elsewhere(notebook: Path) -> str:
    async with Archive.open(archive_path_for(notebook)) as archive:
        sid = await archive.create_session(notebook_path=str(notebook), model="m")
        await archive.append_turn(sid, TurnDraft(role="user", content="written on the other host"))
        await archive.acquire_lease(sid, OTHER_HOST_OWNER)
        return sid


def test_a_session_held_on_another_host_gets_a_session_of_its_own_said_in_the_banner(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    folder = tmp_path / "shared"
    notebook = notebook_file(folder / "nb.ipynb")
    held = asyncio.run(_held_elsewhere(notebook))
    env = {"JPY_SESSION_NAME": str(notebook), "LOOM_LEASE_STALE_SECONDS": "600"}
    with kernel(fake, folder, **env) as wire:
        banner = printed(wire, "%load_ext loom_jupyter").replace("\n", " ")
        assert "loom: nb.ipynb — new session" in banner
        assert "being written by another live kernel" in banner
        fake.add("Here.")
        printed(wire, "%cowork my own session")
        mine = wire.value(SESSION_ID).strip("'")
    assert mine != held
    with sqlite3.connect(f"file:{archive_path_for(notebook)}?mode=ro", uri=True) as db:
        owner = db.execute("SELECT lease_owner FROM cowork_sessions WHERE id = ?", [held])
        assert owner.fetchone() == (OTHER_HOST_OWNER,)
        turns = dict(db.execute("SELECT session_id, count(*) FROM conversation_turns GROUP BY 1"))
    assert turns[held] == 1
    assert turns[mine] >= 2
