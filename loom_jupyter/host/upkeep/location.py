"""Which notebook this kernel belongs to, and so which archive it writes (DESIGN §13).

Resolution order:

1. an explicit path (``%cowork --notebook PATH``);
2. ``JPY_SESSION_NAME`` — JupyterLab sets it in the kernel's environment to the
   notebook's absolute path (fixed at kernel start);
3. IPython's ``__session__`` in the user namespace (ipykernel copies the same
   value there);
4. ``__vsc_ipynb_file__`` in the user namespace — VS Code sets no ``JPY_SESSION_NAME``
   but puts the notebook's path there when it starts the kernel;
5. the front's ``hello``: the Loom sidebar sends the notebook's path when it opens
   (:func:`placed_by_front`, for a kernel the steps above could not place);
6. otherwise a pseudo-notebook named ``ipython-session`` in the current working
   directory, so the archive is ``./.loom/ipython-session.sqlite``. In plain terminal
   IPython that is the rule: every terminal session started in the same folder shares
   one archive and resumes the most recent conversation, just like a notebook does.

A *kernel* that reaches step 6 cannot place its notebook (nothing named it: nbclient
without ``env=``, a gateway that passes no ``JPY_SESSION_NAME``), and neither can one
whose notebook's folder is not on its machine (a gateway's kernel: ``KERNEL_WORKING_DIR``
names the server's folder) unless ``archive_dir`` is set. Its location is marked
:attr:`NotebookLocation.unplaced`: the kernel then writes nothing before it has said that
the notebook is unknown, where it would write and how to choose (:meth:`unplaced_note`).
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = [
    "TERMINAL_SESSION_NAME",
    "VSCODE_VARIABLE",
    "NotebookLocation",
    "PathSource",
    "earlier_archive_note",
    "placed_by_front",
    "resolve_notebook",
]

TERMINAL_SESSION_NAME = "ipython-session"
VSCODE_VARIABLE = "__vsc_ipynb_file__"
"""What VS Code sets in the kernel's user namespace: the notebook's absolute path."""
PathSource = Literal["explicit", "env", "session", "vscode", "front", "terminal", "unknown"]
"""Where the notebook's path came from: ``%cowork --notebook``, ``JPY_SESSION_NAME``,
``__session__``, ``__vsc_ipynb_file__``, the sidebar's ``hello``; ``terminal`` is plain
IPython's ``ipython-session``; ``unknown`` the same stand-in in a kernel that could not
place its notebook."""
_CHOOSE = (
    "To choose: run %cowork --notebook PATH/TO/NOTEBOOK.ipynb, or open the Loom sidebar "
    "(it names the notebook), or set archive_dir (LOOM_ARCHIVE_DIR; KERNEL_LOOM_ARCHIVE_DIR "
    "passes through a gateway) to a folder that lasts."
)


@dataclass(frozen=True)
class NotebookLocation:
    """The notebook path and where it came from."""

    path: Path
    source: PathSource
    unplaced: str = ""
    """Why this kernel cannot place its notebook ("" when it can): the archive is then a
    stand-in the person is told about before anything is written."""

    @property
    def directory(self) -> Path:
        """The folder the archive, settings and file tools are anchored to."""
        return self.path.parent

    def archive_path(self) -> Path:
        """The notebook's archive file (its folder is made when missing)."""
        from loom_jupyter.archive import archive_path_for

        return archive_path_for(self.path)

    def planned_archive(self) -> Path:
        """Where the archive would be, made of nothing (for a banner before any write)."""
        from loom_jupyter.archive import archive_path_for

        return archive_path_for(self.path, create=False)

    def unplaced_note(self, archive: Path, *, pending: bool = False) -> str | None:
        """The banner's words for a kernel that cannot place its notebook (else None): that
        the notebook is unknown, where this kernel writes (``archive``) and how to choose.
        ``pending``: nothing is written yet (said before the first ``%cowork``)."""
        if not self.unplaced:
            return None
        shared = "one archive shared by every kernel here that cannot name its notebook"
        if _on_gateway():
            shared += ", on the kernel's machine (it may go when the kernel does)"
        if pending:
            where = f"Nothing is written yet; the first %cowork writes to {archive}, {shared}."
        else:
            where = f"Conversations go to {archive}, {shared}."
        return f"This kernel does not know its notebook: {self.unplaced}. {where} {_CHOOSE}"


def resolve_notebook(
    user_ns: Mapping[str, Any],
    *,
    explicit: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    in_kernel: bool = False,
) -> NotebookLocation:
    """Find the notebook path (see the module docstring for the order). ``in_kernel``: the
    shell is a kernel's, where a missing name means an unplaced notebook (in a terminal it
    means ``ipython-session``)."""
    environ = os.environ if env is None else env
    if explicit:
        return NotebookLocation(_absolute(Path(explicit), cwd), "explicit")
    named = _named(user_ns, environ)
    if named is not None:
        path, source, what = named
        location = NotebookLocation(_absolute(Path(path), cwd), source)
        if location.directory.is_dir() or _archive_dir_set(environ):
            return location
        why = f"{what} names {location.path}, whose folder is not on this machine"
        return _stand_in(cwd, why + _gateway_hint(environ))
    if not in_kernel:
        base = cwd or Path.cwd()
        return NotebookLocation(base.resolve() / TERMINAL_SESSION_NAME, "terminal")
    why = f"nothing names it (no JPY_SESSION_NAME, __session__ or {VSCODE_VARIABLE})"
    return _stand_in(cwd, why + _gateway_hint(environ))


