"""``%cowork adopt NAME``: a notebook renamed while no kernel listened takes over the
conversation its old name left behind (the rules are in
:mod:`loom_jupyter.host.upkeep.relocate`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from loom_jupyter.errors import LoomError
from loom_jupyter.host.upkeep.location import NotebookLocation
from loom_jupyter.host.upkeep.relocate import Relocation
from loom_jupyter.jupyter.coworker.registry import open_coworker

if TYPE_CHECKING:
    from loom_jupyter.jupyter.coworker.runtime import KernelCowork

__all__ = ["adopt"]


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
    problem = cowork.run(cowork.views.adoption_problem(move, stale_after))
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
    successor.run(successor.views.move_notebook(str(move.old.path), str(here.path)))
    successor.panels.refresh()
    return successor
