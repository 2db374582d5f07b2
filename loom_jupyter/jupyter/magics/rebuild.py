"""``%cowork provenance NAME`` and ``%cowork rebuild NAME [NAME ...]`` (issue 21, DESIGN §11).

Both read the archived executions through the host (:meth:`Host.executions`);
:func:`~loom_jupyter.lineage.plan_rebuild` picks the slice. A rebuild shows the slice
first, stops before steps that change the world outside the namespace unless ``--yes``,
runs the steps in the live namespace the way the agent's code runs
(:class:`~loom_jupyter.jupyter.kernel.bridge.LiveKernelBridge`, not recorded again), then
checks each name and, where one was recorded, its fingerprint.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loom_jupyter.errors import LoomError
from loom_jupyter.jupyter.cell.output import show_table, show_text
from loom_jupyter.lineage import plan_rebuild
from loom_jupyter.tools.rebuild import (
    PLAN_HEADERS,
    code_head,
    consent_note,
    plan_rows,
    ran,
    rebuild_names,
    render_plan,
    replay,
    seconds,
    step_codes,
    when,
)

if TYPE_CHECKING:
    import argparse

    from loom_jupyter.jupyter.coworker.runtime import KernelCowork
    from loom_jupyter.lineage import ExecutionRecord, RebuildPlan

__all__ = ["provenance", "rebuild"]


def _records(cw: KernelCowork) -> list[ExecutionRecord]:
    return cw.run(cw.host.executions())


def _show_plan(plan: RebuildPlan, caption: str, *, code: bool = False) -> None:
    if plan.steps:
        show_table(PLAN_HEADERS, plan_rows(plan), caption=caption)
    if code:  # what a rebuild would run, whole: the person reads it before anything runs
        for heading, body in step_codes(plan):
            show_text(f"{heading}:\n" + "\n".join("    " + line for line in body.splitlines()))
    text = render_plan(plan).splitlines()
    notes = [line for line in text if line.startswith(("Cannot", "Read but", "No steps"))]
    if notes:
        show_text("\n".join(notes))


def provenance(cw: KernelCowork, args: argparse.Namespace) -> None:
    """``%cowork provenance [NAME]``: the execution that last set NAME, and its chain; with
    no NAME, every variable of the namespace in one table."""
    name = args.name
    if name is None:
        _overview(cw)
        return
    origin = cw.run(cw.host.provenance(name))
    state = cw.run(cw.session.check_kernel())  # what the namespace has now (issue 30)
    recreated = (
        f"{name} was re-created in this kernel outside the conversation (before Loom "
        "loaded): the conversation used an earlier value, and its record of this one "
        "starts here."
        if name in state.recreated
        else ""
    )
    setter = origin.setter
    if setter is None:
        show_text("\n".join(filter(None, (recreated, f"{name}: {origin.why}."))))
        return
    shown = "\n".join("    " + line for line in code_head(setter.code))
    said = f"{name} was last set by {setter.label} {ran(setter)}:\n{shown}"
    show_text(f"{recreated}\n{said}" if recreated else said)
    plan = origin.chain
    _show_plan(plan, f"What {name} depends on, in order ({seconds(plan.estimated_s)} in all).")


def _interrupted(cw: KernelCowork, names: list[str]) -> None:
    """Say what an interrupted rebuild left: the steps already run stay run."""
    made = [name for name in names if name in cw.shell.user_ns]
    missing = [name for name in names if name not in made]
    show_text(
        f"Rebuild interrupted. Present now: {', '.join(made) or 'none of them'}; missing: "
        f"{', '.join(missing)}. `%cowork rebuild {' '.join(missing)}` goes on from here "
        "(what exists now is not made again)."
    )


def _overview(cw: KernelCowork) -> None:
    """A row per variable of the namespace: what last set it, when, what a rebuild takes."""
    from loom_jupyter.lineage import trace
    from loom_jupyter.tools.describe import user_variables

    records = _records(cw)
    rows = []
    for variable in user_variables(dict(cw.shell.user_ns)):
        origin = trace(records, variable.name)
        setter = origin.setter
        if setter is None:
            rows.append((variable.name, variable.type_name, origin.why, "", "", ""))
            continue
        chain = origin.chain
        steps = f"{len(chain.steps)} step(s)" + (", needs --yes" if chain.consent_steps else "")
        rows.append(
            (
                variable.name,
                variable.type_name,
                setter.label,
                when(setter),
                steps,
                seconds(chain.estimated_s),
            )
        )
    if not rows:
        show_text("No variables in the namespace yet.")
        return
    show_table(
        ("name", "type", "last set by", "when", "rebuild", "est. time"),
        rows,
        caption=f"{len(rows)} variable(s); `%cowork provenance NAME` shows one's chain.",
    )


def rebuild(cw: KernelCowork, args: argparse.Namespace) -> None:
    """``%cowork rebuild NAME [NAME ...] [--yes]``: show the slice, run it, check the names."""
    names = rebuild_names(args.names)
    if not cw.idle:
        raise LoomError("A turn or a delegation is running: wait for it (or stop it) first.")
    plan = plan_rebuild(_records(cw), names, set(cw.shell.user_ns))
    caption = f"To rebuild {', '.join(names)}: {seconds(plan.estimated_s)} estimated."
    _show_plan(plan, caption, code=True)
    if not plan.steps:
        return
    held = consent_note(plan)
    if held is not None and not args.yes:
        show_text(f"{held} Run `%cowork rebuild {' '.join(names)} --yes` to run them.")
        return
    from loom_jupyter.jupyter.kernel.bridge import LiveKernelBridge

    bridge = LiveKernelBridge(cw.shell, cw.main)  # no recorder: the originals stay the record
    try:
        done = cw.run(replay(bridge, plan, names))
    except KeyboardInterrupt:
        _interrupted(cw, names)
        return
    cw.host.restart_offer = None  # taken up: a sidebar opened now is not offered it again
    for run in done.runs:
        if run.result.stdout:
            show_text(run.result.stdout.rstrip())
    if done.failure is not None:
        show_text(done.failure)
    show_table(
        ("name", "rebuilt", "check"),
        [(name, "yes" if ok else "no", found) for name, ok, found in done.checks],
        caption=f"Ran {len(done.runs)} of {len(plan.steps)} step(s).",
    )
