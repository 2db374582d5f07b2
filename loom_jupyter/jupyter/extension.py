"""``%load_ext loom_jupyter``: register the magics, open the archive, resume.

Loading imports IPython's magic machinery and the archive/session code, never
the ``anthropic`` SDK (the model client is built on the first request). The
notebook path comes from :mod:`.notebook_path`; in plain terminal IPython the
archive is ``./.loom/ipython-session.sqlite`` in the current directory.

The session's lease is released when the kernel exits (shutdown or restart)
through an ``atexit`` hook — ipykernel runs ``atexit`` handlers on a
``shutdown_request`` — and on ``%unload_ext``, so a new kernel on the same
notebook resumes at once instead of waiting for the lease to go stale.
"""

from __future__ import annotations

import atexit
from typing import TYPE_CHECKING, Any

from loom_jupyter.errors import LoomError

if TYPE_CHECKING:
    from loom_jupyter.jupyter.notebook_path import NotebookLocation
    from loom_jupyter.jupyter.runtime import KernelCowork

__all__ = ["current", "load", "open_coworker", "unload"]

_LOADED: dict[int, Any] = {}  # id(shell) -> KernelCowork | None


def load(shell: Any) -> None:
    """Register ``%cowork`` and resume the notebook's latest session."""
    if id(shell) in _LOADED:
        print("loom is already loaded: %cowork --help lists what it can do.")
        return
    from loom_jupyter.jupyter.delegate_magics import DelegateMagics
    from loom_jupyter.jupyter.magics import CoworkMagics, keep_question_marks

    _LOADED[id(shell)] = None
    shell.register_magics(CoworkMagics(shell, lambda path: _cowork(shell, path)))
    shell.register_magics(DelegateMagics(shell, lambda path: _cowork(shell, path)))
    if keep_question_marks not in shell.input_transformers_cleanup:
        shell.input_transformers_cleanup.append(keep_question_marks)
    try:
        cowork = _cowork(shell, None)
    except LoomError as exc:
        print(f"loom: {exc}")
        return
    print(cowork.banner())


def unload(shell: Any) -> None:
    """Release the session and stop the engine thread (refused from inside a running turn)."""
    from loom_jupyter.jupyter.magics import keep_question_marks

    if _busy(_LOADED.get(id(shell))):  # the agent's own code: stopping the loop would hang the cell
        raise LoomError(
            "loom cannot be unloaded while a %cowork turn is running (this code runs inside "
            "it); run %unload_ext loom_jupyter after the turn."
        )
    if keep_question_marks in shell.input_transformers_cleanup:
        shell.input_transformers_cleanup.remove(keep_question_marks)
    cowork = _LOADED.pop(id(shell), None)
    if cowork is not None:
        cowork.close()


def current(shell: Any) -> Any:
    """The shell's ``KernelCowork`` (None when not loaded or not yet opened)."""
    return _LOADED.get(id(shell))


def _cowork(shell: Any, notebook: str | None) -> Any:
    """The shell's coworker, opening it (or re-opening for another notebook) on demand."""
    from loom_jupyter.jupyter.notebook_path import resolve_notebook

    if id(shell) not in _LOADED:
        raise LoomError("loom is not loaded: run %load_ext loom_jupyter")
    existing = _LOADED.get(id(shell))
    if existing is not None and not _usable(existing):  # e.g. locked at load: try again
        existing.close()
        existing = _LOADED[id(shell)] = None
    if existing is not None and not existing.archive.path.exists():
        existing = _LOADED[id(shell)] = _rescue(shell, existing)
    if existing is not None and notebook is None:
        return existing
    location = resolve_notebook(shell.user_ns, explicit=notebook)
    if existing is not None:
        if existing.location.path == location.path:
            return existing
        existing.close()
    return open_coworker(shell, location)


def open_coworker(
    shell: Any, location: NotebookLocation, *, predecessor: KernelCowork | None = None
) -> KernelCowork:
    """A coworker for the notebook at ``location``, opened and made the shell's.

    A ``predecessor`` (the notebook was renamed) lends its lease owner and keeps
    the comm target: it hands its sidebars over itself.
    """
    from loom_jupyter.jupyter.moves import follow_later, follow_rename
    from loom_jupyter.jupyter.runtime import KernelCowork

    owner = None if predecessor is None else predecessor.owner
    cowork = KernelCowork(shell, location, owner=owner)
    try:
        cowork.open(attach_sidebar=predecessor is None)
    except BaseException:
        cowork.close()
        raise
    cowork.on_renamed = lambda: follow_rename(shell)
    _LOADED[id(shell)] = cowork
    atexit.register(cowork.close)
    if cowork.renamed_to is not None:  # a sidebar said so while the archive was opening
        follow_later(shell)
    return cowork


def _usable(cowork: Any) -> bool:
    """Whether ``cowork`` opened (waiting for the end of opening) and is not closed since (a
    recovery that could not reopen it); a failed open is retried."""
    if not cowork.loop_thread.alive:
        return False
    try:
        _ = cowork.session
    except LoomError:
        return False
    return True


def _busy(cowork: Any) -> bool:
    """Whether ``cowork`` is in the middle of a turn."""
    if cowork is None or not cowork.loop_thread.alive:
        return False
    try:
        return bool(cowork.session.busy)
    except LoomError:
        return False


def _rescue(shell: Any, cowork: Any) -> Any:
    """The archive file was deleted while open: write it back from the open connection, reopen.

    The lease is released first so the reopened coworker resumes the same session.
    """
    from loom_jupyter.archive import archive_path_for

    path = cowork.archive.path
    archive_path_for(cowork.location.path)  # the .loom folder and its .gitignore again
    cowork.run(cowork.session.close())
    cowork.run(cowork.archive.save_copy(path))
    cowork.close()
    print(
        f"loom: the archive {path} was deleted while this kernel was using it; it was written "
        "back from this kernel's open copy, with every turn."
    )
    return open_coworker(shell, cowork.location)
