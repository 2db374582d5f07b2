"""conversation_recall's scope: this session, this notebook, or every notebook of the project."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from loom_jupyter.archive import Archive, archive_path_for
from loom_jupyter.archive.project import ProjectArchives
from loom_jupyter.messages import TurnDraft

if TYPE_CHECKING:
    from pathlib import Path

    from .conftest import Caller


async def notebook_with(notebook: Path, *texts: str) -> tuple[Archive, str]:
    notebook.parent.mkdir(parents=True, exist_ok=True)
    archive = await Archive.open(archive_path_for(notebook))
    sid = await archive.create_session(notebook_path=str(notebook), model="m")
    for text in texts:
        await archive.append_turn(sid, TurnDraft(role="user", content=text))
    return archive, sid


async def test_all_notebooks_finds_a_fact_in_another_notebook_and_names_it(
    tmp_path: Path, call: Caller
) -> None:
    (tmp_path / ".git").mkdir()
    other, _ = await notebook_with(tmp_path / "etl" / "load.ipynb", "the warehouse key is ZX-81")
    await other.close()
    here, sid = await notebook_with(tmp_path / "report.ipynb", "plot the totals")
    try:
        call.ctx = dataclasses.replace(
            call.ctx, archive=here, session_id=sid, project=ProjectArchives(tmp_path)
        )
        own = await call("conversation_recall", action="search", query="warehouse key")
        assert "No matches" in own.text_content
        found = await call(
            "conversation_recall", action="search", query="warehouse key", scope="all_notebooks"
        )
        text = found.text_content
        assert not found.is_error, text
        assert "etl/load.ipynb · session" in text
        assert "ZX-81" in text
        assert "(match)" in text
    finally:
        await here.close()


async def test_scope_notebook_searches_every_session_of_this_notebook(
    tmp_path: Path, call: Caller
) -> None:
    archive, first = await notebook_with(tmp_path / "nb.ipynb", "the seed was 1234 in the old run")
    try:
        second = await archive.create_session(notebook_path=str(tmp_path / "nb.ipynb"), model="m")
        await archive.append_turn(second, TurnDraft(role="user", content="new start"))
        call.ctx = dataclasses.replace(call.ctx, archive=archive, session_id=second)
        found = await call("conversation_recall", action="search", query="seed", scope="notebook")
        assert f"Session {first[:8]}" in found.text_content
    finally:
        await archive.close()


async def test_all_notebooks_without_a_project_says_what_to_use(call: Caller) -> None:
    out = await call("conversation_recall", action="search", query="x", scope="all_notebooks")
    assert out.is_error
    assert "scope=notebook" in out.text_content
