"""Bad input through a real IPython shell: each case ends in a clear message and an intact archive.

The cases and their expected messages are data in ``cases.py``; the tests
here run them. File and tool cases share one runner: the fake model calls the
tool with the bad input, the tool result (what the model reads) must carry the
expected message, and nothing outside the notebook folder is read or changed.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import sys
from contextlib import closing, contextmanager
from typing import TYPE_CHECKING, Any

import pytest

from .cases import BAD_INPUTS, PASTED_KEY
from .conftest import SEED

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from .conftest import Desk

CASES = {case.id: case for case in BAD_INPUTS}


def expect(case_id: str) -> str:
    """The message case ``case_id`` must show (the table is the single source)."""
    return CASES[case_id].expect


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@contextmanager
def _immutable(path: Path) -> Iterator[None]:
    """Make ``path`` unwritable for everyone, root included (chmod alone does not stop root)."""
    root = os.geteuid() == 0
    mode = path.stat().st_mode
    path.chmod(0o500 if path.is_dir() else 0o400)
    if root:
        subprocess.run(["chattr", "+i", str(path)], check=True)
    try:
        yield
    finally:
        if root:
            subprocess.run(["chattr", "-i", str(path)], check=True)
        path.chmod(mode)


def test_empty_prompts(make_desk: Callable[..., Desk]) -> None:
    desk = make_desk()
    requests = len(desk.fake.message_requests)
    assert expect("prompt-empty") in desk.magic("")
    assert expect("prompt-blank-cell") in desk.cell("   \n\t  \n")
    assert len(desk.fake.message_requests) == requests  # nothing was sent
    assert desk.rows("SELECT count(*) FROM conversation_turns") == [(2,)]
    desk.assert_intact()


def test_huge_prompts(make_desk: Callable[..., Desk]) -> None:
    desk = make_desk()
    requests = len(desk.fake.message_requests)
    cell = "word " * 1_000_000  # 5 MB
    assert expect("prompt-5mb") in desk.cell(cell)
    line = "x" * 5_000_000
    assert expect("prompt-5mb-line") in desk.magic(line)
    assert len(desk.fake.message_requests) == requests  # refused before sending
    lengths = desk.rows("SELECT length(content) FROM conversation_turns WHERE role = 'user'")
    assert lengths[1:] == [(len(cell.strip()),), (len(line),)]  # kept verbatim all the same
    desk.assert_intact()


def test_control_characters(make_desk: Callable[..., Desk]) -> None:
    desk = make_desk()
    odd = "a\x00b \x1b[31mred\x1b[0m tab\there \u202e reversed \ud800 lone"
    printed = desk.magic(odd)
    assert expect("prompt-control-chars") in printed
    kept = desk.rows("SELECT content FROM conversation_turns WHERE turn_number = 3")
    assert kept
    assert "red" in kept[0][0]
    assert "reversed" in kept[0][0]
    desk.assert_intact()


def test_model_output_surrogate(make_desk: Callable[..., Desk]) -> None:
    desk = make_desk()
    desk.fake.add("model says half \ud800 pair")
    assert expect("model-surrogate") in desk.magic("say something odd")
    assert "No turns" in desk.magic("search lone \udfff surrogate")
    desk.fake.add("and on we go.")
    assert "and on we go." in desk.magic("again")  # the next request is still valid
    kept = desk.rows("SELECT content FROM conversation_turns WHERE turn_number = 4")
    assert kept == [("model says half \ufffd pair",)]
    desk.assert_intact()


def test_shell_that_never_ends(
    make_desk: Callable[..., Desk], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOOM_SHELL_TIMEOUT_SECONDS", "1")
    desk = make_desk()
    assert "done." in desk.tool_turn("shell", {"command": "sleep 600; echo never"})
    content, is_error = desk.last_tool_result()
    assert expect("shell-never-ends") in content
    assert "never" not in content.split("\n", 1)[1]  # killed before it could print
    assert is_error == 1
    desk.assert_intact()


def test_pasted_key(make_desk: Callable[..., Desk]) -> None:
    desk = make_desk()
    printed = desk.magic(f"my key is {PASTED_KEY}, why is it refused?")
    assert expect("prompt-api-key") in printed
    assert PASTED_KEY not in printed
    assert PASTED_KEY.encode() not in desk.archive.read_bytes()
    kept = desk.rows("SELECT content FROM conversation_turns WHERE turn_number = 3")
    assert kept == [("my key is [REDACTED], why is it refused?",)]
    assert all(PASTED_KEY not in str(r.body) for r in desk.fake.message_requests)
    desk.assert_intact()


def test_bad_subcommand_arguments(make_desk: Callable[..., Desk], tmp_path: Path) -> None:
    desk = make_desk()
    assert expect("export-bad-path") in desk.magic(f"export {tmp_path / 'missing' / 'x.md'}")
    assert expect("resume-unknown") in desk.magic("resume 99")
    assert "OKAPI" in desk.magic("sessions")  # still in the same session
    desk.assert_intact()


def test_odd_notebook_name(make_desk: Callable[..., Desk], tmp_path: Path) -> None:
    name = "my \"odd\" nötebook ✓ 'q' (1).ipynb"
    desk = make_desk(tmp_path / "dir with spaces" / name)
    assert expect("notebook-odd-name") in desk.outputs[0]
    assert name in desk.outputs[0]
    assert desk.archive.name == f"{name}.sqlite"
    assert desk.archive.is_file()
    assert "Exported 2 turns" in desk.magic("export")
    assert list(desk.notebook.parent.glob("*-cowork-*.md"))
    listed = subprocess.run(
        [sys.executable, "-m", "loom_jupyter.cli", "sessions", str(desk.notebook)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert SEED[:15] in listed.stdout
    desk.assert_intact()


@contextmanager
def _locked(archive: Path) -> Iterator[None]:
    """Another process's exclusive lock on the archive, for the block."""
    with closing(sqlite3.connect(archive, isolation_level=None)) as other:
        other.execute("BEGIN EXCLUSIVE")
        try:
            yield
        finally:
            other.execute("ROLLBACK")


