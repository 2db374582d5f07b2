"""Loom's own imports skip the notebook's folder; the person's do not (DESIGN §12).

The real finder in this process's real import system: a module named ``TWIN`` sits both
in a "notebook folder" (the current folder, first on ``sys.path`` as ``''``, the way
IPython puts it) and in an "installed" folder at the end of ``sys.path``. The engine's
real ``LoopThread`` and code inside ``loom_imports()`` get the installed copy; the main
thread, as the person, gets the folder's, as before.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
from importlib.machinery import PathFinder
from typing import TYPE_CHECKING

import pytest

from loom_jupyter import importguard
from loom_jupyter.host.runtime.loop_thread import LoopThread

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path
    from types import ModuleType

TWIN = "loom_guard_twin"  # in the folder and installed
ONLY = "loom_guard_folder_only"  # in the folder only
NOWHERE = "loom_guard_nowhere"
SPACE = "loom_guard_space"  # a namespace package: installed portion, folder portion


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The current folder holds the folder's copies; ``site`` the installed ones."""
    notebooks, site = tmp_path / "notebooks", tmp_path / "site"
    for where, label in ((notebooks, "folder"), (site, "installed")):
        (where / SPACE).mkdir(parents=True)
        (where / f"{TWIN}.py").write_text(f"WHERE = {label!r}\n")
        (where / SPACE / f"{label}_part.py").write_text("")
    (notebooks / f"{ONLY}.py").write_text("WHERE = 'folder'\n")
    monkeypatch.chdir(notebooks)
    monkeypatch.setattr(sys, "path", ["", *sys.path, str(site)])
    importlib.invalidate_caches()
    importguard.install([notebooks])
    try:
        yield notebooks
    finally:
        importguard.uninstall()
        for name in [m for m in sys.modules if m.startswith("loom_guard_")]:
            del sys.modules[name]


def _on_loop_thread(name: str) -> ModuleType:
    async def load() -> ModuleType:
        return importlib.import_module(name)

    loop = LoopThread()
    try:
        return loop.run(load(), timeout=60)
    finally:
        loop.stop()


def _forget(name: str) -> None:
    sys.modules.pop(name, None)


def test_the_engine_thread_imports_the_installed_copy(folder: Path) -> None:
    assert _on_loop_thread(TWIN).WHERE == "installed"
    _forget(TWIN)
    assert importlib.import_module(TWIN).WHERE == "folder"  # the person, on the main thread


def test_loom_code_on_a_shared_thread_imports_the_installed_copy(folder: Path) -> None:
    with importguard.loom_imports():
        assert importlib.import_module(TWIN).WHERE == "installed"
    _forget(TWIN)
    assert importlib.import_module(TWIN).WHERE == "folder"


def test_a_module_only_in_the_folder_is_refused_to_loom_with_a_reason(folder: Path) -> None:
    with importguard.loom_imports(), pytest.raises(ModuleNotFoundError) as refused:
        importlib.import_module(ONLY)
    assert refused.value.name == ONLY
    assert "notebook's folder" in str(refused.value)
    assert str(folder / f"{ONLY}.py") in str(refused.value)
    assert ONLY not in sys.modules
    assert importlib.import_module(ONLY).WHERE == "folder"  # the person's import works


def test_a_module_found_nowhere_is_simply_missing(folder: Path) -> None:
    with importguard.loom_imports():
        assert importlib.util.find_spec(NOWHERE) is None  # probes still answer None
        with pytest.raises(ModuleNotFoundError, match=f"No module named '{NOWHERE}'"):
            importlib.import_module(NOWHERE)


def test_a_namespace_package_keeps_only_its_installed_portions(folder: Path) -> None:
    with importguard.loom_imports():
        space = importlib.import_module(SPACE)
    assert [p.rpartition("/")[0].rpartition("/")[2] for p in space.__path__] == ["site"]
    sys.path.append(str(folder.parent / "elsewhere"))  # a changed sys.path adds no portion
    importlib.import_module(f"{SPACE}.installed_part")
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(f"{SPACE}.folder_part")


def test_only_loom_threads_and_blocks_count_as_loom() -> None:
    assert not importguard.is_loom_import()  # pytest's main thread: the person's
    with importguard.loom_imports():
        assert importguard.is_loom_import()
        with importguard.loom_imports():
            assert importguard.is_loom_import()
        assert importguard.is_loom_import()
    assert not importguard.is_loom_import()

    async def ask() -> bool:
        return importguard.is_loom_import()

    for name in ("loom-loop", "loom-recover"):  # the names host/ gives its loops
        loop = LoopThread(name)
        try:
            assert loop.run(ask(), timeout=60)
        finally:
            loop.stop()
    assert LoopThread.__init__.__defaults__ == ("loom-loop",)

    seen: list[bool] = []
    other = threading.Thread(target=lambda: seen.append(importguard.is_loom_import()))
    other.start()
    other.join()
    assert seen == [False]


def test_the_finder_sits_just_before_path_finder_once_until_removed() -> None:
    before = list(sys.meta_path)
    first = importguard.install()
    try:
        assert importguard.install() is first
        at = sys.meta_path.index(PathFinder)
        assert sys.meta_path[at - 1] is first
        assert [f for f in sys.meta_path if f is not first] == before
    finally:
        importguard.uninstall()
    assert sys.meta_path == before
