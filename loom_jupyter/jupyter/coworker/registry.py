"""One coworker per shell: open it, find it, and move it along with a renamed notebook.

``%load_ext`` registers the shell (:func:`register`); the magics ask for the shell's
coworker (:func:`cowork_for`), which is opened on demand and reopened when the
notebook changes. When the sidebar says the notebook was renamed,
:func:`follow_rename` copies the archive under the new name once nothing runs and
reopens the coworker on it, handing over the open sidebars, the panel and the cells
not yet reported; the session goes on. The rules (which path, what is removed or
kept, what is refused) are in :mod:`loom_jupyter.host.upkeep.relocate`.

A kernel that cannot place its notebook (DESIGN §13) opens nothing at ``%load_ext``: its
banner says so, where the first ``%cowork`` would write and how to choose
(:func:`unplaced_banner`); the sidebar's ``hello`` may place it (:mod:`.placing`). The
first ``%cowork`` without ``--notebook`` then opens the stand-in archive and shows the
banner again before its turn writes anything.
"""

from __future__ import annotations

import asyncio
import atexit
from typing import TYPE_CHECKING, Any

from loom_jupyter.errors import LoomError

if TYPE_CHECKING:
    from loom_jupyter.host.upkeep.location import NotebookLocation
    from loom_jupyter.host.upkeep.relocate import Relocation
    from loom_jupyter.jupyter.coworker.placing import Waiting
    from loom_jupyter.jupyter.coworker.runtime import KernelCowork

__all__ = [
    "busy",
    "cowork_for",
    "current",
    "follow_later",
    "follow_rename",
    "forget",
    "open_coworker",
    "register",
    "registered",
    "start_opening",
    "unplaced_banner",
    "waiting_for_fix",
]

_LOADED: dict[int, Any] = {}  # id(shell) -> KernelCowork | None
_WAITING: dict[int, Waiting] = {}  # the sidebar's door while no coworker is open
_PLACED: dict[int, NotebookLocation] = {}  # where a sidebar placed an unplaced notebook
_STARTED: dict[int, KernelCowork] = {}  # begun by %load_ext before its magics: opened next
_RETRY_SECONDS = 2.0


def register(shell: Any) -> None:
    """``%load_ext`` ran in ``shell``: its coworker opens on first use."""
    _LOADED[id(shell)] = None


def registered(shell: Any) -> bool:
    """Whether loom is loaded in ``shell``."""
    return id(shell) in _LOADED


def start_opening(shell: Any) -> None:
    """``%load_ext``: begin opening the notebook's archive on a new coworker's engine thread
    while the magics load; the first :func:`cowork_for` finishes it. Nothing is begun for a
    notebook that cannot be placed or a shell whose coworker is open; a failure here is
    left for :func:`cowork_for` to meet (and say) again."""
    if current(shell) is not None or id(shell) in _STARTED:
        return
    from loom_jupyter.jupyter.coworker.runtime import KernelCowork

    try:
        location = _resolve(shell, None)
    except LoomError:
        return
    if location.unplaced:
        return
    cowork = KernelCowork(shell, location)
    try:
        cowork.start()
    except Exception:
        cowork.close()
        return
    _STARTED[id(shell)] = cowork


def drop_started(shell: Any) -> None:
    """Close a coworker :func:`start_opening` began that nothing finished opening."""
    started = _STARTED.pop(id(shell), None)
    if started is not None:
        started.close()


def forget(shell: Any) -> KernelCowork | None:
    """``%unload_ext``: the shell is no longer served; its coworker (to close), if any."""
    drop_started(shell)
    cowork: KernelCowork | None = _LOADED.pop(id(shell), None)
    waiting = _WAITING.pop(id(shell), None)
    if waiting is not None:
        waiting.unregister()
    _PLACED.pop(id(shell), None)
    return cowork


