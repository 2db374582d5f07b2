"""Loom's own imports come from where Python packages are installed, never from the
notebook's folder (DESIGN §12).

Jupyter starts a kernel in the notebook's folder, and IPython puts ``''`` (that folder)
on ``sys.path`` ahead of site-packages: a cloned repository that ships ``keyring.py`` or
``anthropic/`` beside its notebooks would have its copy run the first time Loom
imports the name. ``%load_ext loom_jupyter`` (:mod:`loom_jupyter.jupyter.extension`)
therefore installs :class:`InstalledOnly` in ``sys.meta_path``, just before
:class:`importlib.machinery.PathFinder` (after the builtin and frozen importers). For
a top-level module imported by **Loom's code** it searches ``sys.path`` without the
folder's entries (``''``, ``'.'``, relative entries, the current folder and the
folders :func:`install` was given); a module found only in the folder is refused with
a :class:`ModuleNotFoundError` that says so. A module found nowhere is left to the
other finders, as before. Submodules follow their package's ``__path__``.

Whose import it is, is read from the import's call stack, on whatever thread it runs
(the kernel's main thread, a comm's, the engine loop's, ``asyncio.to_thread``'s). From
the code that imports outward, the first frame that decides wins:

- a frame of a ``loom_jupyter`` module: Loom's;
- a frame of the person's code: not Loom's — ``__main__`` (cells, the code the agent runs
  in their namespace, a ``__repr__`` defined in a cell), a module whose top-level package
  was loaded from the notebook's folder (a ``helper.py`` beside the notebook), code
  without a module name or of a module not loaded;
- any other frame (the standard library, installed packages, importlib's machinery)
  decides nothing: ``keyring`` importing its backends, or ``anthropic`` importing
  ``httpx``, while Loom's code called them, is Loom's import;
- no frame decided (ipykernel's and IPython's own imports): not Loom's.

So the person's imports are unchanged: a ``helper.py`` beside the notebook still imports
in a cell and in ``run_python``. What kind each top-level module is, is remembered
(forgotten when a folder is added or the current folder changes).

Standard library only, and nothing that is not loaded already in a kernel: this is
imported by ``%load_ext``.
"""

from __future__ import annotations

import os
import sys
import threading
from importlib.machinery import PathFinder
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from importlib.machinery import ModuleSpec
    from types import FrameType, ModuleType

__all__ = [
    "InstalledOnly",
    "folder_entries",
    "from_folder",
    "install",
    "is_loom_import",
    "uninstall",
]

_lock = threading.Lock()

_LOOM, _PERSON = True, False
"""A frame's verdict; ``None``: it decides nothing (keep walking outward)."""
_NOT_DECIDING = frozenset({"importlib._bootstrap", "importlib._bootstrap_external", __name__})
"""The import machinery's own frames (and this module's): never the importer."""


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
        self._kinds: dict[str, tuple[ModuleType, bool | None]] = {}
        self._kinds_cwd: str | None = None

    def add_folders(self, folders: Iterable[str | os.PathLike[str]]) -> None:
        """Treat these folders (notebook folders) as the folder too, from now on."""
        self.folders = self.folders | {Path(f).resolve() for f in folders}
        self._kinds = {}

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        """The installed module for Loom's top-level imports; ``None`` for everyone else."""
        if path is not None or "." in fullname or not self.by_loom(sys._getframe(1)):
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

    def by_loom(self, frame: FrameType | None) -> bool:
        """Whether an import made by ``frame`` is Loom's: the first frame outward that
        decides (see the module's docstring)."""
        kinds = self._current_kinds()
        while frame is not None:
            name = frame.f_globals.get("__name__")
            if name not in _NOT_DECIDING:
                kind = self._kind(name, kinds)
                if kind is not None:
                    return kind
            frame = frame.f_back
        return False

    def _current_kinds(self) -> dict[str, tuple[ModuleType, bool | None]]:
        try:
            cwd: str | None = os.getcwd()  # noqa: PTH109  # on every import: 5x cheaper
        except OSError:  # removed
            cwd = None
        if cwd != self._kinds_cwd:  # the folder decides what is the person's
            self._kinds, self._kinds_cwd = {}, cwd
        return self._kinds

    def _kind(self, name: object, kinds: dict[str, tuple[ModuleType, bool | None]]) -> bool | None:
        if not isinstance(name, str):
            return _PERSON  # code without a module name (exec'd in a bare namespace)
        top = name.partition(".")[0]
        if top == "loom_jupyter":
            return _LOOM
        module = sys.modules.get(top)
        if top == "__main__" or module is None:
            return _PERSON  # cells and the person's namespace; code of no loaded module
        known = kinds.get(top)
        if known is not None and known[0] is module:
            return known[1]
        kind = _PERSON if self._module_in_folder(module) else None
        kinds[top] = (module, kind)
        return kind

    def _module_in_folder(self, module: ModuleType) -> bool:
        """Whether a top-level module (or package) was loaded from the notebook's folder."""
        spec = getattr(module, "__spec__", None)
        origin = getattr(spec, "origin", None) or getattr(module, "__file__", None)
        portions = getattr(spec, "submodule_search_locations", None)
        if portions is None:
            portions = getattr(module, "__path__", None)
        if isinstance(origin, str) and Path(origin).is_absolute():  # a file, not 'frozen'
            holder = Path(origin).parent
            holders = [holder.parent if portions is not None else holder]  # pkg/__init__.py
        else:  # a namespace package's portions, or nothing: built-in, frozen, made up
            holders = [Path(p).parent for p in portions or () if Path(p).is_absolute()]
        return bool(folder_entries([str(h) for h in holders], self.folders))

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
        """Forget what kind each module is (``PathFinder`` keeps the directory caches)."""
        self._kinds = {}


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


def is_loom_import() -> bool:
    """Whether an import made here, by the caller, would be Loom's (the installed finder's
    folders, else only the current folder's)."""
    finder = _installed() or InstalledOnly()
    return finder.by_loom(sys._getframe(1))


def from_folder(module: ModuleType) -> bool:
    """Whether ``module`` (already imported, by anyone) was loaded from the notebook's
    folder: Loom never hands such a module anything (a person's cell may have imported a
    cloned repository's ``keyring.py`` before Loom asked for the installed one)."""
    top = sys.modules.get(module.__name__.partition(".")[0], module)
    return (_installed() or InstalledOnly())._module_in_folder(top)


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
