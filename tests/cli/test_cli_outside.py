"""An outside agent's calls read from a terminal: ``show`` names the client, a fork keeps it."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from clirun import run_cli

from loom_jupyter.archive import Archive, archive_path_for
from loom_jupyter.messages import TurnDraft

if TYPE_CHECKING:
    from pathlib import Path

CLIENT = "Claude Code"


async def _session_with_an_outside_call(notebook: Path) -> str:
    async with Archive.open(archive_path_for(notebook)) as archive:
        sid = await archive.create_session(notebook_path=str(notebook), model="claude-x")
        await archive.append_turn(sid, TurnDraft(role="user", content="Load the data"))
        await archive.append_turn(sid, TurnDraft(role="assistant", content="Loaded."))
        call = TurnDraft(
            role="tool", content="42", tool_name="run_python", tool_input={"code": "6 * 7"}
        )
        await archive.append_outside_call(sid, call, CLIENT)
        return sid


async def _fork_marks(notebook: Path, sid: str) -> tuple[dict[int, str], dict[int, str]]:
    async with Archive.open(archive_path_for(notebook)) as archive:
        whole = await archive.fork_session(sid)
        before_the_call = await archive.fork_session(sid, at_turn=2)
        return (
            await archive.outside_clients(whole, 1, 3),
            await archive.outside_clients(before_the_call, 1, 3),
        )


def test_show_names_the_outside_agent_of_a_call_and_a_fork_keeps_the_mark(
    tmp_path: Path,
) -> None:
    notebook = tmp_path / "analysis.ipynb"
    notebook.write_text("{}")
    sid = asyncio.run(_session_with_an_outside_call(notebook))

    shown = run_cli("show", str(notebook))
    assert shown.code == 0, shown.err
    header = next(line for line in shown.out.splitlines() if line.startswith("── #3"))
    assert f"tool run_python · called by {CLIENT} (outside agent)" in header
    own = next(line for line in shown.out.splitlines() if line.startswith("── #2"))
    assert "outside agent" not in own

    whole, before_the_call = asyncio.run(_fork_marks(notebook, sid))
    assert whole == {3: CLIENT}
    assert before_the_call == {}
