"""``loom-jupyter trust PATH [--yes | --revoke]``: folder trust from the terminal.

Shows what the folder asks for (every MCP server's command line or URL and the approval
it wants, approval and web settings, instruction files) and whether it is trusted; in a
terminal it then asks. ``--yes`` trusts it as it is now, ``--revoke`` forgets the
decision. Kernels use the decision from their next turn (DESIGN §12).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from loom_jupyter.cli.locate import UsageError
from loom_jupyter.trust import decide, folder_trust

if TYPE_CHECKING:
    import argparse

__all__ = ["run_trust"]

_QUESTION = "Trust this folder? Its MCP servers may then run as you. [y/N] "


def run_trust(args: argparse.Namespace) -> str:
    """The report, after the decision the flags (or the person at the prompt) made."""
    path = Path(args.path).expanduser()
    if not path.exists():
        raise UsageError(f"{path} does not exist: give a notebook or its folder.")
    if args.yes and args.revoke:
        raise UsageError("give --yes or --revoke, not both.")
    if args.revoke:
        return decide(path, "revoke").report() + "\nTrust revoked."
    if args.yes:
        return decide(path, "trust").report()
    now = folder_trust(path)
    if now.status in ("trusted", "not-needed") or not sys.stdin.isatty():
        hint = "" if now.trusted else "\nloom-jupyter trust PATH --yes trusts it."
        return now.report() + hint
    print(now.report())
    answer = input(_QUESTION).strip().lower()
    return decide(path, "trust" if answer in ("y", "yes") else "deny").report()
