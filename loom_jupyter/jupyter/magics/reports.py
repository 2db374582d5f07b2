"""The ``%cowork`` subcommands the cell answers itself (beside ``login``, ``recover`` and
``trust``): ``status``, which shows the live panel widget, and ``adopt``, which hands the
coworker over to a notebook's successor. The rest run through the command registry
(:mod:`.front`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from loom_jupyter.jupyter.cell.output import show_text

if TYPE_CHECKING:
    from loom_jupyter.host.commands.arguments import AdoptArgs, NoArgs
    from loom_jupyter.jupyter.coworker.runtime import KernelCowork

__all__ = ["adopt", "status"]


def status(cw: KernelCowork, args: NoArgs) -> None:
    """``%cowork status``: the approval mode and what "Always" allows, the organisation's
    managed policy and what it overrides, the archive's path, filesystem and journal, then
    the live panel."""
    from loom_jupyter.host.commands.context import HostContext
    from loom_jupyter.host.commands.usage import always_text
    from loom_jupyter.host.services.managed import approval_words

    mode, source = cw.host.trust.approval_mode()
    managed = cw.host.trust.managed()  # the organisation's policy (DESIGN §16), if any
    always = cw.run(always_text(HostContext(cw.host, "magic")))
    policy = "".join(f"\n{line}" for line in (managed.lines() if managed else ()))
    approval = approval_words(mode, source, managed)
    show_text(f"Approval: {approval}. {always}{policy}\n{cw.host.storage_line()}")
    cw.panels.ensure().show()


def adopt(cw: KernelCowork, args: AdoptArgs) -> None:
    """``%cowork adopt NAME``: take over the conversation of a notebook that is gone."""
    from loom_jupyter.jupyter.coworker.moves import adopt as take_over

    successor = take_over(cw, args.notebook)
    show_text(f"The conversation of {args.notebook} is now this notebook's.\n{successor.banner()}")
