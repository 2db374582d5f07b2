"""``%cowork trust``: what the notebook's folder asks for, and the person's decision.

The cell's side of the one trust conversation
(:func:`~loom_jupyter.host.commands.trusting.converse`): shown whole (every server's
command line, URLs, the approval it wants, the instruction files) before asking through
stdin; loosening approvals is asked apart; typing ``--yes`` is the consent. The decision
is bound to what was shown and is in force from the next turn of this kernel (DESIGN §12).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from loom_jupyter.host.commands.trusting import converse
from loom_jupyter.jupyter.cell.approval import read_answer
from loom_jupyter.jupyter.cell.output import show_text

if TYPE_CHECKING:
    from loom_jupyter.host.commands.arguments import TrustArgs
    from loom_jupyter.host.commands.spec import Front
    from loom_jupyter.jupyter.coworker.runtime import KernelCowork
    from loom_jupyter.trust import FolderTrust, TrustAnswer, TrustDecision

__all__ = ["trust"]


def trust(cw: KernelCowork, args: TrustArgs) -> None:
    """``%cowork trust [--yes [--with-approval] | --revoke]``."""
    converse(args, CellTrust(cw))


@dataclass
class CellTrust:
    """The cell's side of the trust conversation."""

    cw: KernelCowork
    front: Front = "magic"

    def read(self) -> FolderTrust:
        from loom_jupyter.trust import folder_trust

        return folder_trust(self.cw.location.path)

    def record(
        self, decision: TrustDecision, *, shown: str | None, with_approval: bool
    ) -> TrustAnswer:
        trust = self.cw.host.trust
        return self.cw.run(trust.decide(decision, shown=shown, with_approval=with_approval))

    def show(self, text: str) -> None:
        show_text(text)

    def ask(self, question: str) -> str | None:
        return read_answer(question)

    def mode_line(self) -> str:
        mode, source = self.cw.host.trust.approval_mode()
        return f"Approval: {mode} ({source})."
