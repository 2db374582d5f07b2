"""``%cowork recover``: save what a damaged archive still holds, then go on in the new one.

Runs even when loom could not open the archive (the usual reason to run it).
An intact archive is left alone and the coworker keeps running. Otherwise the
coworker steps down (its sidebars and panel are kept for the successor), the
archive is rebuilt (:mod:`loom_jupyter.host.upkeep.repair`),
and a new coworker opens on it and resumes the latest session. When recovery
refuses (a file that is not SQLite without ``--move-aside``, another kernel
writing the archive), the coworker is reopened as it was and the reason shown.
"""

from __future__ import annotations

from contextlib import suppress
from typing import TYPE_CHECKING, Any

from loom_jupyter.errors import LoomError
from loom_jupyter.host.upkeep import repair
from loom_jupyter.jupyter.cell.output import show_text
from loom_jupyter.jupyter.coworker.registry import current, open_coworker
from loom_jupyter.session.recover_view import render_report
from loom_jupyter.trust import load_settings

if TYPE_CHECKING:
    from loom_jupyter.host.commands.arguments import RecoverArgs
    from loom_jupyter.host.upkeep.location import NotebookLocation
    from loom_jupyter.jupyter.coworker.runtime import KernelCowork
    from loom_jupyter.jupyter.sidebar.hub import Handover

__all__ = ["recover"]


def recover(shell: Any, args: RecoverArgs) -> None:
    """``%cowork recover [--move-aside]`` (main thread; none of it is the person's code)."""
    from loom_jupyter.host.upkeep.location import resolve_notebook

    cowork: KernelCowork | None = current(shell)
    location = cowork.location if cowork is not None else resolve_notebook(shell.user_ns)
    path = location.archive_path()
    settings, _ = load_settings(location.directory)  # a hostile loom.yaml never stops it
    health = repair.archive_health(location, settings)
    if health == "missing":
        show_text(f"This notebook has no archive yet ({path}): nothing to recover.")
        return
    if health == "intact":
        show_text(
            f"The archive {path} is not damaged (PRAGMA integrity_check: ok); nothing changed."
        )
        return
    if cowork is not None and not cowork.idle:
        raise LoomError(
            "A turn or a delegation is running: wait for it (or stop it), then recover."
        )
    handover = _step_down(cowork)
    try:
        report = repair.recover(location, settings, move_aside=args.move_aside)
    except LoomError:
        _reopen_quietly(shell, location, cowork, handover)
        raise
    successor = _reopen(shell, location, cowork, handover)
    show_text(f"{render_report(report)}\n\n{successor.banner()}")


def _step_down(cowork: KernelCowork | None) -> Handover | None:
    """Close ``cowork`` (its file must not stay open), keeping its sidebars for the successor."""
    if cowork is None:
        return None
    handover = cowork.sidebar.release()
    cowork.close()
    return handover


def _reopen(
    shell: Any,
    location: NotebookLocation,
    cowork: KernelCowork | None,
    handover: Handover | None,
) -> KernelCowork:
    """A coworker on the (new) archive, serving ``cowork``'s sidebars and panel."""
    successor = open_coworker(shell, location, predecessor=cowork)
    if cowork is not None and handover is not None:
        successor.sidebar.take(handover)
        successor.panels.take_over(cowork.panels)
        successor.panels.refresh()
    return successor


def _reopen_quietly(
    shell: Any,
    location: NotebookLocation,
    cowork: KernelCowork | None,
    handover: Handover | None,
) -> None:
    """After a refused recovery: the coworker back as it was, if the archive lets it open."""
    with suppress(LoomError):  # still cannot open: the recovery's own message says what to do
        _reopen(shell, location, cowork, handover)
