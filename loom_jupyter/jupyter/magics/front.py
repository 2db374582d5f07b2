"""A ``%cowork`` subcommand run through the command registry, and its report in the cell.

The command runs on the engine loop (:meth:`KernelCowork.run`, the main thread pumping);
its :class:`~loom_jupyter.host.commands.report.Report` is shown with the cell's own
helpers: notes as text, tables with ``show_table`` (HTML in a notebook, aligned text in a
terminal), code indented under its heading, the cost plot where it can be drawn. A
question the report asks (``delete``) is asked on stdin, and a yes runs it again with
``--yes``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from loom_jupyter.jupyter.cell.output import show_table, show_text

if TYPE_CHECKING:
    from loom_jupyter.host.commands.report import Report
    from loom_jupyter.host.commands.spec import Spec
    from loom_jupyter.jupyter.coworker.runtime import KernelCowork

__all__ = ["run_in_cell", "show_report"]


def run_in_cell(cw: KernelCowork, spec: Spec[Any], args: Any) -> None:
    """Run ``spec`` with ``args`` for the cell and show what it answers."""
    from loom_jupyter.host.commands.context import HostContext
    from loom_jupyter.host.commands.registry import execute
    from loom_jupyter.jupyter.kernel.bridge import LiveKernelBridge

    # a rebuild's steps run here, through the cell's own bridge (not recorded again)
    context = HostContext(cw.host, "magic", kernel=LiveKernelBridge(cw.shell, cw.main))
    try:
        report = cw.run(execute(spec, context, args))
    except KeyboardInterrupt:
        if spec.name != "rebuild":
            raise
        from loom_jupyter.host.commands.variables import interrupted

        show_text(interrupted(args.names, list(cw.shell.user_ns)))
        return
    if report.confirm is not None and _confirmed(report.confirm):
        report = cw.run(execute(spec, context, replace(args, yes=True)))
    show_report(report, rich=cw.in_kernel)


def _confirmed(question: str) -> bool:
    from loom_jupyter.jupyter.cell.approval import read_answer

    answer = read_answer(question)
    return answer is not None and answer.strip().lower() in {"y", "yes"}


def show_report(report: Report, *, rich: bool) -> None:
    """The report in the cell, part by part."""
    from loom_jupyter.host.commands.report import Block, CostPlot, Items, Note, Table

    if report.title:
        show_text(report.title)
    for part in report.parts:
        if isinstance(part, Note):
            show_text(part.text)
        elif isinstance(part, Items):
            show_text(part.line())
        elif isinstance(part, Table):
            show_table(part.headers, part.rows, caption=part.caption, nowrap=part.nowrap)
        elif isinstance(part, Block):
            body = part.text
            if part.kind == "code":
                body = "\n".join("    " + line for line in part.text.splitlines())
            show_text(f"{part.heading}:\n{body}" if part.heading else body)
        elif isinstance(part, CostPlot) and rich:  # a terminal shows the tables only
            from loom_jupyter.jupyter.magics.cost import show_plot

            show_plot(part.calls)
