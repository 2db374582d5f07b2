"""Rebuilding variables from the archived executions (issue 21, DESIGN §11).

:func:`~loom_jupyter.lineage.plan_rebuild` chooses the steps; this module shows them
(:func:`plan_rows`, :func:`render_plan`), runs them through a
:class:`~loom_jupyter.tools.base.KernelBridge` (:func:`run_steps`, stopping at the first
error) and checks the names afterwards (:func:`check_names`). ``%cowork rebuild``, the
sidebar's ``/rebuild`` and the tool ``rebuild_variables`` (:class:`RebuildVariables`) share
one path: :func:`rebuild_names` (which names), :func:`consent_note` (steps that need
``--yes``), :func:`replay` (run, then check) and :func:`failure_text`.
"""

from __future__ import annotations

import keyword
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, ClassVar

from loom_jupyter.errors import ToolError
from loom_jupyter.lineage import plan_rebuild
from loom_jupyter.messages import ToolSpec
from loom_jupyter.tools.approval import ApprovalRequest
from loom_jupyter.tools.base import ToolAccess, ToolContext, ToolOutput, TypedTool
from loom_jupyter.tools.schema import Limit, ToolInput, input_schema

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from loom_jupyter.lineage import ExecutionRecord, RebuildPlan, VariableTrace
    from loom_jupyter.tools.base import ExecutionResult, KernelBridge

__all__ = [
    "MAX_NAMES",
    "PLAN_HEADERS",
    "RebuildVariables",
    "RebuildVariablesInput",
    "Replayed",
    "StepRun",
    "check_names",
    "consent_note",
    "failure_text",
    "first_line",
    "plan_rows",
    "provenance_text",
    "ran",
    "rebuild_names",
    "render_plan",
    "replay",
    "run_steps",
    "step_codes",
]

PLAN_HEADERS = ("#", "source", "first line", "est. time", "effects")
MAX_NAMES = 50
"""At most this many names in one rebuild."""


def rebuild_names(names: Iterable[str]) -> list[str]:
    """The names to rebuild, each once, in order; a clear :class:`ToolError` for none, more
    than :data:`MAX_NAMES`, or one that is no variable name (a Python identifier)."""
    unique = list(dict.fromkeys(str(name) for name in names))
    if not unique:
        raise ToolError("Name the variables to rebuild.")
    if len(unique) > MAX_NAMES:
        raise ToolError(f"At most {MAX_NAMES} names in one rebuild (got {len(unique)}).")
    bad = [name for name in unique if not name.isidentifier() or keyword.iskeyword(name)]
    if bad:
        shown = ", ".join(repr(name if len(name) <= 40 else name[:39] + "…") for name in bad[:5])
        raise ToolError(f"Not a variable name (a Python identifier): {shown}.")
    return unique


def consent_note(plan: RebuildPlan) -> str | None:
    """Why nothing ran, when steps of ``plan`` change the world outside the namespace (they
    run only with the person's ``--yes``); ``None`` when no step needs that."""
    risky = [
        f"{n} ({', '.join(s.effects)})" for n, s in enumerate(plan.steps, 1) if s.needs_consent
    ]
    if not risky:
        return None
    return (
        f"Nothing was run: step(s) {', '.join(risky)} may write files, use the network or "
        "run a subprocess."
    )


def first_line(code: str, limit: int = 60) -> str:
    """The code's first non-blank line, cut to ``limit`` characters."""
    line = next((line.strip() for line in code.splitlines() if line.strip()), "")
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def seconds(value: float) -> str:
    """``0.12 s``, ``3.4 s``, ``2 min 5 s``."""
    if value >= 60:
        return f"{int(value // 60)} min {int(value % 60)} s"
    return f"{value:.2f} s" if value < 10 else f"{value:.1f} s"


def plan_rows(plan: RebuildPlan) -> list[tuple[int, str, str, str, str]]:
    """One row per step: order, where it ran, its first line, its duration, its effects."""
    return [
        (n, step.label, first_line(step.code), seconds(step.duration_s), ", ".join(step.effects))
        for n, step in enumerate(plan.steps, 1)
    ]


def step_codes(plan: RebuildPlan) -> list[tuple[str, str]]:
    """Each step's heading (order, where it ran, its effects judged now) and its whole code:
    what the person reads before a rebuild runs anything."""
    return [
        (
            f"Step {n}: {step.label}" + (f" — {', '.join(step.effects)}" if step.effects else ""),
            step.code.rstrip(),
        )
        for n, step in enumerate(plan.steps, 1)
    ]


def cannot(plan: RebuildPlan) -> list[str]:
    """``name: reason`` for every name the plan cannot make."""
    return [f"{name}: {why}" for name, why in plan.missing.items()]


