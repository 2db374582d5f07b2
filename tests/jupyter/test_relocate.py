"""Where a renamed notebook went, and what moving its archive does, on real files."""

from __future__ import annotations

from typing import TYPE_CHECKING

from loom_jupyter.archive import Archive, archive_path_for
from loom_jupyter.archive.liveness import this_process_owner
from loom_jupyter.host.upkeep.location import NotebookLocation
from loom_jupyter.host.upkeep.relocate import (
    MAX_ORPHANS,
    Relocation,
    adoption_problem,
    find_orphans,
    renamed_location,
)
from loom_jupyter.messages import TurnDraft

if TYPE_CHECKING:
    from pathlib import Path


def _tree(tmp_path: Path) -> tuple[Path, NotebookLocation]:
    root = tmp_path / "server"
    (root / "sub").mkdir(parents=True)
    old = root / "sub" / "old.ipynb"
    old.write_text("{}")
    return root, NotebookLocation(old.resolve(), "env")


def test_the_new_path_is_joined_to_the_server_root_or_found_above_the_notebook(
    tmp_path: Path,
) -> None:
    root, current = _tree(tmp_path)
    (root / "sub" / "new.ipynb").write_text("{}")
    expected = NotebookLocation((root / "sub" / "new.ipynb").resolve(), "env")
    assert renamed_location(current, "sub/new.ipynb", str(root)) == expected
    assert renamed_location(current, "sub/new.ipynb") == expected  # no root: tried upwards


def test_unchanged_missing_absolute_or_ambiguous_paths_change_nothing(tmp_path: Path) -> None:
    root, current = _tree(tmp_path)
    assert renamed_location(current, "sub/old.ipynb", str(root)) is None  # the same notebook
    assert renamed_location(current, "sub/gone.ipynb", str(root)) is None  # not on this machine
    assert renamed_location(current, str(root / "sub" / "old.ipynb")) is None
    assert renamed_location(current, "") is None
    (root / "sub" / "twin.ipynb").write_text("{}")
    (root / "sub" / "sub").mkdir()
    (root / "sub" / "sub" / "twin.ipynb").write_text("{}")
    assert renamed_location(current, "sub/twin.ipynb") is None  # two folders answer
    for source in ("terminal", "explicit"):  # no notebook, or the one the person named
        chosen = NotebookLocation(current.path, source)  # type: ignore[arg-type]
        assert renamed_location(chosen, "sub/twin.ipynb", str(root)) is None


def test_a_rename_removes_the_old_archive_and_save_as_keeps_it(tmp_path: Path) -> None:
    root, current = _tree(tmp_path)
    new = NotebookLocation((root / "sub" / "new.ipynb").resolve(), "env")
    move = Relocation(current, new)
    move.source.write_bytes(b"archive")
    for suffix in ("-wal", "-shm"):
        (move.source.parent / f"{move.source.name}{suffix}").write_bytes(b"side")
    assert move.keeps_old  # the old notebook is still there: Save As
    assert "old.ipynb keeps its copy" in move.message(conversing=True)
    assert "resumes this session" in move.message(conversing=True)
    assert "resumes" not in move.message(conversing=False)  # nothing said yet to resume
    current.path.unlink()
    assert not move.keeps_old
    move.remove_source()
    assert sorted(p.name for p in move.source.parent.iterdir()) == [".gitignore"]
    assert move.blocked_by() is None
    move.target.write_bytes(b"another notebook's archive")
    assert "new.ipynb already has its own conversation archive" in (move.blocked_by() or "")


async def _archive_with_session(notebook: Path, owner: str | None = None) -> None:
    async with Archive.open(archive_path_for(notebook)) as archive:
        sid = await archive.create_session(notebook_path=str(notebook), model="m")
        await archive.append_turn(sid, TurnDraft(role="user", content="hello"))
        if owner is not None:
            await archive.acquire_lease(sid, owner)


async def test_orphans_are_archives_of_gone_notebooks_that_hold_a_conversation(
    tmp_path: Path,
) -> None:
    here = NotebookLocation(tmp_path / "analysis.ipynb", "env")
    here.path.write_text("{}")
    for name in ("a.ipynb", "b.ipynb", "c.ipynb", "d.ipynb", "alive.ipynb"):
        await _archive_with_session(tmp_path / name)  # their notebook files never existed
    (tmp_path / "kept.ipynb").write_text("{}")
    await _archive_with_session(tmp_path / "kept.ipynb")  # its notebook is there
    async with Archive.open(archive_path_for(tmp_path / "empty.ipynb")):
        pass  # gone, but nothing to offer
    (tmp_path / ".loom" / "ipython-session.sqlite").write_bytes(b"")  # not a notebook's

    found = await find_orphans(here)
    assert len(found) == MAX_ORPHANS  # the newest three
    assert {o.notebook for o in found} <= {
        "a.ipynb",
        "b.ipynb",
        "c.ipynb",
        "d.ipynb",
        "alive.ipynb",
    }
    assert all(o.sessions == 1 and not o.writer_alive for o in found)
    assert "%cowork adopt" in found[0].hint()


async def test_adopting_is_refused_when_it_would_lose_or_mix_something(tmp_path: Path) -> None:
    here = NotebookLocation(tmp_path / "analysis.ipynb", "env")
    here.path.write_text("{}")
    (tmp_path / "open.ipynb").write_text("{}")
    await _archive_with_session(tmp_path / "open.ipynb")
    await _archive_with_session(tmp_path / "busy.ipynb", owner=str(this_process_owner()))
    await _archive_with_session(tmp_path / "gone.ipynb")

    def move(name: str) -> Relocation:
        return Relocation(NotebookLocation(tmp_path / name, "env"), here)

    async with Archive.open(archive_path_for(here.path)) as own:
        assert "still there" in (await adoption_problem(move("open.ipynb"), own, 30.0) or "")
        missing = await adoption_problem(move("never.ipynb"), own, 30.0)
        assert "There is no conversation of never.ipynb" in (missing or "")
        busy = await adoption_problem(move("busy.ipynb"), own, 30.0)
        assert "A live kernel still writes" in (busy or "")
        assert await adoption_problem(move("gone.ipynb"), own, 30.0) is None
        await own.create_session(notebook_path=str(here.path), model="m")
        mixed = await adoption_problem(move("gone.ipynb"), own, 30.0)
        assert "already has a conversation of its own" in (mixed or "")


async def test_a_copied_archive_keeps_every_turn(tmp_path: Path) -> None:
    await _archive_with_session(tmp_path / "gone.ipynb")
    move = Relocation(
        NotebookLocation(tmp_path / "gone.ipynb", "env"),
        NotebookLocation(tmp_path / "new.ipynb", "env"),
    )
    staged = await move.stage_copy()
    assert staged.parent == move.target.parent
    assert move.source.exists()  # the original stays until the move is done
    async with Archive.open(staged) as archive:
        (info,) = await archive.list_sessions()
        assert [t.content for t in await archive.get_turns(info.id)] == ["hello"]


def test_a_path_that_names_no_notebook_file_is_never_followed(tmp_path: Path) -> None:
    root, current = _tree(tmp_path)
    (root / "sub" / "data.csv").write_text("a,b")
    assert renamed_location(current, "sub/data.csv", str(root)) is None
    assert renamed_location(current, "../../../../../../../../etc/passwd") is None
    assert renamed_location(current, "etc/passwd", "/") is None
