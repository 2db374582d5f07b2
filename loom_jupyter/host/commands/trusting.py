"""The trust conversation, written once for every front that asks in words (DESIGN §12).

``%cowork trust`` in a cell and ``loom-jupyter trust`` in a terminal differ only in how
they read the folder, record a decision, show text and ask a question
(:class:`TrustPort`); :func:`converse` is the one flow: show exactly what the folder asks
for, then — unless it needs nothing or is already trusted — ask, ask apart about
loosening approvals, and record the answer bound to the digest of what was shown. A
folder that changed in between is shown again and asked again (never trusted unseen).
The sidebar's card renders the same :class:`~loom_jupyter.trust.FolderTrust` and sends
the same digest (``host/services/trust.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from loom_jupyter.host.commands.spec import UsageProblem, spelled

if TYPE_CHECKING:
    from loom_jupyter.host.commands.arguments import TrustArgs
    from loom_jupyter.host.commands.spec import Front
    from loom_jupyter.trust import FolderTrust, TrustAnswer, TrustDecision

__all__ = ["QUESTION", "TrustPort", "converse", "loosen_question"]

QUESTION = (
    "Trust this folder? Its MCP servers may then run as you, and its instruction files "
    "and skills reach the model. [y/N] "
)
_MAX_ROUNDS = 5  # a folder that changes every time it is shown is not asked forever


class TrustPort(Protocol):
    """How one front reads, records, shows and asks."""

    front: Front

    def read(self) -> FolderTrust:
        """The folder's trust, read now."""
        ...

    def record(
        self, decision: TrustDecision, *, shown: str | None, with_approval: bool
    ) -> TrustAnswer:
        """Record a decision about the folder as ``shown`` (a digest)."""
        ...

    def show(self, text: str) -> None:
        """Show plain text."""
        ...

    def ask(self, question: str) -> str | None:
        """The person's answer, or ``None`` when nobody can answer here."""
        ...

    def mode_line(self) -> str:
        """The approval mode in force, as a sentence (empty where there is none)."""
        ...


def loosen_question(trust: FolderTrust) -> str:
    """The separate question about loosening approvals (unanswered means no)."""
    from loom_jupyter.trust import LOOSEN_QUESTION

    asked = "; ".join(trust.request.loosens)
    return f"{LOOSEN_QUESTION} ({asked})? [y/N] "


def converse(args: TrustArgs, port: TrustPort) -> None:
    """``trust [--yes [--with-approval] | --revoke]``, the whole conversation."""
    if args.yes and args.revoke:
        raise UsageProblem("give --yes or --revoke, not both.")
    if args.with_approval and not args.yes:
        raise UsageProblem(
            "--with-approval goes with --yes (without --yes you are asked about it apart)."
        )
    if args.revoke:
        revoked = port.record("revoke", shown=None, with_approval=False)
        port.show(revoked.trust.report())
        _said(port, "revoke", revoked.trust)
        return
    now = port.read()
    for _ in range(_MAX_ROUNDS):
        port.show(now.report())
        if now.status == "not-needed" or (now.status == "trusted" and not args.yes):
            _settled(port, now)
            return
        answered = _answer(args, port, now)
        if answered is None:
            return
        decision, with_approval = answered
        recorded = port.record(decision, shown=now.request.digest, with_approval=with_approval)
        if recorded.recorded:
            _said(port, decision, recorded.trust)
            return
        now = recorded.trust  # it changed since it was shown: show it and ask again
        if args.yes:
            port.show(now.report())
            port.show(f"Nothing was recorded; run {spelled(port.front, 'trust')} again.")
            return
    port.show("The folder kept changing while you were asked: nothing was recorded.")


def _answer(
    args: TrustArgs, port: TrustPort, now: FolderTrust
) -> tuple[TrustDecision, bool] | None:
    """The decision and whether it loosens approvals; ``None`` when nobody can answer."""
    if args.yes:
        return "trust", args.with_approval
    reply = port.ask(QUESTION)
    if reply is None:
        yes = spelled(port.front, "trust --yes")
        port.show(f"Nobody can answer here: {yes} trusts the folder as it is now.")
        return None
    if not _yes(reply):
        return "deny", False
    if not now.request.loosens:
        return "trust", False
    return "trust", _yes(port.ask(loosen_question(now)) or "")


def _settled(port: TrustPort, trust: FolderTrust) -> None:
    if trust.status == "trusted" and trust.request.loosens and not trust.with_approval:
        line = spelled(port.front, "trust --yes --with-approval")
        port.show(f"Already trusted; your approval mode stays ({line} lets it loosen it).")
    elif trust.status == "trusted":
        port.show("Already trusted.")


def _said(port: TrustPort, decision: TrustDecision, trust: FolderTrust) -> None:
    again = spelled(port.front, "trust")
    if decision == "trust":
        text = (
            "Trusted: the folder's MCP servers, settings and instruction files are used "
            "from the next turn."
        )
        if trust.request.loosens:
            text += (
                " Its approval settings apply too: Loom may run code and commands without "
                "asking you."
                if trust.with_approval
                else " Your own approval mode stays."
            )
    elif decision == "deny":
        text = f"Not trusted: the folder's extras stay off ({again} asks again)."
    else:
        text = "Trust revoked: the folder's extras are off from the next turn."
    mode = port.mode_line()
    port.show(text + (f" {mode}" if mode else ""))


def _yes(reply: str) -> bool:
    return reply.strip().lower() in ("y", "yes")