def current(shell: Any) -> Any:
    """The shell's ``KernelCowork`` (None when not loaded or not yet opened)."""
    return _LOADED.get(id(shell))


def cowork_for(shell: Any, notebook: str | None, *, hold: bool = False) -> Any:
    """The shell's coworker, opening it (or re-opening for another notebook) on demand;
    ``hold``: one it opens builds its session only after its ``go_on`` (the banner first)."""
    if id(shell) not in _LOADED:
        raise LoomError("loom is not loaded: run %load_ext loom_jupyter")
    existing = _LOADED.get(id(shell))
    if existing is not None and not _usable(existing):  # e.g. locked at load: try again
        existing.close()
        existing = _LOADED[id(shell)] = None
    if existing is not None and not existing.archive_path.exists():
        existing = _LOADED[id(shell)] = _rescue(shell, existing)
    if existing is not None and notebook is None:
        return existing
    location = _resolve(shell, notebook)
    if existing is not None:
        if existing.location.path == location.path:
            return existing
        existing.close()
    cowork = open_coworker(shell, location, hold=hold)
    if location.unplaced:  # the stand-in: say where before the first turn writes there
        print(cowork.banner())
    return cowork


def _resolve(shell: Any, notebook: str | None) -> NotebookLocation:
    """The notebook ``notebook`` names, else the kernel's own (a sidebar's placing counts)."""
    from loom_jupyter.host.upkeep.location import resolve_notebook

    in_kernel = getattr(shell, "kernel", None) is not None
    location = resolve_notebook(shell.user_ns, explicit=notebook, in_kernel=in_kernel)
    if location.unplaced and id(shell) in _PLACED:
        return _PLACED[id(shell)]
    return location


def unplaced_banner(shell: Any) -> str | None:
    """``%load_ext`` in a kernel that cannot place its notebook: what it says (nothing is
    opened, the sidebar's door is held); None when the notebook is placed or open."""
    if current(shell) is not None:
        return None
    location = _resolve(shell, None)
    if not location.unplaced:
        return None
    from loom_jupyter.jupyter.coworker.placing import pending_note

    note = pending_note(location)
    _wait(shell, location, note)
    return note


def waiting_for_fix(shell: Any, error: LoomError) -> None:
    """The archive did not open at ``%load_ext``: a sidebar that opens is told why."""
    _wait(shell, None, f"loom: {error}")


def _wait(shell: Any, location: NotebookLocation | None, why: str) -> None:
    """Hold the sidebar's door (a kernel with a main loop only)."""
    loop = _running_loop()
    if getattr(shell, "kernel", None) is None or loop is None:
        return
    from loom_jupyter.jupyter.coworker.placing import Waiting

    waiting = _WAITING.get(id(shell))
    if waiting is None:
        waiting = Waiting(shell, loop, lambda placed: _place(shell, placed), location=None, why="")
        _WAITING[id(shell)] = waiting
    waiting.location, waiting.why = location, why
    waiting.register()


def _place(shell: Any, location: NotebookLocation) -> KernelCowork:
    """A sidebar placed the notebook: open the coworker there (main thread)."""
    _PLACED[id(shell)] = location
    existing = current(shell)
    if existing is not None:
        existing.close()
    return open_coworker(shell, location)


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def open_coworker(
    shell: Any,
    location: NotebookLocation,
    *,
    predecessor: KernelCowork | None = None,
    hold: bool = False,
) -> KernelCowork:
    """A coworker for the notebook at ``location``, opened and made the shell's.

    A ``predecessor`` (the notebook was renamed) lends its lease owner and keeps
    the comm target: it hands its sidebars over itself. ``hold``: its session is built
    after its ``go_on`` (see :meth:`KernelCowork.open`).
    """
    from loom_jupyter.jupyter.coworker.runtime import KernelCowork

    started = _STARTED.pop(id(shell), None)
    if started is not None and (predecessor is not None or started.location != location):
        started.close()  # begun for another notebook
        started = None
    owner = None if predecessor is None else predecessor.host.owner
    cowork = started or KernelCowork(shell, location, owner=owner)
    try:
        cowork.open(attach_sidebar=predecessor is None, hold=hold)
    except BaseException:
        cowork.close()
        raise
    cowork.host.renames.listen(lambda: cowork.main.post(lambda: follow_rename(shell)))
    _LOADED[id(shell)] = cowork
    waiting = _WAITING.pop(id(shell), None) if predecessor is None else None
    if waiting is not None:  # sidebars that opened before it did
        waiting.hand_over(cowork)
    atexit.register(cowork.close)
    if cowork.host.renames.pending:  # a sidebar said so while the archive was opening
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


