"""Loom's own imports come from where Python packages are installed, never from the
notebook's folder (DESIGN §12).

Jupyter starts a kernel in the notebook's folder, and IPython puts ``''`` (that folder)
on ``sys.path`` ahead of site-packages: a cloned repository that ships ``yaml/`` or
``anthropic/`` beside its notebooks would have its copy run the first time Loom
imports the name. ``%load_ext loom_jupyter`` (:mod:`loom_jupyter.jupyter.extension`)
therefore installs :class:`InstalledOnly` in ``sys.meta_path``, just before
:class:`importlib.machinery.PathFinder` (after the builtin and frozen importers). For
a top-level module imported by **Loom's code** it searches ``sys.path`` without the
folder's entries (``''``, ``'.'``, relative entries, the current folder and the
folders :func:`install` was given); a module found only in the folder is refused with
a :class:`ModuleNotFoundError` that says so. A module found nowhere is left to the
other finders, as before. Submodules follow their package's ``__path__``.

Loom's code is what runs on a thread named ``loom-*`` (the engine loop,
``host/runtime/loop_thread.py``, and the recovery loop) or inside :func:`loom_imports`
(Loom code that imports on the kernel's main thread or a comm's thread). Everything
else — the person's cells, and the code the agent runs in their namespace, which runs
on the main thread — imports exactly as before: a ``helper.py`` beside the notebook
still imports in a cell.

Standard library only, and nothing that is not loaded already in a kernel: this is
imported by ``%load_ext``.
"""

from __future__ import annotations

import sys
import threading
from contextlib import contextmanager
from importlib.machinery import PathFinder
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import os
    from collections.abc import Iterable, Iterator, Sequence
    from importlib.machinery import ModuleSpec
    from types import ModuleType

__all__ = [
    "LOOM_THREAD_PREFIX",
    "InstalledOnly",
    "folder_entries",
    "install",
    "is_loom_import",
    "loom_imports",
    "uninstall",
]

LOOM_THREAD_PREFIX = "loom-"
"""A thread whose name starts with this runs Loom's code only (``LoopThread`` names its
threads ``loom-loop`` and ``loom-recover``); its imports are always Loom's."""

_local = threading.local()
_lock = threading.Lock()


@contextmanager
def loom_imports() -> Iterator[None]:
    """Imports made by this thread inside the block are Loom's: installed copies only.

    For Loom code that imports on a thread it shares with the person (the kernel's main
    thread, a comm's thread). Never wrap code that runs the person's code."""
    _local.depth = getattr(_local, "depth", 0) + 1
    try:
        yield
    finally:
        _local.depth -= 1


def is_loom_import() -> bool:
    """Whether an import made now, on this thread, is Loom's."""
    if getattr(_local, "depth", 0) > 0:
        return True
    return threading.current_thread().name.startswith(LOOM_THREAD_PREFIX)


def folder_entries(entries: Sequence[str], folders: Iterable[Path]) -> set[str]:
    """The entries of ``entries`` (a ``sys.path``) that stand for the notebook's folder:
    ``''``, ``'.'`` and every relative entry (they follow the current folder), and those
    whose real path is the current folder or one of ``folders`` (real paths)."""
    try:
        here = {Path.cwd().resolve(), *folders}
    except OSError:  # the current folder was removed
        here = set(folders)
    return {e for e in entries if not Path(e).is_absolute() or Path(e).resolve() in here}


class InstalledOnly:
    """The ``sys.meta_path`` finder of Loom's top-level imports (see the module's docstring)."""

    _loom_installed_only = True  # how install() and uninstall() know it (even across reloads)

    def __init__(self) -> None:
        self.folders: frozenset[Path] = frozenset()

    def add_folders(self, folders: Iterable[str | os.PathLike[str]]) -> None:
        """Treat these folders (notebook folders) as the folder too, from now on."""
        self.folders = self.folders | {Path(f).resolve() for f in folders}

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        """The installed module for Loom's top-level imports; ``None`` for everyone else."""
        if path is not None or "." in fullname or not is_loom_import():
            return None
        entries = list(sys.path)
        dropped = folder_entries(entries, self.folders)
        kept = [e for e in entries if e not in dropped]
        spec = PathFinder.find_spec(fullname, kept, target)
        if spec is not None:
            return _frozen_namespace(spec)
        planted = PathFinder.find_spec(fullname, [e for e in entries if e in dropped], target)
        if planted is None:
            return None  # nowhere on sys.path: the other finders decide, as before
        later = self._later_finders(fullname, target)
        if later is not None:
            return later
        where = planted.origin or ", ".join(planted.submodule_search_locations or [])
        raise ModuleNotFoundError(
            f"loom imports {fullname!r} only from where Python packages are installed, and it "
            f"is not installed for this kernel's Python ({sys.executable}); the copy in the "
            f"notebook's folder ({where}) is not used: a folder's files never run as Loom's "
            f"code. Install {fullname} into the kernel's environment.",
            name=fullname,
        )

    def _later_finders(self, fullname: str, target: ModuleType | None) -> ModuleSpec | None:
        """A spec from the finders after ``PathFinder`` (an editable install's, say), unless
        it comes from the folder."""
        finders = list(sys.meta_path)
        if PathFinder not in finders:
            return None
        for finder in finders[finders.index(PathFinder) + 1 :]:
            find = getattr(finder, "find_spec", None)
            spec: ModuleSpec | None = find(fullname, None, target) if find is not None else None
            if spec is not None and not self._from_folder(spec):
                return spec
        return None

    def _from_folder(self, spec: ModuleSpec) -> bool:
        places = [spec.origin] if spec.origin else list(spec.submodule_search_locations or [])
        holders = [Path(p).parent for p in places if p and Path(p).is_absolute()]
        if spec.origin and spec.submodule_search_locations:  # a package: pkg/__init__.py
            holders = [h.parent for h in holders]
        return not holders or bool(folder_entries([str(h) for h in holders], self.folders))

    def invalidate_caches(self) -> None:
        """Nothing cached here (``PathFinder`` keeps the directory caches)."""


def _frozen_namespace(spec: ModuleSpec) -> ModuleSpec:
    """A namespace package's portions as a plain list: its ``_NamespacePath`` would add
    the folder's portion the next time ``sys.path`` changes."""
    if spec.origin is None and spec.submodule_search_locations is not None:
        spec.submodule_search_locations = list(spec.submodule_search_locations)
    return spec


def _installed() -> InstalledOnly | None:
    found = (f for f in sys.meta_path if getattr(f, "_loom_installed_only", False))
    finder = next(found, None)
    return finder if isinstance(finder, InstalledOnly) else None


def install(folders: Iterable[str | os.PathLike[str]] = ()) -> InstalledOnly:
    """Put the finder just before ``PathFinder`` (once), and treat ``folders`` as the
    notebook's folder besides the current one."""
    with _lock:
        finder = _installed()
        if finder is None:
            uninstall()  # one from an earlier copy of this module, if any
            finder = InstalledOnly()
            at = sys.meta_path.index(PathFinder) if PathFinder in sys.meta_path else 0
            sys.meta_path.insert(at, finder)
        finder.add_folders(folders)
        return finder


def uninstall() -> None:
    """Remove the finder (``%unload_ext``)."""
    sys.meta_path[:] = [f for f in sys.meta_path if not getattr(f, "_loom_installed_only", False)]
