"""Where variables came from, and making them again: ``provenance`` and ``rebuild``
(issue 21, DESIGN §11).

Both read the archived executions; :func:`~loom_jupyter.lineage.plan_rebuild` picks the
slice. A rebuild shows the slice first, holds steps that change the world outside the
namespace unless ``--yes``, runs the steps in the live namespace (not recorded again),
then checks each name and, where one was recorded, its fingerprint.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loom_jupyter.host.commands.context import ArchiveContext, Context, HostContext
from loom_jupyter.host.commands.report import Block, Items, Note, Part, Report, Table, say

if TYPE_CHECKING:
    from collections.abc import Sequence

    from loom_jupyter.host.commands.arguments import NameArgs, RebuildArgs
    from loom_jupyter.lineage import ExecutionRecord, RebuildPlan
    from loom_jupyter.tools.rebuild import Replayed

__all__ = ["PRINTED_CHARS", "interrupted", "provenance", "rebuild"]

PRINTED_CHARS = 4000
"""The most of the replayed steps' printed output a rebuild's answer shows."""


def _names(names: Sequence[str]) -> str:
    return ", ".join(f"`{n}`" for n in names)


async def rebuild(context: Context, args: RebuildArgs) -> Report:
    """Plan, show, run (steps with side effects only with ``--yes``), check."""
    from loom_jupyter.lineage import plan_rebuild
    from loom_jupyter.tools.rebuild import consent_note, rebuild_names, replay

    assert isinstance(context, HostContext)  # the registry offers it in kernels only
    names = rebuild_names(args.names)
    host = context.host
    session = await host.session_async()
    kernel = context.kernel or session.kernel
    present = {v.name for v in await kernel.list_variables()}
    plan = plan_rebuild(await host.executions.all(), names, present)
    shown = _plan(plan, names)
    held = consent_note(plan)
    if held is not None and not args.yes:
        again = context.spelled(f"rebuild {' '.join(names)} --yes")
        return Report(
            shown.title, (*shown.parts, Note(f"{held} Type `{again}` to run them.")), False
        )
    if not plan.steps:
        return Report(shown.title, shown.parts, ok=not plan.missing)
    await context.refuse_while_running("rebuild")  # planning awaited: nothing may have started
    done = await replay(kernel, plan, names)
    if done.ok:
        host.restarts.taken()  # taken up: a sidebar opened now is not offered it again
    return Report(shown.title, (*shown.parts, *_checks(done)), ok=done.ok and not plan.missing)


def _plan(plan: RebuildPlan, names: Sequence[str]) -> Report:
    """The plan: the steps' table and code, the estimate, what cannot be made and why."""
    from loom_jupyter.tools.rebuild import PLAN_HEADERS, plan_rows, seconds, step_codes

    parts: list[Part] = []
    if not plan.steps:
        title = f"Nothing to run to rebuild {_names(names)}."
    else:
        title = (
            f"To rebuild {_names(names)}: {len(plan.steps)} step(s), about "
            f"{seconds(plan.estimated_s)}."
        )
        parts.append(Table(PLAN_HEADERS, tuple(plan_rows(plan)), align=">><><", code=(2,)))
        parts += [Block(code, language="python", heading=head) for head, code in step_codes(plan)]
    if plan.missing:
        parts.append(Items("Cannot rebuild:", tuple(plan.missing.items())))
    if plan.unresolved:
        parts.append(
            Note(
                "Read but set by no recorded execution (must exist already): "
                f"{_names(plan.unresolved)}."
            )
        )
    return Report(title, tuple(parts))


