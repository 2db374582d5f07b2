"""The reliability suite's surface: a real IPython shell with loom loaded, the fake Messages API.

Kernel cases use real ipykernels (see ``test_kernel_cases.py``); everything that
does not need a separate process runs here, in-process, so the suite stays fast.
"""

from __future__ import annotations

import contextlib
import io
import sqlite3
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pytest
from IPython.core.interactiveshell import InteractiveShell

from loom_jupyter.testing import FakeAnthropic

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

SEED = "remember the word OKAPI"
"""The first prompt of every desk: the earlier turn that must survive each case."""


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    """A fake Messages API per test (a thread and a socket: cheap), so no script entry leaks."""
    with FakeAnthropic() as server:
        yield server


@dataclass
class Desk:
    """A notebook with loom loaded in the process's IPython shell."""

    shell: InteractiveShell
    fake: FakeAnthropic
    notebook: Path
    outputs: list[str] = field(default_factory=list)

    @property
    def archive(self) -> Path:
        return self.notebook.parent / ".loom" / f"{self.notebook.name}.sqlite"

    def magic(self, line: str) -> str:
        """``%cowork LINE``; what it printed."""
        return self._capture(lambda: self.shell.run_line_magic("cowork", line))

    def cell(self, body: str, line: str = "") -> str:
        """``%%cowork LINE`` with ``body``; what it printed."""
        return self._capture(lambda: self.shell.run_cell_magic("cowork", line, body))

    def run_cell(self, source: str) -> tuple[str, Any]:
        """Run a cell through IPython; what it printed and its result."""
        box: list[Any] = []
        out = self._capture(lambda: box.append(self.shell.run_cell(source)))
        return out, box[0]

    def load(self) -> str:
        return self._capture(lambda: self.shell.run_line_magic("load_ext", "loom_jupyter"))

    def unload(self) -> str:
        return self._capture(lambda: self.shell.run_line_magic("unload_ext", "loom_jupyter"))

    def tool_turn(self, name: str, tool_input: dict[str, Any], prompt: str = "do it") -> str:
        """One prompt whose answer calls ``name`` once, then says ``done.``."""
        call = {"type": "tool_use", "id": "toolu_case", "name": name, "input": tool_input}
        self.fake.add({"content": [call]}, "done.")
        return self.magic(prompt)

    def rows(self, sql: str, *args: Any) -> list[tuple[Any, ...]]:
        """Query the archive read-only with plain sqlite3."""
        with contextlib.closing(sqlite3.connect(f"file:{self.archive}?mode=ro", uri=True)) as db:
            return db.execute(sql, args).fetchall()

    def last_tool_result(self) -> tuple[str, int]:
        """The content and is_error flag of the newest tool turn."""
        rows = self.rows(
            "SELECT content, is_error FROM conversation_turns WHERE role = 'tool' "
            "ORDER BY id DESC LIMIT 1"
        )
        assert rows, "no tool turn was archived"
        return str(rows[0][0]), int(rows[0][1])

    def assert_intact(self) -> None:
        """integrity_check is ok and the seed turn is still turn 1."""
        assert self.rows("PRAGMA integrity_check") == [("ok",)]
        first = self.rows("SELECT content FROM conversation_turns WHERE turn_number = 1")
        assert (SEED,) in first

    def _capture(self, action: Any) -> str:
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
            action()
        text = buffer.getvalue()
        self.outputs.append(text)
        return text


def _environment(mp: pytest.MonkeyPatch, fake: FakeAnthropic, notebook: Path) -> None:
    mp.setenv("ANTHROPIC_BASE_URL", fake.base_url)
    mp.setenv("ANTHROPIC_API_KEY", "test-key-reliability")
    mp.setenv("LOOM_APPROVAL", "auto")
    mp.setenv("LOOM_BUSY_TIMEOUT_SECONDS", "0.5")
    mp.setenv("JPY_SESSION_NAME", str(notebook))


def _open_desk(shell: InteractiveShell, fake: FakeAnthropic, notebook: Path, *, seed: bool) -> Desk:
    notebook.parent.mkdir(parents=True, exist_ok=True)
    desk = Desk(shell, fake, notebook)
    desk.load()
    if seed:
        fake.add("Noted: OKAPI.")
        desk.magic(SEED)
    return desk


def _fresh_shell() -> InteractiveShell:
    shell = InteractiveShell.instance()
    shell.run_line_magic("unload_ext", "loom_jupyter")
    shell.reset(new_session=False)
    return shell


@pytest.fixture
def make_desk(
    fake: FakeAnthropic, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Any]:
    """``make_desk(notebook=None, seed=True)``: loom loaded on a notebook, the seed turn sent."""
    shell = _fresh_shell()

    def make(notebook: Path | None = None, *, seed: bool = True) -> Desk:
        path = notebook or tmp_path / "work" / "nb.ipynb"
        _environment(monkeypatch, fake, path)
        return _open_desk(shell, fake, path, seed=seed)

    yield make
    _fresh_shell()


@pytest.fixture(scope="module")
def module_fake() -> Iterator[FakeAnthropic]:
    """One fake Messages API for a module sharing a desk (each case checks it used its entries)."""
    with FakeAnthropic() as server:
        yield server


@pytest.fixture(scope="module")
def shared(module_fake: FakeAnthropic, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Desk]:
    """One desk for a whole module of cases that each leave the session as they found it."""
    notebook = tmp_path_factory.mktemp("shared") / "work" / "nb.ipynb"
    shell = _fresh_shell()
    with pytest.MonkeyPatch.context() as mp:
        _environment(mp, module_fake, notebook)
        yield _open_desk(shell, module_fake, notebook, seed=True)
    _fresh_shell()


@pytest.fixture
def shared_desk(shared: Desk, monkeypatch: pytest.MonkeyPatch) -> Desk:
    """The module's desk, with its environment set again (the suite resets it per test)."""
    _environment(monkeypatch, shared.fake, shared.notebook)
    return shared