def placed_by_front(
    current: NotebookLocation,
    path: str,
    server_root: str = "",
    *,
    env: Mapping[str, str] | None = None,
) -> NotebookLocation:
    """Where an unplaced kernel's notebook is, from the sidebar's ``hello`` (``path``
    relative to the server's folder ``server_root``): a notebook file here, else — with
    ``archive_dir`` set — the server's path (a gateway's kernel). Without either it stays
    unplaced, with the reason."""
    environ = os.environ if env is None else env
    relative = Path(path)
    if not current.unplaced or not path or relative.is_absolute():
        return current
    if relative.suffix.lower() != ".ipynb":
        return current  # no notebook: its archive would land beside any file that answers
    servers = _server_paths(relative, server_root, environ)
    for candidate in (*servers, *(parent / relative for parent in current.path.parents)):
        if candidate.is_file():
            return NotebookLocation(candidate.resolve(), "front")
    if servers and _archive_dir_set(environ):
        return NotebookLocation(servers[0], "front")
    shown = servers[0] if servers else relative
    why = f"the Loom sidebar names {shown}, which is not on this machine"
    return NotebookLocation(current.path, current.source, why + _gateway_hint(environ))


def earlier_archive_note(earlier: Path, archive: Path, *, empty: bool) -> str:
    """The banner's words when ``archive_dir`` is set but this notebook's ``.loom/`` still holds
    an archive (written before): its conversations are not resumed and the file is not
    touched; ``empty``: the archive in ``archive_dir`` has no conversation yet, so moving the
    old one there continues them."""
    head = (
        f"This notebook's earlier conversations are in {earlier}, written before archive_dir "
        f"was set: this kernel writes to {archive} and does not resume them (the old file is "
        "not touched)."
    )
    if empty:
        move = f"mv {shlex.quote(str(earlier))} {shlex.quote(str(archive))}"
        return f"{head} To go on with them, shut this kernel down and run: {move}"
    return f"{head} Read them with: loom-jupyter sessions {shlex.quote(str(earlier))}"


def _named(
    user_ns: Mapping[str, Any], environ: Mapping[str, str]
) -> tuple[str, PathSource, str] | None:
    """The notebook path something gave the kernel: the value, its source, the name it had."""
    if environ.get("JPY_SESSION_NAME"):
        return environ["JPY_SESSION_NAME"], "env", "JPY_SESSION_NAME"
    session = user_ns.get("__session__")
    if isinstance(session, str) and session:
        return session, "session", "__session__"
    vscode = user_ns.get(VSCODE_VARIABLE)
    if isinstance(vscode, str) and vscode:
        return vscode, "vscode", VSCODE_VARIABLE
    return None


def _server_paths(relative: Path, server_root: str, environ: Mapping[str, str]) -> list[Path]:
    """Where the front's notebook is on the server: under the server's folder, or in the
    folder a gateway named (``KERNEL_WORKING_DIR`` is the notebook's folder there)."""
    found: list[Path] = []
    if server_root:
        found.append(Path(server_root).expanduser() / relative)
    working = environ.get("KERNEL_WORKING_DIR")
    if working:
        found.append(Path(working).expanduser() / relative.name)
    return [p.resolve() for p in dict.fromkeys(found)]


def _stand_in(cwd: Path | None, why: str) -> NotebookLocation:
    base = cwd or Path.cwd()
    return NotebookLocation(base.resolve() / TERMINAL_SESSION_NAME, "unknown", why)


def _archive_dir_set(environ: Mapping[str, str]) -> bool:
    """Whether ``archive_dir`` places a notebook whose folder is not here."""
    from loom_jupyter.archive.paths import configured_archive_dir
    from loom_jupyter.errors import LoomConfigError

    try:
        return configured_archive_dir(environ) is not None
    except LoomConfigError:
        return True  # set, but wrong: opening the archive says what is wrong with it


def _gateway_hint(environ: Mapping[str, str]) -> str:
    working = environ.get("KERNEL_WORKING_DIR")
    if not working:
        return ""
    return f"; a gateway started this kernel for the server's folder {working}"


def _on_gateway() -> bool:
    return bool(os.environ.get("KERNEL_WORKING_DIR"))


def _absolute(path: Path, cwd: Path | None) -> Path:
    path = path.expanduser()
    if not path.is_absolute():
        path = (cwd or Path.cwd()) / path
    return path.resolve()
