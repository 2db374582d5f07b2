"""The organisation's managed policy as every front says it (DESIGN §16).

The banner, ``%cowork status`` and the sidebar's footer (``ApprovalModeView.managed``,
``overrides`` and ``by_policy``) say ``managed by your organisation`` with each key in force,
and each value the person (or the folder) set that the policy overrides, naming where they
set it. Without a policy file this costs two ``stat`` calls.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from loom_jupyter.errors import LoomConfigError
from loom_jupyter.policy import MANAGED, managed_policy

if TYPE_CHECKING:
    from loom_jupyter.trust import FolderTrust

__all__ = ["ManagedReport", "approval_words", "decides_approval", "managed_report"]


@dataclass(frozen=True)
class ManagedReport:
    """What the fronts say of the managed policy: its summary line (the files and each key
    in force) and what it overrides of what someone set."""

    summary: str
    overrides: tuple[str, ...] = ()
    approval_overridden: bool = False
    approval: str | None = None
    """The policy's loosest mode allowed (``None``: it sets none)."""

    def lines(self) -> tuple[str, ...]:
        """The summary, then one line per override."""
        return (self.summary, *self.overrides)


def managed_report(trust: FolderTrust | None) -> ManagedReport | None:
    """The policy in force and what it overrides of the settings the person and the folder
    (``trust``) ask for; ``None`` without a policy. A broken policy file raises
    (:class:`~loom_jupyter.errors.ManagedPolicyError`)."""
    policy = managed_policy()
    if not policy.active:
        return None
    wanted = None
    if trust is not None:
        from loom_jupyter.trust import settings_for

        try:
            wanted = settings_for(trust, managed=False)
        except LoomConfigError:  # the person's own loom.yaml is broken: said elsewhere
            wanted = None
    if wanted is None:
        return ManagedReport(summary=policy.summary())
    return ManagedReport(
        summary=policy.summary(),
        overrides=tuple(o.text() for o in policy.overrides(wanted)),
        approval_overridden=not policy.allows_approval(wanted.approval),
        approval=policy.approval,
    )


def decides_approval(mode: str, report: ManagedReport | None) -> bool:
    """Whether the policy decides ``mode``, the mode in force: it overrides the looser mode
    the person or the folder set, and ``mode`` is the policy's own. A stricter mode the person
    chose since (``%cowork approval read-only``) is theirs."""
    return report is not None and report.approval_overridden and mode == report.approval


def approval_words(mode: str, source: str, report: ManagedReport | None) -> str:
    """``ask (user)``, or ``ask (managed by your organisation)`` where the policy decides it."""
    return f"{mode} ({MANAGED if decides_approval(mode, report) else source})"
