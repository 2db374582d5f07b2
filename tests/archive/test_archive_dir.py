"""``archive_dir`` (DESIGN §13): archives under one folder, one per notebook, found again by
resume, project search and the CLI; the hygiene rules of ``.loom/`` hold there too."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import loom_jupyter
from loom_jupyter.archive import Archive, archive_path_for
from loom_jupyter.archive.paths import configured_archive_dir, earlier_archive, folder_key
from loom_jupyter.archive.project import ProjectArchives, find_archives
from loom_jupyter.errors import ArchiveLinkError, LoomConfigError
from loom_jupyter.messages import TurnDraft


async def write_notebook(notebook: Path, *texts: str) -> Path:
    """``notebook`` on disk and an archive (wherever the rule puts it) with ``texts``."""
    _touch(notebook)
    path = archive_path_for(notebook)
    async with Archive.open(path) as archive:
        sid = await archive.create_session(notebook_path=str(notebook), model="m")
        for text in texts:
            await archive.append_turn(sid, TurnDraft(role="user", content=text))
    return path


def _touch(notebook: Path) -> None:
    notebook.parent.mkdir(parents=True, exist_ok=True)
    notebook.write_text("{}")


def test_archives_go_under_archive_dir_named_after_the_notebook_and_its_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "persist" / "loom"
    monkeypatch.setenv("LOOM_ARCHIVE_DIR", str(home))
    notebook = tmp_path / "work" / "analysis.ipynb"
    notebook.parent.mkdir()
    path = archive_path_for(notebook)
    assert path.name == "analysis.ipynb.sqlite"
    assert path.parent.parent == home
    assert re.fullmatch(r".+-work-[0-9a-f]{12}", path.parent.name)  # a readable slug, a hash
    assert path.parent.name == folder_key(notebook.parent)
    assert stat.S_IMODE(home.stat().st_mode) == 0o700  # made private when missing
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert (path.parent / ".gitignore").read_text() == "*\n"
    assert not (notebook.parent / ".loom").exists()  # nothing beside the notebook
    # the same file name in another folder gets its own sub-folder
    other = archive_path_for(tmp_path / "elsewhere" / "work" / "analysis.ipynb")
    assert other.parent != path.parent
    assert re.fullmatch(r"elsewhere-work-[0-9a-f]{12}", other.parent.name)


def test_a_folder_reached_through_a_link_finds_the_same_archives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOOM_ARCHIVE_DIR", str(tmp_path / "archives"))
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    assert archive_path_for(tmp_path / "link" / "a.ipynb") == archive_path_for(real / "a.ipynb")


def test_where_archive_dir_comes_from(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "loom" / "loom.yaml"
    assert configured_archive_dir() is None
    config.parent.mkdir(parents=True)
    config.write_text(f"archive_dir: {tmp_path / 'from-yaml'}\n")
    assert configured_archive_dir() == configured_archive_dir()  # cached while unchanged
    found = configured_archive_dir()
    assert found is not None
    assert (found.path, found.source) == (tmp_path / "from-yaml", str(config))
    monkeypatch.setenv("KERNEL_LOOM_ARCHIVE_DIR", str(tmp_path / "gateway"))
    found = configured_archive_dir()
    assert found is not None
    assert (found.path, found.source) == (tmp_path / "gateway", "KERNEL_LOOM_ARCHIVE_DIR")
    monkeypatch.setenv("LOOM_ARCHIVE_DIR", str(tmp_path / "own"))
    found = configured_archive_dir()
    assert found is not None
    assert (found.path, found.source) == (tmp_path / "own", "LOOM_ARCHIVE_DIR")
    monkeypatch.setenv("LOOM_ARCHIVE_DIR", "relative/archives")
    with pytest.raises(LoomConfigError, match="absolute path"):
        archive_path_for(tmp_path / "a.ipynb")


def test_a_projects_loom_yaml_cannot_move_archives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "loom.yaml").write_text(f"archive_dir: {tmp_path / 'stolen'}\n")
    path = archive_path_for(tmp_path / "a.ipynb")
    assert path == tmp_path / ".loom" / "a.ipynb.sqlite"
    assert not (tmp_path / "stolen").exists()


def test_a_link_in_archive_dir_is_refused_unfollowed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "archives"
    monkeypatch.setenv("LOOM_ARCHIVE_DIR", str(home))
    notebook = tmp_path / "work" / "a.ipynb"
    notebook.parent.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    home.mkdir()
    (home / folder_key(notebook.parent)).symlink_to(elsewhere)
    with pytest.raises(ArchiveLinkError, match="symbolic link"):
        archive_path_for(notebook)
    with pytest.raises(ArchiveLinkError):
        archive_path_for(notebook, create=False)
    assert list(elsewhere.iterdir()) == []  # nothing written through the link


def test_an_unwritable_archive_dir_says_which_setting_named_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("KERNEL_LOOM_ARCHIVE_DIR", str(blocker / "archives"))
    with pytest.raises(loom_jupyter.errors.ArchiveReadOnlyError, match="KERNEL_LOOM_ARCHIVE_DIR"):
        archive_path_for(tmp_path / "a.ipynb")
    assert not (tmp_path / ".loom").exists()  # no fallback beside the notebook


def test_a_folder_not_on_this_machine_gets_clear_words(tmp_path: Path) -> None:
    gone = tmp_path / "server-side" / "work" / "a.ipynb"
    with pytest.raises(loom_jupyter.errors.ArchiveReadOnlyError, match="not on this machine"):
        archive_path_for(gone)


def test_an_archive_left_in_loom_is_named_not_moved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    notebook = tmp_path / "a.ipynb"
    beside = archive_path_for(notebook)
    beside.write_bytes(b"")
    assert earlier_archive(notebook) is None  # no archive_dir: it is the archive
    monkeypatch.setenv("LOOM_ARCHIVE_DIR", str(tmp_path / "archives"))
    assert earlier_archive(notebook) == beside
    assert beside.exists()


async def test_project_search_finds_the_projects_archives_in_archive_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOOM_ARCHIVE_DIR", str(tmp_path / "archives"))
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    await write_notebook(project / "cleaning.ipynb", "we dropped the rows with bad dates")
    await write_notebook(project / "models" / "forecast.ipynb", "the churn threshold is 0.37")
    await write_notebook(tmp_path / "other" / "x.ipynb", "churn threshold of another project")
    monkeypatch.delenv("LOOM_ARCHIVE_DIR")
    old = await write_notebook(project / "legacy.ipynb", "an old churn note in .loom")
    monkeypatch.setenv("LOOM_ARCHIVE_DIR", str(tmp_path / "archives"))
    paths, left_out = find_archives(project)
    assert left_out == 0
    assert len(paths) == 3
    assert old in paths
    found = await ProjectArchives(project).search_project("churn threshold")
    assert found.archives == 3
    assert {hit.notebook for hit in found.hits} == {"models/forecast.ipynb", "legacy.ipynb"}


async def test_the_cli_finds_the_archive_with_the_same_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "archives"
    monkeypatch.setenv("KERNEL_LOOM_ARCHIVE_DIR", str(home))
    notebook = tmp_path / "work" / "sales.ipynb"
    archive = await write_notebook(notebook, "plot revenue by region")
    assert home in archive.parents
    with_it = _cli("sessions", str(notebook), KERNEL_LOOM_ARCHIVE_DIR=str(home))
    assert with_it.returncode == 0, with_it.stderr
    assert "plot revenue by region" in with_it.stdout
    shown = _cli("show", str(notebook), LOOM_ARCHIVE_DIR=str(home))
    assert "plot revenue by region" in shown.stdout
    without = _cli("sessions", str(notebook))
    assert without.returncode == 2
    assert "No archive" in without.stderr


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