def render_plan(plan: RebuildPlan) -> str:
    """The plan as plain text: a table of steps, the estimate, what it cannot rebuild."""
    lines: list[str] = []
    if plan.steps:
        rows = [tuple(str(cell) for cell in row) for row in plan_rows(plan)]
        widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(PLAN_HEADERS)]
        lines.append("  ".join(h.ljust(w) for h, w in zip(PLAN_HEADERS, widths, strict=True)))
        lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
        lines.append(f"{len(plan.steps)} step(s), about {seconds(plan.estimated_s)}.")
        for heading, code in step_codes(plan):
            lines += [f"{heading}:", *("    " + line for line in code.splitlines())]
    else:
        lines.append("No steps to run.")
    if plan.missing:
        lines.append("Cannot rebuild: " + "; ".join(cannot(plan)))
    if plan.unresolved:
        lines.append(
            "Read but set by no archived execution (must exist already): "
            + ", ".join(plan.unresolved)
        )
    return "\n".join(lines)


SHOWN_LINES = 6  # lines of the setter's code a provenance shows
SHOWN_STEPS = 12  # earlier executions a provenance names


def when(record: ExecutionRecord) -> str:
    """When it ran: ``2026-11-24 08:30:11 UTC`` (``?`` if unknown; a cell recorded late:
    ``before Loom loaded``)."""
    if record.late:
        return "before Loom loaded"
    return record.created_at[:19].replace("T", " ") + " UTC" if record.created_at else "?"


def ran(record: ExecutionRecord) -> str:
    """``at 2026-… UTC, in 0.12 s``; a cell recorded late (run before Loom loaded) has no
    time of its own."""
    if record.late:
        return "(recorded when Loom loaded: no timing, no namespace diff)"
    return f"at {when(record)}, in {seconds(record.duration_s)}"


def code_head(code: str, limit: int = SHOWN_LINES) -> list[str]:
    """The code's first ``limit`` lines, and a count of the rest."""
    lines = code.rstrip().splitlines()
    more = [f"… ({len(lines) - limit} more lines)"] if len(lines) > limit else []
    return lines[:limit] + more


def provenance_text(origin: VariableTrace) -> str:
    """Where a variable came from, as plain text (``inspect_variables``, the model)."""
    setter = origin.setter
    if setter is None:
        return f"Provenance of {origin.name}: {origin.why}."
    code = "\n".join("    " + line for line in code_head(setter.code))
    lines = [
        f"Provenance of {origin.name}: last set by {setter.label} {ran(setter)}:",
        code,
    ]
    earlier = origin.depends_on
    if earlier:
        named = "; ".join(f"{s.label} `{first_line(s.code, 40)}`" for s in earlier[-SHOWN_STEPS:])
        hidden = len(earlier) - SHOWN_STEPS
        skipped = f" (and {hidden} before)" if hidden > 0 else ""
        lines.append(f"It depends on {len(earlier)} earlier execution(s){skipped}: {named}.")
    else:
        lines.append("It depends on no earlier execution.")
    if origin.chain.unresolved:
        lines.append("Read but set by no archived execution: " + ", ".join(origin.chain.unresolved))
    return "\n".join(lines)


@dataclass(frozen=True)
class StepRun:
    """One step as it ran again."""

    step: ExecutionRecord
    result: ExecutionResult


async def run_steps(kernel: KernelBridge, steps: Sequence[ExecutionRecord]) -> list[StepRun]:
    """Run ``steps`` in order through ``kernel``; stops after the first that raises."""
    done: list[StepRun] = []
    for step in steps:
        result = await kernel.run_code(step.code, source="rebuild")
        done.append(StepRun(step, result))
        if result.error is not None:
            break
    return done


def check_names(
    names: Sequence[str], steps: Sequence[ExecutionRecord], current: Mapping[str, str | None]
) -> list[tuple[str, bool, str]]:
    """Each name's outcome: (name, ok, what was found).

    ``current`` maps the names that exist now to their fingerprint (``None``: a value too
    big or odd to fingerprint); a fingerprint recorded by the last step that changed the
    name must match.
    """
    outcome: list[tuple[str, bool, str]] = []
    for name in names:
        if name not in current:
            outcome.append((name, False, "missing after the rebuild"))
            continue
        expected = next(
            (s.fingerprints[name] for s in reversed(steps) if name in s.fingerprints), None
        )
        found = current[name]
        if expected is None or found is None:
            outcome.append((name, True, "present (no fingerprint to compare)"))
        elif found == expected:
            outcome.append((name, True, "present, same fingerprint as recorded"))
        else:
            outcome.append((name, False, "present, but its fingerprint differs from the record"))
    return outcome


def failure_text(runs: Sequence[StepRun], total: int) -> str | None:
    """The step that raised (its error's last line) and how many were not run, or ``None``."""
    for n, run in enumerate(runs, 1):
        if run.result.error is not None:
            error = [x for x in run.result.error.strip().splitlines() if x.strip()]
            return (
                f"Step {n} ({run.step.label}) raised: {error[-1] if error else 'error'}. "
                f"Stopped: {total - n} later step(s) not run."
            )
    return None