def _checks(done: Replayed) -> tuple[Part, ...]:
    """What the steps printed, a failure, and each name's check."""
    parts: list[Part] = []
    printed = "".join(run.result.stdout for run in done.runs).rstrip()
    if len(printed) > PRINTED_CHARS:
        printed = printed[:PRINTED_CHARS].rstrip() + f"\n[... cut at {PRINTED_CHARS:,} characters]"
    if printed:
        parts.append(Block(printed, heading="The steps printed"))
    if done.failure is not None:
        parts.append(Note(done.failure))
    rows = tuple((name, "yes" if ok else "no", found) for name, ok, found in done.checks)
    caption = f"Ran {len(done.runs)} of {done.total} step(s)."
    parts.append(Table(("name", "rebuilt", "check"), rows, caption, code=(0,)))
    return tuple(parts)


def interrupted(names: Sequence[str], present: Sequence[str]) -> str:
    """What an interrupted rebuild left: the steps already run stay run."""
    made = [name for name in names if name in present]
    missing = [name for name in names if name not in made]
    return (
        f"Rebuild interrupted. Present now: {', '.join(made) or 'none of them'}; missing: "
        f"{', '.join(missing)}. `%cowork rebuild {' '.join(missing)}` goes on from here "
        "(what exists now is not made again)."
    )


async def provenance(context: Context, args: NameArgs) -> Report:
    """The execution that last set NAME, and its chain; with no NAME, every variable."""
    if isinstance(context, ArchiveContext):
        return await _archive_provenance(context, args)
    if args.name is None:
        return await _overview(context)
    from loom_jupyter.tools.rebuild import code_head, ran, seconds

    name = args.name
    host = context.host
    origin = await host.executions.trace(name)
    state = await (await host.session_async()).check_kernel()  # the namespace now (issue 30)
    notes = []
    if name in state.recreated:
        notes.append(
            f"{name} was re-created in this kernel outside the conversation (before Loom "
            "loaded): the conversation used an earlier value, and its record of this one "
            "starts here."
        )
    setter = origin.setter
    if setter is None:
        return say("\n".join([*notes, f"{name}: {origin.why}."]))
    shown = "\n".join("    " + line for line in code_head(setter.code))
    notes.append(f"{name} was last set by {setter.label} {ran(setter)}:\n{shown}")
    plan = origin.chain
    parts: list[Part] = [Note("\n".join(notes))]
    if plan.steps:
        from loom_jupyter.tools.rebuild import PLAN_HEADERS, plan_rows

        caption = f"What {name} depends on, in order ({seconds(plan.estimated_s)} in all)."
        parts.append(Table(PLAN_HEADERS, tuple(plan_rows(plan)), caption, code=(2,)))
    missing = _plan(plan, [name]).parts
    parts += [p for p in missing if isinstance(p, Note | Items)]
    return Report(parts=tuple(parts))


async def _overview(context: HostContext) -> Report:
    """A row per variable of the namespace: what last set it, when, what a rebuild takes."""
    from loom_jupyter.lineage import trace
    from loom_jupyter.tools.rebuild import seconds, when

    host = context.host
    records = await host.executions.all()
    kernel = context.kernel or (await host.session_async()).kernel
    rows = []
    for variable in await kernel.list_variables():
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
        return say("No variables in the namespace yet.")
    caption = f"{len(rows)} variable(s); `{context.spelled('provenance NAME')}` shows one's chain."
    headers = ("name", "type", "last set by", "when", "rebuild", "est. time")
    return Report(parts=(Table(headers, tuple(rows), caption),))


async def _archive_provenance(context: ArchiveContext, args: NameArgs) -> Report:
    from loom_jupyter.lineage import trace
    from loom_jupyter.tools.rebuild import provenance_text, when

    archive = context.opened
    records = await archive.executions()
    if not records:
        return say(f"No executions recorded yet in {archive.path} (they are once Loom is loaded).")
    if args.name is not None:
        return say(provenance_text(trace(records, args.name)))
    last: dict[str, ExecutionRecord] = {}
    for record in records:
        if record.error is None:
            for name in (*record.sets, *record.mutates):
                last[name] = record
    rows = tuple((name, last[name].label, when(last[name])) for name in sorted(last))
    return Report(parts=(Table(("NAME", "LAST SET BY", "WHEN"), rows, align="<<<"),))
