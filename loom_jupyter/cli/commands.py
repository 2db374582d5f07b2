"""The terminal's commands: the registry's, run against an archive alone.

:func:`run_command` finds the archive NOTEBOOK names (or, for ``search``, a folder of
them), opens it unless the command runs without one (``recover``), runs the command
through :func:`~loom_jupyter.host.commands.registry.execute` with an
:class:`~loom_jupyter.host.commands.context.ArchiveContext`, and renders its report as
text (:func:`~loom_jupyter.cli.render.report_text`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loom_jupyter.archive import Archive
from loom_jupyter.cli.locate import find_archive, find_folder, notebook_folder
from loom_jupyter.cli.render import report_text
from loom_jupyter.host.commands.context import ArchiveContext
from loom_jupyter.host.commands.registry import command, execute
from loom_jupyter.host.commands.spec import from_namespace
from loom_jupyter.trust import load_settings

if TYPE_CHECKING:
    import argparse

__all__ = ["run_command"]


async def run_command(args: argparse.Namespace) -> str:
    """Run the subcommand ``args.command`` against the notebook's archive."""
    spec = command(args.command)
    assert spec is not None  # argparse offers only the registry's commands
    parsed = from_namespace(spec.args, args)
    folder = find_folder(args.notebook) if spec.name == "search" else None
    if folder is not None:
        context = ArchiveContext(folder, load_settings(folder)[0], folder=True)
        return report_text(await execute(spec, context, parsed))
    path = find_archive(args.notebook)
    # loom.yaml settings are looked up from the notebook's folder (the archive may be in
    # its .loom/ or under archive_dir), as its trust reads it: a broken or hostile
    # project loom.yaml never stops a command.
    settings, _ = load_settings(notebook_folder(args.notebook, path))
    if spec.runs_without_archive:  # the archive may not open: it is not opened here
        return report_text(await execute(spec, ArchiveContext(path, settings), parsed))
    opening = Archive.open(
        path, busy_timeout=settings.busy_timeout_seconds, journal_mode=settings.journal_mode
    )
    async with opening as archive:
        context = ArchiveContext(path, settings, archive)
        return report_text(await execute(spec, context, parsed))
