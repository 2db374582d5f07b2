"""Loom's own imports skip the notebook's folder; the person's do not (DESIGN §12).

The real finder in this process's real import system: a module named ``TWIN`` sits both
in a "notebook folder" (the current folder, first on ``sys.path`` as ``''``, the way
IPython puts it) and in an "installed" folder at the end of ``sys.path``. Whose import it
is, is read from the call stack: code of a ``loom_jupyter`` module (here a function whose
module is ``loom_jupyter.probe``, and the engine's real ``LoopThread``) gets the installed
copy on any thread; the person's code (``__main__``, a module from the folder, this test
module called by nobody of Loom's) gets the folder's, as before.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import sys
import threading
from importlib.machinery import PathFinder
from typing import TYPE_CHECKING, Any

import pytest

from loom_jupyter import importguard
from loom_jupyter.host.runtime.loop_thread import LoopThread

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path
    from types import ModuleType

TWIN = "loom_guard_twin"  # in the folder and installed
ONLY = "loom_guard_folder_only"  # in the folder only
NOWHERE = "loom_guard_nowhere"
SPACE = "loom_guard_space"  # a namespace package: installed portion, folder portion
HELPER = "loom_guard_helper"  # the person's module beside the notebook
ELSEWHERE = "loom_guard_elsewhere"  # an installed module that calls back


def _module_code(module: str, source: str) -> dict[str, Any]:
    """The names ``source`` defines, as code of the module named ``module``."""
    namespace: dict[str, Any] = {"__name__": module}
    exec(source, namespace)  # the test's own fixed code
    return namespace


_LOOM = _module_code(
    "loom_jupyter.probe",  # what makes a frame Loom's: its module's name
    "import importlib\n"
    "def load(name):\n    return importlib.import_module(name)\n"
    "def call(function, *args):\n    return function(*args)\n",
)
_MAIN = _module_code(
    "__main__",  # a cell: the person's, whoever calls it
    "import importlib\n"
    "def load(name):\n    return importlib.import_module(name)\n"
    "class Shown:\n    def __repr__(self):\n"
    "        return importlib.import_module('loom_guard_twin').WHERE\n",
)


def loom_load(name: str) -> ModuleType:
    """``name`` imported by Loom's code."""
    found: ModuleType = _LOOM["load"](name)
    return found


def loom_calls(function: Callable[..., Any], *args: Any) -> Any:
    """``function(*args)`` called by Loom's code."""
    return _LOOM["call"](function, *args)


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The current folder holds the folder's copies; ``site`` the installed ones."""
    notebooks, site = tmp_path / "notebooks", tmp_path / "site"
    for where, label in ((notebooks, "folder"), (site, "installed")):
        (where / SPACE).mkdir(parents=True)
        (where / f"{TWIN}.py").write_text(f"WHERE = {label!r}\n")
        (where / SPACE / f"{label}_part.py").write_text("")
    (notebooks / f"{ONLY}.py").write_text("WHERE = 'folder'\n")
    (notebooks / f"{HELPER}.py").write_text(
        f"import importlib\ndef twin():\n    return importlib.import_module({TWIN!r}).WHERE\n"
    )
    (site / f"{ELSEWHERE}.py").write_text("def call(function):\n    return function()\n")
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


def _on_loop_thread(function: Callable[[str], ModuleType], name: str) -> ModuleType:
    async def load() -> ModuleType:
        return function(name)

    loop = LoopThread()
    try:
        return loop.run(load(), timeout=60)
    finally:
        loop.stop()


def _forget(name: str) -> None:
    sys.modules.pop(name, None)


def test_the_engine_thread_imports_the_installed_copy(folder: Path) -> None:
    assert _on_loop_thread(importlib.import_module, TWIN).WHERE == "installed"
    _forget(TWIN)
    assert _on_loop_thread(_MAIN["load"], TWIN).WHERE == "folder"  # a cell's code, run there
    _forget(TWIN)
    assert importlib.import_module(TWIN).WHERE == "folder"  # the person, on the main thread


