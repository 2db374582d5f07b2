"""``%load_ext loom_jupyter``: register the magics, open the archive, resume.

Loading imports IPython's magic machinery and the archive/session code, never
the ``anthropic`` SDK (the model client is built on the first request); the
shell's coworker lives in :mod:`.coworker.registry`. The
notebook path comes from :mod:`loom_jupyter.host.upkeep.location`; in plain terminal IPython the
archive is ``./.loom/ipython-session.sqlite`` in the current directory. A kernel that
cannot place its notebook opens nothing at load and says so (DESIGN §13).

The session's lease is released when the kernel exits (shutdown or restart)
through an ``atexit`` hook — ipykernel runs ``atexit`` handlers on a
``shutdown_request`` — and on ``%unload_ext``, so a new kernel on the same
notebook resumes at once instead of waiting for the lease to go stale.

Before anything else, loading installs :mod:`loom_jupyter.importguard`: Loom's own
imports (this one's, and every later one made by Loom's code, on any thread) come from
where packages are installed, never from the notebook's folder; ``%unload_ext`` removes it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from loom_jupyter.errors import LoomError
from loom_jupyter.importguard import install, uninstall

if TYPE_CHECKING:
    from loom_jupyter.jupyter.coworker.runtime import KernelCowork

__all__ = ["load", "unload"]


def load(shell: Any) -> None:
    """Register ``%cowork`` and resume the notebook's latest session."""
    guard = install(_kernel_folder())
    from loom_jupyter.host.upkeep.location import resolve_notebook

    # Where the server starts kernels elsewhere, the notebook's folder is not the
    # current one: its files are never Loom's code either.
    guard.add_folders([resolve_notebook(getattr(shell, "user_ns", {})).directory])
    _load(shell)


def _kernel_folder() -> list[Path]:
    try:
        return [Path.cwd()]
    except OSError:  # removed: the guard still drops '' and relative entries
        return []


def _load(shell: Any) -> None:
    from loom_jupyter.jupyter.coworker.registry import (
        cowork_for,
        drop_started,
        register,
        registered,
        start_opening,
    )

    if registered(shell):  # e.g. the sidebar loaded it silently: show what it would have said
        _banner(shell)
        return
    start_opening(shell)  # the archive opens on the engine thread while the magics load
    try:
        _register_magics(shell, cowork_for)
        register(shell)
    except BaseException:
        drop_started(shell)
        raise
    _banner(shell)


def _register_magics(shell: Any, cowork_for: Any) -> None:
    from loom_jupyter.jupyter.magics.cowork import CoworkMagics, keep_question_marks
    from loom_jupyter.jupyter.magics.delegate import DelegateMagics

    def coworker(path: str | None) -> KernelCowork:
        found: KernelCowork = cowork_for(shell, path)
        return found

    shell.register_magics(CoworkMagics(shell, coworker))
    shell.register_magics(DelegateMagics(shell, coworker))
    if keep_question_marks not in shell.input_transformers_cleanup:
        shell.input_transformers_cleanup.append(keep_question_marks)


def _banner(shell: Any) -> None:
    """Print what the coworker found; its session is built on the engine thread only once
    the banner is out (its imports would otherwise compete with this thread's)."""
    from loom_jupyter.jupyter.coworker.registry import (
        cowork_for,
        drop_started,
        unplaced_banner,
        waiting_for_fix,
    )

    unplaced = unplaced_banner(shell)  # a notebook it cannot place: nothing opened yet
    if unplaced is not None:
        from loom_jupyter.jupyter.cell.output import wrap_words

        print(wrap_words(unplaced))
        return
    try:
        cowork = cowork_for(shell, None, hold=True)
    except LoomError as exc:
        print(f"loom: {exc}")
        waiting_for_fix(shell, exc)  # a sidebar that opens hears it too
        return
    finally:
        drop_started(shell)  # one begun early that was not the one opened
    try:
        print(cowork.banner())
    finally:
        cowork.go_on()


def unload(shell: Any) -> None:
    """Release the session and stop the engine thread (refused from inside a running turn)."""
    from loom_jupyter.jupyter.coworker.registry import busy, current, forget
    from loom_jupyter.jupyter.magics.cowork import keep_question_marks

    if busy(current(shell)):  # the agent's own code: stopping the loop would hang the cell
        raise LoomError(
            "loom cannot be unloaded while a %cowork turn is running (this code runs inside "
            "it); run %unload_ext loom_jupyter after the turn."
        )
    if keep_question_marks in shell.input_transformers_cleanup:
        shell.input_transformers_cleanup.remove(keep_question_marks)
    cowork = forget(shell)
    if cowork is not None:
        cowork.close()
    uninstall()
