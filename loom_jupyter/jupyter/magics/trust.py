"""``%cowork trust``: what the notebook's folder asks for, and the person's decision.

Shown whole (every server's command line, URLs, the approval it wants, the instruction
files) before asking; typing ``--yes`` is the consent. The decision is in force from
the next turn of this kernel (DESIGN §12).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loom_jupyter.jupyter.cell.approval import read_answer
from loom_jupyter.jupyter.cell.output import show_text

if TYPE_CHECKING:
    import argparse

    from loom_jupyter.jupyter.coworker.runtime import KernelCowork
    from loom_jupyter.trust import FolderTrust, TrustDecision

__all__ = ["trust"]

_QUESTION = "Trust this folder? Its MCP servers may then run as you. [y/N] "


def trust(cw: KernelCowork, args: argparse.Namespace) -> None:
    """``%cowork trust [--yes | --revoke]``."""
    from loom_jupyter.trust import folder_trust

    if args.revoke:
        _decide(cw, "revoke")
        return
    now = folder_trust(cw.location.path)
    show_text(now.report())
    if now.status == "not-needed" or (now.status == "trusted" and not args.yes):
        return
    if args.yes:
        _decide(cw, "trust")
        return
    answer = read_answer(_QUESTION)
    if answer is None:
        show_text("Nobody can answer here: run %cowork trust --yes to trust the folder.")
    elif answer.strip().lower() in ("y", "yes"):
        _decide(cw, "trust")
    else:
        _decide(cw, "deny")


def _decide(cw: KernelCowork, decision: TrustDecision) -> FolderTrust:
    from loom_jupyter.host.services.trust import decide_trust

    after = cw.run(decide_trust(cw.host, decision))
    show_text(_SAID[decision] + f" Approval: {' ('.join(cw.host.approval_mode())}).")
    return after


_SAID: dict[TrustDecision, str] = {
    "trust": "Trusted: the folder's MCP servers, settings and instruction files are used "
    "from the next turn.",
    "deny": "Not trusted: the folder's extras stay off (%cowork trust asks again).",
    "revoke": "Trust revoked: the folder's extras are off from the next turn.",
}
