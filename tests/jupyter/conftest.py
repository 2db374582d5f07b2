"""A real in-process IPython shell for the front's tests."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from IPython.core.interactiveshell import InteractiveShell

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from loom_jupyter.testing import FakeAnthropic


@pytest.fixture
def shell() -> Iterator[InteractiveShell]:
    """The process's InteractiveShell, with a clean user namespace."""
    ip = InteractiveShell.instance()
    ip.reset(new_session=False)
    yield ip
    ip.reset(new_session=False)


@pytest.fixture
def cowork_notebook(tmp_path: Path) -> Path:
    """The notebook the ``cowork`` fixture's shell serves (a module may override it)."""
    return tmp_path / "nb.ipynb"


@pytest.fixture
def cowork_env() -> dict[str, str]:
    """More environment for the ``cowork`` fixture (a module may override it)."""
    return {}


@pytest.fixture
def cowork(
    shell: InteractiveShell,
    fake_anthropic: FakeAnthropic,
    cowork_notebook: Path,
    cowork_env: dict[str, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> Iterator[Callable[[str], str]]:
    """``cowork("sessions")`` runs ``%cowork sessions`` (approval ``auto``, the fake API) and
    returns what it printed."""
    monkeypatch.setenv("JPY_SESSION_NAME", str(cowork_notebook))
    monkeypatch.setenv("LOOM_APPROVAL", "auto")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    for name, value in cowork_env.items():
        monkeypatch.setenv(name, value)
    shell.run_line_magic("load_ext", "loom_jupyter")
    capsys.readouterr()

    def run(line: str) -> str:
        shell.run_line_magic("cowork", line)
        return capsys.readouterr().out

    yield run
    shell.run_line_magic("unload_ext", "loom_jupyter")
