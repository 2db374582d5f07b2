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
from typing import Any

from loom_jupyter.errors import LoomError

__all__ = ["current", "load", "unload"]

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
    return _open(shell, location)


def _open(shell: Any, location: Any, *, predecessor: Any = None) -> Any:
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
        _later(shell)
    return cowork


_RETRY_SECONDS = 2.0


def follow_rename(shell: Any) -> None:
    """The notebook was renamed: move its conversation along once nothing runs (main thread).

    The archive is copied under the new name and the coworker reopened on it;
    the open sidebars, the panel and the cells not yet reported are handed over,
    the session goes on. Until the copy is open the old archive is untouched.
    """
    from loom_jupyter.jupyter.relocate import Relocation

    cowork = _LOADED.get(id(shell))
    if cowork is None or cowork.renamed_to is None or not cowork.loop_thread.alive:
        return
    if not cowork.idle or cowork.main.pumping:  # a turn, a delegation or a %cowork cell
        _later(shell)
        return
    relocation = Relocation(cowork.location, cowork.renamed_to)
    cowork.renamed_to = None
    problem = relocation.blocked_by()
    if problem is not None:
        cowork.sidebar.notice(problem, "warning")
        return
    sid = cowork.session.session_id
    try:
        successor = _swapped(shell, cowork, relocation)
    except Exception as exc:  # the old archive still serves; say why it stayed
        cowork.sidebar.notice(f"The conversation stays in {relocation.source.name}: {exc}", "error")
        return
    try:
        _settle(successor, relocation, sid)
    except Exception as exc:  # moved, but not tidied: the session is safe in the new archive
        successor.sidebar.notice(f"The conversation moved, but: {exc}", "warning")


def _swapped(shell: Any, cowork: Any, relocation: Any) -> Any:
    """A coworker on a copy of ``cowork``'s archive under the new name; ``cowork`` closed.

    Until the successor is open nothing changes: a failure removes the partial copy.
    """
    target = relocation.target
    try:
        cowork.run(cowork.archive.save_copy(target))
        successor = _open(shell, relocation.new, predecessor=cowork)
    except BaseException:
        target.unlink(missing_ok=True)
        _LOADED[id(shell)] = cowork
        raise
    successor.sidebar.take(cowork.sidebar.release())
    successor.panel, cowork.panel = cowork.panel, None
    if cowork.activity is not None and successor.activity is not None:
        successor.activity.keep(cowork.activity.take())
    cowork.close()
    if not relocation.keeps_old:
        relocation.remove_source()
    return successor


def _settle(successor: Any, relocation: Any, sid: str | None) -> None:
    """The moved archive names the new notebook; the same session goes on; the fronts know."""
    session = successor.session
    old, new = str(relocation.old.path), str(relocation.new.path)
    successor.run(successor.archive.move_notebook(old, new))
    switched = sid is not None and session.session_id != sid
    if switched:  # the latest active session was another one: go on with this one
        successor.run(session.resume(sid))
    successor.refresh_panel(tell_sidebars=False)
    message = relocation.message(conversing=sid is not None)
    successor.run(successor.sidebar.followed(message, switched=switched))


def adopt(shell: Any, name: str) -> Any:
    """``%cowork adopt NAME``: this notebook takes over the conversation of NAME, a notebook
    that is gone (renamed while no kernel listened); returns the coworker now serving it."""
    import sqlite3

    from loom_jupyter.jupyter.notebook_path import NotebookLocation
    from loom_jupyter.jupyter.relocate import Relocation, adoption_problem, copy_archive

    cowork = _cowork(shell, None)
    if not name.endswith(".ipynb") or "/" in name or "\\" in name:
        raise LoomError(
            f"Give the file name of the notebook that is gone, like Untitled.ipynb (not {name!r})."
        )
    here = cowork.location
    move = Relocation(NotebookLocation(here.directory / name, here.source), here)
    stale_after = cowork.session.settings.lease_stale_seconds
    problem = cowork.run(adoption_problem(move, cowork.archive, stale_after))
    if problem is not None:
        raise LoomError(problem)
    handover = cowork.sidebar.release()
    cowork.close()
    move.remove_target()  # this notebook's archive: no session in it (checked above)
    try:
        copy_archive(move.source, move.target)
    except (OSError, sqlite3.Error) as exc:
        move.remove_target()
        _open(shell, here, predecessor=cowork).sidebar.take(handover)
        raise LoomError(f"Could not copy {move.source.name} ({exc}); nothing was moved.") from exc
    move.remove_source()
    successor = _open(shell, here, predecessor=cowork)
    successor.sidebar.take(handover)
    successor.run(successor.archive.move_notebook(str(move.old.path), str(here.path)))
    successor.refresh_panel()
    return successor


def _later(shell: Any) -> None:
    """Try :func:`follow_rename` again in a moment (on the kernel's loop)."""
    import asyncio

    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return  # no kernel loop (a terminal): there is no sidebar to rename from either
    loop.call_later(_RETRY_SECONDS, follow_rename, shell)


def _usable(cowork: Any) -> bool:
    """Whether ``cowork`` opened (waiting for the end of opening); a failed open is retried."""
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
    return _open(shell, cowork.location)
