"""A notebook's conversation moves with the notebook (main thread).

The archive is named after its notebook. When the sidebar says the notebook
was renamed, :func:`follow_rename` copies the archive under the new name once
nothing runs and reopens the coworker on it, handing over the open sidebars,
the panel and the cells not yet reported; the session goes on. A notebook that
was renamed while no kernel listened is offered its old conversation, and
:func:`adopt` (``%cowork adopt NAME``) takes it over. The rules (which path,
what is removed or kept, what is refused) are in :mod:`.relocate`.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from loom_jupyter.errors import LoomError
from loom_jupyter.jupyter.extension import current, open_coworker
from loom_jupyter.jupyter.notebook_path import NotebookLocation
from loom_jupyter.jupyter.relocate import Relocation, adoption_problem

if TYPE_CHECKING:
    from loom_jupyter.jupyter.runtime import KernelCowork

__all__ = ["adopt", "follow_later", "follow_rename"]

_RETRY_SECONDS = 2.0


def follow_rename(shell: Any) -> None:
    """The notebook was renamed: move its conversation along once nothing runs (main thread).

    The archive is copied under the new name and the coworker reopened on it;
    the open sidebars, the panel and the cells not yet reported are handed over,
    the session goes on. Until the copy is open the old archive is untouched.
    """
    cowork = current(shell)
    if cowork is None or cowork.renamed_to is None or not cowork.loop_thread.alive:
        return
    if not cowork.idle or cowork.main.pumping:  # a turn, a delegation or a %cowork cell
        follow_later(shell)
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


def _swapped(shell: Any, cowork: KernelCowork, relocation: Relocation) -> KernelCowork:
    """A coworker on a copy of ``cowork``'s archive under the new name; ``cowork`` closed.

    Until the successor is open nothing changes: a failure removes the partial copy.
    """
    target = relocation.target
    try:
        cowork.run(cowork.archive.save_copy(target))
        successor = open_coworker(shell, relocation.new, predecessor=cowork)
    except BaseException:  # the shell keeps ``cowork``: a failed open never replaced it
        target.unlink(missing_ok=True)
        raise
    successor.sidebar.take(cowork.sidebar.release())
    successor.panel, cowork.panel = cowork.panel, None
    if cowork.activity is not None and successor.activity is not None:
        successor.activity.keep(cowork.activity.take())
    cowork.close()
    if not relocation.keeps_old:
        relocation.remove_source()
    return successor


def _settle(successor: KernelCowork, relocation: Relocation, sid: str | None) -> None:
    """The moved archive names the new notebook; the same session goes on; the fronts know."""
    session = successor.session
    old, new = str(relocation.old.path), str(relocation.new.path)
    successor.run(successor.archive.move_notebook(old, new))
    switched = sid is not None and session.session_id != sid
    if sid is not None and switched:  # the latest active one was another: go on with this one
        successor.run(session.resume(sid))
    successor.refresh_panel(tell_sidebars=False)
    message = relocation.message(conversing=sid is not None)
    successor.run(successor.sidebar.followed(message, switched=switched))


def adopt(cowork: KernelCowork, name: str) -> KernelCowork:
    """``%cowork adopt NAME``: this notebook takes over the conversation of NAME, a notebook
    that is gone (renamed while no kernel listened); returns the coworker now serving it."""
    shell = cowork.shell
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
    staged = cowork.run(move.stage_copy())  # a failure here changes nothing
    handover = cowork.sidebar.release()
    cowork.close()
    move.remove_target()  # this notebook's archive: no session in it (checked above)
    staged.replace(move.target)
    move.remove_source()
    successor = open_coworker(shell, here, predecessor=cowork)
    successor.sidebar.take(handover)
    successor.run(successor.archive.move_notebook(str(move.old.path), str(here.path)))
    successor.refresh_panel()
    return successor


def follow_later(shell: Any) -> None:
    """Try :func:`follow_rename` again in a moment (on the kernel's loop)."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return  # no kernel loop (a terminal): there is no sidebar to rename from either
    loop.call_later(_RETRY_SECONDS, follow_rename, shell)