def test_locked_archive(make_desk: Callable[..., Desk]) -> None:
    desk = make_desk()
    with _locked(desk.archive):
        assert expect("archive-locked") in desk.magic("written while locked")
    desk.fake.add("back.")
    assert "back." in desk.magic("after the lock")
    desk.assert_intact()


def test_locked_at_load(make_desk: Callable[..., Desk]) -> None:
    desk = make_desk()
    desk.unload()
    with _locked(desk.archive):
        printed = desk.load() + desk.magic("while locked")
    assert expect("archive-locked-at-load") in printed
    desk.fake.add("open again.")
    assert "open again." in desk.magic("after the lock")  # no reload needed
    desk.assert_intact()


def test_unwritable_archive(make_desk: Callable[..., Desk]) -> None:
    desk = make_desk()
    desk.unload()
    digest = _digest(desk.archive)
    with _immutable(desk.archive):
        printed = desk.load() + desk.magic("anyone there?")
        assert _digest(desk.archive) == digest
    assert expect("archive-immutable") in printed
    assert str(desk.archive) in printed
    desk.assert_intact()


@pytest.mark.parametrize("damage", ["not-sqlite", "truncated"])
def test_corrupt_archive(damage: str, make_desk: Callable[..., Desk]) -> None:
    desk = make_desk()
    desk.unload()
    _damage(desk.archive, damage)
    digest = _digest(desk.archive)
    printed = desk.load() + desk.magic("hello?")
    assert expect(f"archive-{damage}") in printed
    assert str(desk.archive) in printed
    assert _digest(desk.archive) == digest  # left untouched


def _damage(archive: Path, how: str) -> None:
    with closing(sqlite3.connect(archive)) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = archive.read_bytes()
    if how == "not-sqlite":
        archive.write_bytes(b"PK\x03\x04 this is a zip file, not a database" + data[64:200])
    else:
        archive.write_bytes(data[: len(data) // 2])
    for suffix in ("-wal", "-shm"):
        archive.with_name(archive.name + suffix).unlink(missing_ok=True)


def test_newer_archive(make_desk: Callable[..., Desk]) -> None:
    desk = make_desk()
    desk.unload()
    with closing(sqlite3.connect(desk.archive)) as db:
        db.execute("PRAGMA user_version = 999")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    digest = _digest(desk.archive)
    printed = desk.load() + desk.magic("hello?")
    assert expect("archive-newer") in printed
    assert "schema version 999" in printed
    assert _digest(desk.archive) == digest
    assert desk.rows("PRAGMA user_version") == [(999,)]
    desk.assert_intact()


def test_loom_folder_deleted(make_desk: Callable[..., Desk]) -> None:
    desk = make_desk()
    folder = desk.archive.parent
    for path in folder.iterdir():
        path.unlink()
    folder.rmdir()
    desk.fake.add("still here.")
    printed = desk.magic("are you still there?")
    assert expect("loom-deleted") in printed
    assert "still here." in printed
    desk.assert_intact()
    assert desk.rows("SELECT count(*) FROM conversation_turns") == [(4,)]
    assert (folder / ".gitignore").is_file()


def test_cowork_after_unload(make_desk: Callable[..., Desk]) -> None:
    desk = make_desk()
    desk.unload()
    assert expect("after-unload") in desk.magic("hello?")
    assert "resumed" in desk.load()
    desk.assert_intact()


def test_load_twice(make_desk: Callable[..., Desk]) -> None:
    desk = make_desk()
    assert expect("load-twice") in desk.load()
    assert expect("load-twice") in desk.run_cell("%load_ext loom_jupyter")[0]
    desk.fake.add("one coworker.")
    assert "one coworker." in desk.magic("still one?")
    desk.assert_intact()


def test_unload_and_reload(make_desk: Callable[..., Desk]) -> None:
    desk = make_desk()
    desk.unload()
    assert expect("unload-reload") in desk.load()
    out, _ = desk.run_cell("%reload_ext loom_jupyter")
    assert expect("unload-reload") in out
    desk.fake.add("OKAPI, yes.")
    assert "OKAPI, yes." in desk.magic("what was the word?")
    assert SEED in str(desk.fake.message_requests[-1].body)
    desk.assert_intact()


def test_every_case_has_its_test() -> None:
    """The report's claim: each row of the table names a test that exists in this package."""
    from . import test_bad_inputs, test_kernel_cases, test_tool_cases

    modules: list[Any] = [test_bad_inputs, test_kernel_cases, test_tool_cases]
    for case in BAD_INPUTS:
        assert any(hasattr(m, case.test) for m in modules), case
    assert len(BAD_INPUTS) >= 30
    assert len({c.id for c in BAD_INPUTS}) == len(BAD_INPUTS)