@dataclass(frozen=True)
class Replayed:
    """A plan as it ran again: the steps run (up to the first error) and each name's check."""

    runs: tuple[StepRun, ...]
    checks: tuple[tuple[str, bool, str], ...]  # (name, ok, what was found): check_names
    total: int  # the plan's steps

    @property
    def failure(self) -> str | None:
        """What stopped the run (:func:`failure_text`), or ``None``."""
        return failure_text(self.runs, self.total)

    @property
    def ok(self) -> bool:
        """Every step ran without an error and every name checks out."""
        return self.failure is None and all(ok for _, ok, _ in self.checks)

    @property
    def rebuilt(self) -> int:
        """How many names check out."""
        return sum(ok for _, ok, _ in self.checks)


async def replay(kernel: KernelBridge, plan: RebuildPlan, names: Sequence[str]) -> Replayed:
    """Run ``plan``'s steps through ``kernel`` (:func:`run_steps`), then check ``names``
    against the fingerprints the kernel finds now (:func:`check_names`)."""
    runs = await run_steps(kernel, plan.steps)
    checks = check_names(names, plan.steps, await kernel.fingerprints(names))
    return Replayed(tuple(runs), tuple(checks), len(plan.steps))


def _run_text(done: Replayed) -> str:
    return done.failure or f"Ran {len(done.runs)} step(s)."


@dataclass(frozen=True, kw_only=True)
class RebuildVariablesInput(ToolInput):
    """``rebuild_variables``' input (:func:`rebuild_names` checks the names)."""

    names: Annotated[tuple[Annotated[str, Limit(min_length=1)], ...], Limit(min_length=1)]
    """Variable names to rebuild."""


class RebuildVariables(TypedTool[RebuildVariablesInput]):
    """``rebuild_variables``: replay the archived executions that make some names again."""

    input_type = RebuildVariablesInput
    access: ClassVar[ToolAccess] = "write"
    spec: ClassVar[ToolSpec] = ToolSpec(
        name="rebuild_variables",
        description=(
            "Make variables again (e.g. after a kernel restart) by re-running, in order, the "
            "smallest slice of archived executions (the person's cells and your run_python) "
            "that set them and what they depend on. Returns the plan and the outcome; names "
            "it cannot rebuild come with the reason. Plans with steps that write files, use "
            "the network or run a subprocess are not run: the person can run "
            "`%cowork rebuild NAME --yes` after reading them."
        ),
        input_schema=input_schema(RebuildVariablesInput),
    )

    def runs_code(self, args: RebuildVariablesInput) -> bool:
        """Always: it replays archived code; the protected files are checked after it."""
        return True

    def guard_rail(self, args: RebuildVariablesInput, ctx: ToolContext | None) -> str | None:
        """None: it replays archived steps in the namespace, and a step that writes files,
        runs a process or uses the network is never run by this tool (:func:`consent_note`)."""
        return None

    def approval_request(
        self, args: RebuildVariablesInput, ctx: ToolContext | None
    ) -> ApprovalRequest:
        """Names the variables (when the steps cannot be read; see :meth:`describe_call`)."""
        names = ", ".join(args.names)
        return ApprovalRequest("rebuild_variables", f"rebuild {names}", names)

    async def describe_call(self, args: RebuildVariablesInput, ctx: ToolContext) -> ApprovalRequest:
        """The plan the person approves: every step's whole code and its effects."""
        names = rebuild_names(args.names)
        if ctx.executions is None:
            return self.approval_request(args, ctx)
        records = await ctx.executions.executions()
        present = {v.name for v in await ctx.kernel.list_variables()}
        plan = plan_rebuild(records, names, present)
        summary = f"rebuild {', '.join(names)} by re-running {len(plan.steps)} step(s)"
        return ApprovalRequest("rebuild_variables", summary, render_plan(plan))

    async def run(self, args: RebuildVariablesInput, ctx: ToolContext) -> ToolOutput:
        """Plan, refuse side effects, run the steps, check the names."""
        if ctx.executions is None:
            raise ToolError("No execution archive here: nothing to rebuild from.")
        names = rebuild_names(args.names)
        records = await ctx.executions.executions()
        present = {v.name for v in await ctx.kernel.list_variables()}
        plan = plan_rebuild(records, names, present)
        text = render_plan(plan)
        held = consent_note(plan)
        if held is not None:
            return ToolOutput.error(
                f"{text}\n{held} Ask the person to run `%cowork rebuild {' '.join(names)} "
                "--yes` if they agree."
            )
        if not plan.steps:
            return ToolOutput.text(text, summary="nothing to rebuild", is_error=bool(plan.missing))
        done = await replay(ctx.kernel, plan, names)
        lines = [text, _run_text(done)]
        lines += [f"{name}: {found}" for name, _, found in done.checks]
        return ToolOutput.text(
            "\n".join(lines),
            summary=f"rebuilt {done.rebuilt} of {len(names)} name(s)",
            is_error=not done.ok,
        )
