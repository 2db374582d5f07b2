"""A cloned folder's ``.loom/`` is not trusted as found (security review F10).

Real files and real SQLite databases in temp folders; the git repositories are made with
the real ``git`` (the test may run git; Loom itself reads ``.git/index`` and never does).
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import sqlite3
import stat
import subprocess
from typing import TYPE_CHECKING

import pytest
from IPython.core.interactiveshell import InteractiveShell

from loom_jupyter.archive import Archive, archive_path_for
from loom_jupyter.archive.gitindex import is_tracked, tracked_note
from loom_jupyter.archive.project import find_archives, neighbour_pauses
from loom_jupyter.errors import ArchiveError, ArchiveLinkError

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from loom_jupyter.testing import FakeAnthropic

LINK_REFUSED = r"symbolic link .*Loom will not follow or open it.*Remove it \(rm "
TRACKED = "is tracked by git (committed to the repository)"


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _tables(path: Path) -> list[str]:
    uri = f"file:{path}?mode=ro&immutable=1"  # a read-only open of WAL still makes -shm
    with sqlite3.connect(uri, uri=True) as db:
        rows = db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        return [name for (name,) in rows]


def _places(folder: Path) -> Path:
    """Another application's SQLite database (a browser's history, say; in WAL mode)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "places.sqlite"
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("CREATE TABLE moz_places (id INTEGER PRIMARY KEY, url TEXT)")
    db.execute("INSERT INTO moz_places (url) VALUES ('https://example.org/')")
    db.commit()
    db.close()
    return path


def _open(path: Path) -> None:
    async def run() -> None:
        async with Archive.open(path):
            pass

    asyncio.run(run())


def _refusal(path: Path) -> ArchiveError | None:
    """What opening ``path`` raised (``None``: it opened)."""
    try:
        _open(path)
    except ArchiveError as error:
        return error
    return None


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=Test", "-c", "user.email=test@example.org", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


# -- links ------------------------------------------------------------------------------


@pytest.mark.attack(
    attack=(
        "A cloned folder's `.loom/nb.ipynb.sqlite` is a symbolic link to another application's "
        "SQLite database: opening the notebook adds Loom's tables and WAL to it"
    ),
    stopped_by=(
        "The archive must be a regular file: a link is refused (lstat, O_NOFOLLOW) before "
        "anything opens it; its target's bytes and folder are unchanged"
    ),
    ref="F10",
)
def test_a_symlinked_archive_is_refused_and_its_target_left_alone(tmp_path: Path) -> None:
    victim = _places(tmp_path / "victim")
    before, tables = _digest(victim), _tables(victim)
    repo = tmp_path / "repo"
    (repo / ".loom").mkdir(parents=True)
    notebook = repo / "nb.ipynb"
    (repo / ".loom" / "nb.ipynb.sqlite").symlink_to(os.path.relpath(victim, repo / ".loom"))

    refused = _refusal(archive_path_for(notebook))

    assert _tables(victim) == tables == ["moz_places"]
    assert _digest(victim) == before
    assert sorted(p.name for p in victim.parent.iterdir()) == ["places.sqlite"]  # no -wal
    assert isinstance(refused, ArchiveLinkError)
    assert re.search(LINK_REFUSED, str(refused))
    assert "nb.ipynb.sqlite is a symbolic link (to ../../victim/places.sqlite)" in str(refused)


@pytest.mark.attack(
    attack=(
        "A `-wal`, `-shm` or `-journal` link planted beside the archive makes SQLite write "
        "into the file it points at"
    ),
    stopped_by=(
        "The archive's SQLite companions must be regular files too: refused before the "
        "archive is created"
    ),
    ref="F10",
)
@pytest.mark.parametrize("companion", ["-wal", "-shm", "-journal"])
def test_a_symlinked_companion_file_is_refused(tmp_path: Path, companion: str) -> None:
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("keep me\n")
    archive = archive_path_for(tmp_path / "nb.ipynb")
    archive.with_name(archive.name + companion).symlink_to(elsewhere)

    refused = _refusal(archive)

    assert elsewhere.read_text() == "keep me\n"
    assert not archive.exists()  # refused before anything was created
    assert isinstance(refused, ArchiveLinkError)
    assert re.search(LINK_REFUSED, str(refused))


@pytest.mark.attack(
    attack=(
        "`.loom` is a symbolic link to a folder elsewhere: the archive is created and written there"
    ),
    stopped_by=(
        "`.loom` must be a real folder: a link (or a file) is refused without being "
        "followed, also for an archive path found without `archive_path_for`"
    ),
    ref="F10",
)
def test_a_symlinked_loom_folder_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / ".loom").symlink_to(elsewhere, target_is_directory=True)
    notebook = repo / "nb.ipynb"

    with pytest.raises(ArchiveLinkError, match=LINK_REFUSED):
        archive_path_for(notebook)
    refused = _refusal(archive_path_for(notebook, create=False))  # a path found without it

    assert list(elsewhere.iterdir()) == []
    assert isinstance(refused, ArchiveLinkError)
    assert re.search(LINK_REFUSED, str(refused))


