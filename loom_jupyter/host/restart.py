"""After a restart: the offer to rebuild what the conversation used (issue 21, DESIGN §11).

A session resumed in another kernel than the one its variables were made in has lost
them (:meth:`~loom_jupyter.engine.state.SessionState.in_kernel` says the same to the
model). :func:`gone_variables` names them from the session's saved state;
:func:`restart_offer` is the banner's line: which of them ``%cowork rebuild`` can make
again from the archived executions, with how many steps and about how long.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loom_jupyter.lineage import plan_rebuild

if TYPE_CHECKING:
    from collections.abc import Sequence

    from loom_jupyter.lineage import ExecutionRecord
    from loom_jupyter.records import SessionInfo

__all__ = ["gone_variables", "restart_offer"]

OFFERED = 8  # names put in the offered command; the rest are counted


def gone_variables(info: SessionInfo, owner: str) -> list[str]:
    """The variables ``info``'s conversation used, newest first, if ``owner`` is a new kernel."""
    from loom_jupyter.archive.liveness import kernel_process
    from loom_jupyter.engine.state import SessionState

    state = SessionState.from_json(info.session_state)
    made_in = kernel_process(state.kernel_session)
    if not made_in or made_in == kernel_process(owner):
        return []  # never ran code, or the same kernel (an extension reload)
    return list(dict.fromkeys(v.name for v in reversed(state.variables) if v.name.isidentifier()))


def restart_offer(names: Sequence[str], records: Sequence[ExecutionRecord]) -> str | None:
    """One line offering ``%cowork rebuild`` for the ``names`` the records can make; None
    when there are none."""
    if not names:
        return None
    missing = plan_rebuild(records, names).missing
    offered = [name for name in names if name not in missing]
    if not offered:
        return None
    shown, rest = offered[:OFFERED], len(offered) - OFFERED
    plan = plan_rebuild(records, shown)
    from loom_jupyter.tools.rebuild import seconds

    more = f" (and {rest} more: `%cowork provenance NAME` for any)" if rest > 0 else ""
    line = (
        f"Variables this conversation used are gone with the previous kernel: "
        f"{', '.join(shown)}{more}. `%cowork rebuild {' '.join(shown)}` makes them again: "
        f"{len(plan.steps)} of {len(records)} recorded executions, about "
        f"{seconds(plan.estimated_s)}, shown before they run."
    )
    risky = len(plan.consent_steps)
    if risky:
        line += (
            f" {risky} of the steps may write files, use the network or run a subprocess: "
            "add --yes once you have read them."
        )
    return line
