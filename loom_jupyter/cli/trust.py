"""``loom-jupyter trust PATH [--yes [--with-approval] | --revoke]``: folder trust from the
terminal.

Shows what the folder asks for (every MCP server's command line or URL and the approval
it wants, approval and web settings, instruction files) and whether it is trusted; in a
terminal it then asks, and asks apart about loosening approvals. ``--yes`` trusts it as
it is now, ``--revoke`` forgets the decision. The conversation is the one every front
has (:func:`~loom_jupyter.host.commands.trusting.converse`); kernels use the decision
from their next turn (DESIGN §12).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from loom_jupyter.cli.locate import UsageError
from loom_jupyter.controls import visible
from loom_jupyter.host.commands.arguments import TrustArgs
from loom_jupyter.host.commands.trusting import converse
from loom_jupyter.trust import decide, folder_trust

if TYPE_CHECKING:
    import argparse

    from loom_jupyter.host.commands.spec import Front
    from loom_jupyter.trust import FolderTrust, TrustAnswer, TrustDecision

__all__ = ["run_trust"]


def run_trust(args: argparse.Namespace) -> str:
    """Hold the conversation on the terminal (printed as it goes); nothing left to print."""
    path = Path(args.path).expanduser()
    if not path.exists():
        raise UsageError(f"{path} does not exist: give a notebook or its folder.")
    converse(
        TrustArgs(yes=args.yes, revoke=args.revoke, with_approval=args.with_approval),
        TerminalTrust(path),
    )
    return ""


@dataclass
class TerminalTrust:
    """The terminal's side of the trust conversation: stdin when it is a terminal."""

    path: Path
    front: Front = "cli"

    def read(self) -> FolderTrust:
        return folder_trust(self.path)

    def record(
        self, decision: TrustDecision, *, shown: str | None, with_approval: bool
    ) -> TrustAnswer:
        return decide(self.path, decision, shown=shown, with_approval=with_approval)

    def show(self, text: str) -> None:
        print(visible(text), flush=True)  # folder text never drives the terminal

    def ask(self, question: str) -> str | None:
        if not sys.stdin.isatty():
            return None
        try:
            return input(question)
        except EOFError:
            return None

    def mode_line(self) -> str:
        return ""