def test_a_loom_file_in_place_of_the_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / ".loom").write_text("not a folder")
    with pytest.raises(ArchiveLinkError, match=r"\.loom is a file, not a folder"):
        archive_path_for(tmp_path / "nb.ipynb")


@pytest.mark.attack(
    attack=(
        "Another notebook's archive is a link to a WAL database: project search and a new "
        "notebook's neighbour pauses open it read-only, which still puts -wal and -shm "
        "files beside it"
    ),
    stopped_by=("The project-wide readers skip linked archives and linked `.loom` folders"),
    ref="F10",
)
def test_other_notebooks_linked_archives_are_not_read(tmp_path: Path) -> None:
    """Project search and a new notebook's neighbours open other archives read-only, and
    even a read-only open puts -wal and -shm files beside a WAL database: links are skipped."""
    victim = _places(tmp_path / "victim")
    before = _digest(victim)
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    own = archive_path_for(repo / "nb.ipynb")
    _open(own)
    (own.parent / "linked.ipynb.sqlite").symlink_to(victim)
    (repo / "sub").mkdir()
    (repo / "sub" / ".loom").symlink_to(victim.parent, target_is_directory=True)

    found, left_out = find_archives(repo)
    pauses = asyncio.run(neighbour_pauses(own))

    assert (found, left_out, pauses) == ([own], 0, ())
    assert sorted(p.name for p in victim.parent.iterdir()) == ["places.sqlite"]
    assert _digest(victim) == before


# -- the folder's .gitignore and mode ---------------------------------------------------


@pytest.mark.attack(
    attack=(
        "A cloned `.loom/.gitignore` that is empty, has no `*` or lets archives in again "
        "(`!*.sqlite`) gets them committed; a loose `.loom` mode lets others read them"
    ),
    stopped_by=(
        "The `.gitignore` is repaired to end in `*` (its other lines kept) and the folder "
        "tightened to 0700 when it is the person's"
    ),
    ref="F10",
)
@pytest.mark.parametrize(
    ("found", "repaired"),
    [
        ("", "*\n"),
        ("# notes\n*.tmp\n", "# notes\n*.tmp\n*\n"),
        ("*.tmp", "*.tmp\n*\n"),
        ("*\n!*.sqlite\n", "*\n!*.sqlite\n*\n"),  # a later exception lets archives in again
    ],
)
def test_a_gitignore_without_a_final_star_is_repaired(
    tmp_path: Path, found: str, repaired: str
) -> None:
    folder = tmp_path / ".loom"
    folder.mkdir()
    folder.chmod(0o777)
    (folder / ".gitignore").write_text(found)

    archive_path_for(tmp_path / "nb.ipynb")

    assert (folder / ".gitignore").read_text() == repaired
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    archive_path_for(tmp_path / "nb.ipynb")  # repaired once
    assert (folder / ".gitignore").read_text() == repaired


