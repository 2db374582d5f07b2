"""Where a renamed notebook went, and what moving its archive does, on real files."""

from __future__ import annotations

from typing import TYPE_CHECKING

from loom_jupyter.jupyter.notebook_path import NotebookLocation
from loom_jupyter.jupyter.relocate import Relocation, renamed_location

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
