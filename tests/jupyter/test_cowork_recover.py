"""``%cowork recover`` on a real IPython shell: a damaged archive, then the conversation goes on."""

from __future__ import annotations

import asyncio
import hashlib
import shutil
from typing import TYPE_CHECKING

import pytest
from damaged_archive import (
    Ledger,
    build_ledger,
    checkpoint,
    count,
    integrity,
    overwrite_page,
    overwrite_pages,
    root_page,
    zero_header,
)

from loom_jupyter.archive import archive_path_for
from loom_jupyter.jupyter.coworker.registry import current

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from IPython.core.interactiveshell import InteractiveShell

    from loom_jupyter.testing import FakeAnthropic

pytest_plugins = ["loom_jupyter.testing.pytest_plugin"]


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Ledger]:
    """A 2,000-turn archive built once for the module."""
    path = tmp_path_factory.mktemp("pristine") / "analysis.ipynb.sqlite"
    ledger = asyncio.run(build_ledger(path, "analysis.ipynb"))
    checkpoint(path)
    return path, ledger


@pytest.fixture
def notebook(tmp_path: Path, pristine: tuple[Path, Ledger]) -> Path:
    """A notebook whose archive is a copy of the pristine one."""
    path = tmp_path / "analysis.ipynb"
    shutil.copyfile(pristine[0], archive_path_for(path))
    return path


@pytest.fixture
def magic(
    shell: InteractiveShell,
    fake_anthropic: FakeAnthropic,
    notebook: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> Iterator[Callable[[str, str], str]]:
    """``magic("load_ext", "loom_jupyter")`` runs a line magic and returns what it printed."""
    monkeypatch.setenv("JPY_SESSION_NAME", str(notebook))
    monkeypatch.setenv("LOOM_APPROVAL", "auto")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))

    def run(name: str, line: str) -> str:
        shell.run_line_magic(name, line)
        return capsys.readouterr().out

    yield run
    shell.run_line_magic("unload_ext", "loom_jupyter")


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _kept(archive: Path) -> list[Path]:
    """The damaged files kept beside ``archive`` (not their -wal/-shm)."""
    kept = archive.parent.glob(f"{archive.name}.damaged-*")
    return [path for path in kept if not path.name.endswith(("-wal", "-shm"))]


def _turns_of(archive: Path, session: str) -> int:
    import sqlite3
    from contextlib import closing

    with closing(sqlite3.connect(archive)) as db:
        sql = "SELECT max(turn_number) FROM conversation_turns WHERE session_id = ?"
        return int(db.execute(sql, [session]).fetchone()[0])


def test_load_offers_recover_and_the_session_goes_on(
    magic: Callable[[str, str], str],
    notebook: Path,
    pristine: tuple[Path, Ledger],
    fake_anthropic: FakeAnthropic,
) -> None:
    _, ledger = pristine
    archive = archive_path_for(notebook)
    overwrite_page(archive, root_page(archive, "cowork_sessions"), b"\xee" * 512)

    loaded = magic("load_ext", "loom_jupyter")
    assert "%cowork recover" in loaded  # the banner says what to do
    recovered = magic("cowork", "recover")

    assert "2,001 of 2,001 turns saved (100.0 %)" in recovered
    assert "were recreated" in recovered
    assert "resumed “(recovered) question 0:" in recovered  # the banner of the new coworker
    assert integrity(archive) == [("ok",)]
    assert len(_kept(archive)) == 1
    fake_anthropic.add("Still here.")
    assert "Still here." in magic("cowork", "are you still there?")
    assert _turns_of(archive, ledger.sessions[-1]) == 502  # the latest session went on


def test_recover_while_the_coworker_is_open(
    magic: Callable[[str, str], str],
    shell: InteractiveShell,
    notebook: Path,
    pristine: tuple[Path, Ledger],
    fake_anthropic: FakeAnthropic,
) -> None:
    _, ledger = pristine
    archive = archive_path_for(notebook)
    magic("load_ext", "loom_jupyter")
    before = current(shell)
    overwrite_pages(archive, 5, hits="conversation_turns")  # damaged under a running coworker

    recovered = magic("cowork", "recover")

    assert "turns saved" in recovered
    assert "resumed" in recovered
    assert current(shell) is not before
    assert count(archive, "conversation_turns") >= 0.9 * (ledger.turns + 1)
    assert integrity(archive) == [("ok",)]
    fake_anthropic.add("Carrying on.")
    assert "Carrying on." in magic("cowork", "go on")
    assert _turns_of(archive, ledger.sessions[-1]) == 502


def test_a_destroyed_header_is_rebuilt_and_the_session_goes_on(
    magic: Callable[[str, str], str],
    notebook: Path,
    pristine: tuple[Path, Ledger],
    fake_anthropic: FakeAnthropic,
) -> None:
    _, ledger = pristine
    archive = archive_path_for(notebook)
    zero_header(archive)

    loaded = magic("load_ext", "loom_jupyter")
    assert "%cowork recover" in loaded
    assert "--move-aside" not in loaded  # its pages read: nothing to move aside
    recovered = magic("cowork", "recover")

    assert "2,001 of 2,001 turns saved (100.0 %)" in recovered
    assert "header was destroyed; it was rebuilt" in recovered
    assert integrity(archive) == [("ok",)]
    assert len(_kept(archive)) == 1
    fake_anthropic.add("Back again.")
    assert "Back again." in magic("cowork", "are you back?")
    assert _turns_of(archive, ledger.sessions[-1]) == 502


def test_an_intact_archive_keeps_its_coworker(
    magic: Callable[[str, str], str], shell: InteractiveShell, notebook: Path
) -> None:
    archive = archive_path_for(notebook)
    magic("load_ext", "loom_jupyter")
    before, digest = current(shell), _digest(archive)
    assert "is not damaged" in magic("cowork", "recover")
    assert current(shell) is before
    assert not _kept(archive)
    assert "%cowork recover" in magic("cowork", "recover --help")
    assert "--move-aside" in magic("cowork", "recover --help")
    assert _digest(archive) == digest


def test_a_file_that_is_not_sqlite_moves_aside_only_when_asked(
    magic: Callable[[str, str], str], notebook: Path, fake_anthropic: FakeAnthropic
) -> None:
    archive = archive_path_for(notebook)
    archive.write_bytes(b"PK\x03\x04 a zip file, not a database" * 20)
    digest = _digest(archive)

    assert "--move-aside" in magic("load_ext", "loom_jupyter")
    refused = magic("cowork", "recover")
    assert "--move-aside" in refused
    assert "left untouched" in refused
    assert _digest(archive) == digest

    moved = magic("cowork", "recover --move-aside")

    assert "kept as" in moved
    assert "new session" in moved
    [kept] = _kept(archive)
    assert _digest(kept) == digest
    fake_anthropic.add("A fresh start.")
    assert "A fresh start." in magic("cowork", "hello")
