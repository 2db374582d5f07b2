"""``loom-jupyter recover``: the real command on real damaged archives."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from clirun import run_cli
from damaged_archive import Ledger, build_ledger, count, integrity, overwrite_pages, zero_header

from loom_jupyter.archive import archive_path_for

if TYPE_CHECKING:
    from clirun import Notebook


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
async def damaged(tmp_path: Path) -> tuple[Path, Ledger]:
    """A notebook whose 800-turn archive had pages overwritten mid-file."""
    notebook = tmp_path / "sales.ipynb"
    notebook.write_text("{}")
    archive = archive_path_for(notebook)
    ledger = await build_ledger(archive, str(notebook), turns=800)
    overwrite_pages(archive, 4, hits="conversation_turns")
    return notebook, ledger


def test_recover_a_damaged_archive_then_browse_it(damaged: tuple[Path, Ledger]) -> None:
    notebook, ledger = damaged
    archive = archive_path_for(notebook)
    shown = [run_cli("show", str(notebook), sid) for sid in ledger.sessions]
    assert any("%cowork recover" in result.err for result in shown), [
        (r.code, r.err[:150]) for r in shown
    ]

    result = run_cli("recover", str(notebook))

    assert result.code == 0, result.err
    saved = re.search(r"([\d,]+) of ([\d,]+) turns saved", result.out)
    assert saved is not None
    assert int(saved[1].replace(",", "")) == count(archive, "conversation_turns")
    assert int(saved[1].replace(",", "")) >= 0.9 * int(saved[2].replace(",", ""))
    kept = re.search(r"The damaged file is kept as (\S+)\.\n", result.out)
    assert kept is not None
    assert Path(kept[1]).is_file()
    assert integrity(archive) == [("ok",)]
    listed = run_cli("sessions", str(notebook))
    assert listed.code == 0
    assert ledger.sessions[-1][:8] in listed.out


async def test_a_zeroed_header_is_rebuilt_without_move_aside(tmp_path: Path) -> None:
    """The 100-byte header destroyed, every page intact: all turns saved, no --move-aside."""
    notebook = tmp_path / "sales.ipynb"
    notebook.write_text("{}")
    archive = archive_path_for(notebook)
    ledger = await build_ledger(archive, str(notebook), turns=200)
    zero_header(archive)
    shown = run_cli("show", str(notebook), ledger.sessions[-1])
    assert "%cowork recover" in shown.err
    assert "--move-aside" not in shown.err

    result = run_cli("recover", str(notebook))

    assert result.code == 0, result.err
    assert "201 of 201 turns saved (100.0 %)" in result.out
    assert "header was destroyed; it was rebuilt" in result.out
    assert "by tree" in result.out
    assert "by pages" in result.out
    assert integrity(archive) == [("ok",)]
    found = run_cli("search", str(notebook), "revenue")
    assert found.code == 0, found.err
    assert "revenue" in found.out


def test_an_intact_archive_is_not_touched(notebook: Notebook) -> None:
    archive = archive_path_for(notebook.path)
    before = _digest(archive)
    result = run_cli("recover", str(archive))  # the .sqlite path works too
    assert result.code == 0
    assert "is not damaged" in result.out
    assert "nothing was changed" in result.out
    assert _digest(archive) == before
    assert sorted(p.name for p in archive.parent.iterdir()) == [".gitignore", archive.name]


def test_a_file_that_is_not_sqlite_needs_move_aside(tmp_path: Path) -> None:
    notebook = tmp_path / "nb.ipynb"
    notebook.write_text("{}")
    archive = archive_path_for(notebook)
    archive.write_bytes(b"this is not a database\n" * 40)
    before = _digest(archive)

    refused = run_cli("recover", str(notebook))
    assert refused.code == 1
    assert "--move-aside" in refused.err
    assert _digest(archive) == before

    moved = run_cli("recover", str(notebook), "--move-aside")
    assert moved.code == 0, moved.err
    assert "kept as" in moved.out
    assert not archive.exists()
    [kept] = [p for p in archive.parent.iterdir() if ".damaged-" in p.name]
    assert _digest(kept) == before
    assert run_cli("sessions", str(notebook)).code == 2  # no archive: a new one starts later


def test_recover_help() -> None:
    result = run_cli("recover", "--help")
    assert result.code == 0
    assert "loom-jupyter recover analysis.ipynb" in result.out
    assert "--move-aside" in result.out
    assert ".damaged-" in result.out
    assert "recover" in run_cli("--help").out