@pytest.mark.attack(
    attack=(
        "`.loom/.gitignore` is a symbolic link, which git does not read: archives are not ignored"
    ),
    stopped_by=(
        "A linked `.gitignore` is replaced by a regular file holding `*`; the link's target "
        "is not touched"
    ),
    ref="F10",
)
def test_a_symlinked_gitignore_is_replaced_by_a_file(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("keep me\n")
    folder = tmp_path / ".loom"
    folder.mkdir()
    (folder / ".gitignore").symlink_to(elsewhere)

    archive_path_for(tmp_path / "nb.ipynb")

    assert not (folder / ".gitignore").is_symlink()
    assert (folder / ".gitignore").read_text() == "*\n"
    assert elsewhere.read_text() == "keep me\n"


# -- an archive tracked by git ----------------------------------------------------------


def _repo_with_archive(tmp_path: Path, *, version: int) -> Path:
    """A git repository whose notebook's archive is committed (index ``version``; git
    writes version 3 only for entries with extended flags: an intent-to-add file)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    notebook = repo / "nb.ipynb"
    notebook.write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
    _open(archive_path_for(notebook))
    (repo / "other.txt").write_text("x\n")
    _git(repo, "add", "-f", ".loom/nb.ipynb.sqlite", "other.txt", "nb.ipynb")
    _git(repo, "commit", "-q", "-m", "with the archive")
    if version == 3:
        (repo / "later.txt").write_text("y\n")
        _git(repo, "add", "--intent-to-add", "later.txt")
    _git(repo, "update-index", "--index-version", str(version))
    assert (repo / ".git" / "index").read_bytes()[:8] == b"DIRC\0\0\0" + bytes([version])
    return notebook


@pytest.mark.parametrize("version", [2, 3, 4])
def test_a_committed_archive_is_found_in_the_index(tmp_path: Path, version: int) -> None:
    notebook = _repo_with_archive(tmp_path, version=version)
    archive = archive_path_for(notebook)

    assert is_tracked(archive)
    assert is_tracked(notebook.parent / "other.txt")
    assert not is_tracked(archive_path_for(notebook.parent / "other.ipynb"))
    note = tracked_note(archive)
    assert note is not None
    assert TRACKED in note
    assert "`git rm --cached .loom/nb.ipynb.sqlite`" in note
    assert is_tracked(notebook.parent / "later.txt") is (version == 3)  # intent-to-add

    _git(notebook.parent, "rm", "-q", "--cached", ".loom/nb.ipynb.sqlite")
    assert not is_tracked(archive)
    assert tracked_note(archive) is None
    assert is_tracked(notebook.parent / "other.txt")


def test_a_split_index_and_its_deletions_are_read(tmp_path: Path) -> None:
    notebook = _repo_with_archive(tmp_path, version=2)
    repo = notebook.parent
    _git(repo, "update-index", "--split-index")
    (repo / "new.txt").write_text("n\n")
    _git(repo, "add", "new.txt")
    assert list((repo / ".git").glob("sharedindex.*"))

    assert is_tracked(archive_path_for(notebook))  # in the shared index
    assert is_tracked(repo / "new.txt")  # in the split index's own entries
    _git(repo, "rm", "-q", "--cached", ".loom/nb.ipynb.sqlite")  # a bit in the delete bitmap
    assert not is_tracked(archive_path_for(notebook))
    assert is_tracked(repo / "other.txt")


def test_a_worktree_and_a_sha256_repository_are_read(tmp_path: Path) -> None:
    notebook = _repo_with_archive(tmp_path, version=2)
    _git(notebook.parent, "worktree", "add", "-q", str(tmp_path / "tree"))
    assert (tmp_path / "tree" / ".git").read_text().startswith("gitdir: ")
    assert is_tracked(tmp_path / "tree" / ".loom" / "nb.ipynb.sqlite")
    assert not is_tracked(tmp_path / "tree" / ".loom" / "other.ipynb.sqlite")

    repo = tmp_path / "sha256"
    repo.mkdir()
    _git(repo, "init", "-q", "--object-format=sha256")
    (repo / ".loom").mkdir()
    (repo / ".loom" / "nb.ipynb.sqlite").write_bytes(b"")
    _git(repo, "add", "-f", ".loom/nb.ipynb.sqlite")
    for version in (2, 4):
        _git(repo, "update-index", "--index-version", str(version))
        assert is_tracked(repo / ".loom" / "nb.ipynb.sqlite")
        assert not is_tracked(repo / ".loom" / "other.ipynb.sqlite")


@pytest.fixture
def shell() -> Iterator[InteractiveShell]:
    """The process's InteractiveShell, with a clean user namespace."""
    ip = InteractiveShell.instance()
    ip.reset(new_session=False)
    yield ip
    ip.reset(new_session=False)


def _banner(shell: InteractiveShell, capsys: pytest.CaptureFixture[str]) -> str:
    """What ``%load_ext loom_jupyter`` printed, its wrapping undone."""
    capsys.readouterr()
    shell.run_line_magic("load_ext", "loom_jupyter")
    try:
        return " ".join(capsys.readouterr().out.split())
    finally:
        shell.run_line_magic("unload_ext", "loom_jupyter")


@pytest.mark.attack(
    attack=(
        "A committed archive is resumed silently: the repository's history and session "
        "state become the person's conversation, and new turns would be committed"
    ),
    stopped_by=(
        "The banner names an archive git tracks and how to untrack it, found by reading "
        "`.git/index` (git is never run: a configured core.fsmonitor does not run)"
    ),
    ref="F10",
)
def test_the_banner_names_a_tracked_archive(
    tmp_path: Path,
    shell: InteractiveShell,
    fake_anthropic: FakeAnthropic,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    notebook = _repo_with_archive(tmp_path, version=2)
    marker = tmp_path / "fsmonitor-ran"
    _git(notebook.parent, "config", "core.fsmonitor", f"touch {marker}; false")
    monkeypatch.setenv("JPY_SESSION_NAME", str(notebook))
    tracked_line = f"archive .loom/nb.ipynb.sqlite {TRACKED}"
    remedy = "`git rm --cached .loom/nb.ipynb.sqlite` in the notebook's folder stops tracking it"

    banner = _banner(shell, capsys)
    assert "loom: nb.ipynb" in banner
    assert tracked_line in banner
    assert remedy in banner
    assert not marker.exists()  # Loom read .git/index; it did not run git

    _git(
        notebook.parent,
        "-c",
        "core.fsmonitor=false",
        "rm",
        "-q",
        "--cached",
        ".loom/nb.ipynb.sqlite",
    )
    banner = _banner(shell, capsys)
    assert "loom: nb.ipynb" in banner
    assert TRACKED not in banner