def busy(cowork: Any) -> bool:
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
    path = cowork.archive_path
    cowork.location.archive_path()  # the .loom folder and its .gitignore again
    cowork.run(cowork.session.close())
    cowork.run(cowork.views.save_copy(path))
    cowork.close()
    print(
        f"loom: the archive {path} was deleted while this kernel was using it; it was written "
        "back from this kernel's open copy, with every turn."
    )
    return open_coworker(shell, cowork.location)


def follow_rename(shell: Any) -> None:
    """The notebook was renamed: move its conversation along once nothing runs (main thread).

    The archive is copied under the new name and the coworker reopened on it;
    the open sidebars, the panel and the cells not yet reported are handed over,
    the session goes on. Until the copy is open the old archive is untouched.
    """
    cowork = current(shell)
    if cowork is None or not cowork.host.renames.pending or not cowork.loop_thread.alive:
        return
    if not cowork.idle or cowork.main.pumping:  # a turn, a delegation or a %cowork cell
        follow_later(shell)
        return
    from loom_jupyter.host.upkeep.relocate import Relocation

    renamed = cowork.host.renames.take()
    if renamed is None:
        return
    relocation = Relocation(cowork.location, renamed)
    problem = relocation.blocked_by()
    if problem is not None:
        cowork.floor.notice(problem, "warning")
        return
    sid = cowork.session.session_id
    try:
        successor = _swapped(shell, cowork, relocation)
    except Exception as exc:  # the old archive still serves; say why it stayed
        cowork.floor.notice(f"The conversation stays in {relocation.source.name}: {exc}", "error")
        return
    try:
        _settle(successor, relocation, sid)
    except Exception as exc:  # moved, but not tidied: the session is safe in the new archive
        successor.floor.notice(f"The conversation moved, but: {exc}", "warning")


def _swapped(shell: Any, cowork: KernelCowork, relocation: Relocation) -> KernelCowork:
    """A coworker on a copy of ``cowork``'s archive under the new name; ``cowork`` closed.

    Until the successor is open nothing changes: a failure removes the partial copy.
    """
    target = relocation.target
    try:
        cowork.run(cowork.views.save_copy(target))
        successor = open_coworker(shell, relocation.new, predecessor=cowork)
    except BaseException:  # the shell keeps ``cowork``: a failed open never replaced it
        target.unlink(missing_ok=True)
        raise
    successor.comms.take(cowork.comms, in_kernel=successor.in_kernel)
    successor.panels.take_over(cowork.panels)
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
    successor.run(successor.views.move_notebook(old, new))
    switched = sid is not None and session.session_id != sid
    if sid is not None and switched:  # the latest active one was another: go on with this one
        successor.run(session.resume(sid))
    successor.panels.refresh(tell_sidebars=False)
    message = relocation.message(conversing=sid is not None)
    successor.run(successor.host.switches.followed(message, switched=switched))


def follow_later(shell: Any) -> None:
    """Try :func:`follow_rename` again in a moment (on the kernel's loop)."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return  # no kernel loop (a terminal): there is no sidebar to rename from either
    loop.call_later(_RETRY_SECONDS, follow_rename, shell)
