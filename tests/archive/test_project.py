"""Search across every notebook archive of a project: root, discovery, read-only, bounds."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

from loom_jupyter.archive import Archive, archive_path_for
from loom_jupyter.archive.project import (
    ProjectArchives,
    find_archives,
    people_search,
    project_root,
)
from loom_jupyter.messages import TurnDraft

if TYPE_CHECKING:
    from pathlib import Path


async def write_notebook(notebook: Path, *texts: str) -> str:
    """An archive beside ``notebook`` holding one session of user turns ``texts``."""
    notebook.parent.mkdir(parents=True, exist_ok=True)
    async with Archive.open(archive_path_for(notebook)) as archive:
        sid = await archive.create_session(notebook_path=str(notebook), model="m")
        for text in texts:
            await archive.append_turn(sid, TurnDraft(role="user", content=text))
        return sid


def test_the_root_is_the_nearest_folder_holding_git(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    deep = tmp_path / "analysis" / "q3" / "sales.ipynb"
    assert project_root(deep) == tmp_path
    assert project_root(tmp_path.parent / "loose" / "x.ipynb") == tmp_path.parent / "loose"


async def test_a_fact_from_another_notebook_names_its_notebook_and_session(
    tmp_path: Path,
) -> None:
    (tmp_path / ".git").mkdir()
    await write_notebook(tmp_path / "cleaning.ipynb", "we dropped the rows with bad dates")
    sid = await write_notebook(
        tmp_path / "models" / "forecast.ipynb",
        "hello",
        "the holdout threshold is 0.37 for the churn model",
        "thanks",
    )
    found = await ProjectArchives(tmp_path).search_project("churn holdout threshold")
    assert found.archives == 2
    assert found.skipped == ()
    best = found.hits[0]
    assert best.notebook == "models/forecast.ipynb"
    assert best.session_id == sid
    assert best.hit.turn_number == 2
    assert [t.turn_number for t in best.context] == [1, 2, 3]


async def test_archives_are_opened_read_only_and_never_created(tmp_path: Path) -> None:
    await write_notebook(tmp_path / "a.ipynb", "alpha beta")
    path = archive_path_for(tmp_path / "a.ipynb")
    before = path.read_bytes()
    await ProjectArchives(tmp_path).search_project("alpha")
    assert path.read_bytes() == before
    assert sorted(p.name for p in (tmp_path / ".loom").glob("*.sqlite")) == ["a.ipynb.sqlite"]


async def test_an_archive_of_another_schema_version_is_skipped_with_a_reason(
    tmp_path: Path,
) -> None:
    await write_notebook(tmp_path / "good.ipynb", "revenue grew in march")
    await write_notebook(tmp_path / "old.ipynb", "revenue fell in april")
    with sqlite3.connect(archive_path_for(tmp_path / "old.ipynb")) as db:
        db.execute("PRAGMA user_version = 1")
    found = await ProjectArchives(tmp_path).search_project("revenue")
    assert [h.notebook for h in found.hits] == ["good.ipynb"]
    assert len(found.skipped) == 1
    assert "old.ipynb" in found.skipped[0]
    assert "schema version 1" in found.skipped[0]


async def test_the_number_of_archives_is_bounded_and_the_rest_reported(tmp_path: Path) -> None:
    for name in ("one", "two", "three"):
        await write_notebook(tmp_path / f"{name}.ipynb", f"shared word in {name}")
    paths, left_out = find_archives(tmp_path, limit=2)
    assert (len(paths), left_out) == (2, 1)
    found = await ProjectArchives(tmp_path, max_archives=2).search_project("shared")
    assert found.archives == 2
    assert found.skipped == ("1 older archive(s) beyond the first 2",)


async def test_tool_and_environment_folders_are_not_walked(tmp_path: Path) -> None:
    await write_notebook(tmp_path / "node_modules" / "pkg" / "x.ipynb", "hidden")
    await write_notebook(tmp_path / ".venv" / "y.ipynb", "hidden")
    await write_notebook(tmp_path / "work" / "z.ipynb", "visible")
    paths, _ = find_archives(tmp_path)
    assert [p.name for p in paths] == ["z.ipynb.sqlite"]


async def test_people_search_gives_json_for_every_scope(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    await write_notebook(tmp_path / "other.ipynb", "the margin target is twelve percent")
    here = tmp_path / "here.ipynb"
    sid = await write_notebook(here, "plot the margin by month", "done")
    async with Archive.open(archive_path_for(here)) as archive:
        own = await people_search(archive, here, "margin", scope="session", session_id=sid)
        assert [m["match"]["content"] for m in own["matches"]] == ["plot the margin by month"]
        assert own["matches"][0]["after"]["content"] == "done"
        wide = await people_search(archive, here, "margin target", scope="all_notebooks")
        assert wide["archives"] == 2
        assert wide["matches"][0]["notebook"] == "other.ipynb"
        assert wide["matches"][0]["kind"] == "phrase"
        lazy = await people_search(archive, here, "margin", scope="session")
        assert lazy["matches"] == []