def test_loom_code_on_any_thread_imports_the_installed_copy(folder: Path) -> None:
    assert loom_load(TWIN).WHERE == "installed"  # the kernel's main thread (%cowork login)
    _forget(TWIN)

    async def by_executor() -> ModuleType:  # asyncio.to_thread's threads: asyncio_0, ...
        return await asyncio.to_thread(loom_load, TWIN)

    assert asyncio.run(by_executor()).WHERE == "installed"
    _forget(TWIN)
    seen: list[str] = []
    plain = threading.Thread(target=lambda: seen.append(loom_load(TWIN).WHERE), name="Thread-9")
    plain.start()
    plain.join()
    assert seen == ["installed"]
    _forget(TWIN)
    assert importlib.import_module(TWIN).WHERE == "folder"


def test_installed_code_that_loom_calls_imports_as_loom(folder: Path) -> None:
    """Installed modules decide nothing: what a library imports for Loom is Loom's."""
    elsewhere = loom_load(ELSEWHERE)
    assert loom_calls(elsewhere.call, lambda: importlib.import_module(TWIN).WHERE) == "installed"
    _forget(TWIN)
    assert elsewhere.call(lambda: importlib.import_module(TWIN).WHERE) == "folder"  # the person


def test_the_persons_code_that_loom_calls_imports_as_the_person(folder: Path) -> None:
    """A cell's ``__repr__``, a module beside the notebook: the person's, called by Loom."""
    assert loom_calls(repr, _MAIN["Shown"]()) == "folder"
    _forget(TWIN)
    helper = importlib.import_module(HELPER)  # the person's helper.py, imported in a cell
    assert loom_calls(helper.twin) == "folder"
    _forget(TWIN)
    assert loom_load(TWIN).WHERE == "installed"


def test_a_module_only_in_the_folder_is_refused_to_loom_with_a_reason(folder: Path) -> None:
    with pytest.raises(ModuleNotFoundError) as refused:
        loom_load(ONLY)
    assert refused.value.name == ONLY
    assert "notebook's folder" in str(refused.value)
    assert str(folder / f"{ONLY}.py") in str(refused.value)
    assert ONLY not in sys.modules
    assert importlib.import_module(ONLY).WHERE == "folder"  # the person's import works


def test_a_module_found_nowhere_is_simply_missing(folder: Path) -> None:
    assert loom_calls(importlib.util.find_spec, NOWHERE) is None  # probes still answer None
    with pytest.raises(ModuleNotFoundError, match=f"No module named '{NOWHERE}'"):
        loom_load(NOWHERE)


def test_a_namespace_package_keeps_only_its_installed_portions(folder: Path) -> None:
    space = loom_load(SPACE)
    assert [p.rpartition("/")[0].rpartition("/")[2] for p in space.__path__] == ["site"]
    sys.path.append(str(folder.parent / "elsewhere"))  # a changed sys.path adds no portion
    importlib.import_module(f"{SPACE}.installed_part")
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(f"{SPACE}.folder_part")


def test_what_a_module_is_follows_the_folders(folder: Path) -> None:
    """Kinds are remembered per module until a folder is added."""
    elsewhere = loom_load(ELSEWHERE)
    twin = lambda: importlib.import_module(TWIN).WHERE  # noqa: E731
    assert loom_calls(elsewhere.call, twin) == "installed"
    _forget(TWIN)
    importguard.install([folder.parent / "site"])  # now that folder is the notebook's too
    assert loom_calls(elsewhere.call, twin) == "folder"


def test_only_loom_code_counts_as_loom() -> None:
    assert not importguard.is_loom_import()  # pytest's code: nobody of Loom's called it
    assert loom_calls(importguard.is_loom_import)
    cell = _module_code("__main__", "def ask(guard):\n    return guard.is_loom_import()\n")
    assert loom_calls(cell["ask"], importguard) is False  # a cell's function, called by Loom

    async def ask() -> bool:
        return importguard.is_loom_import()

    for name in ("loom-loop", "loom-recover"):  # host/'s loops: LoopThread is Loom's code
        loop = LoopThread(name)
        try:
            assert loop.run(ask(), timeout=60)
        finally:
            loop.stop()

    seen: list[bool] = []
    other = threading.Thread(target=lambda: seen.append(importguard.is_loom_import()))
    other.start()
    other.join()
    assert seen == [False]
    bare: dict[str, Any] = {"guard": importguard}  # code without a module name: the person's
    exec("def ask():\n    return guard.is_loom_import()\n", bare)
    assert loom_calls(bare["ask"]) is False


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
