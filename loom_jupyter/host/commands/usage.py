"""The conversation's settings and spending: cost, model, effort, thinking, approval; and
``/delegate``, ``/help``.

Every change runs here, on the engine loop (never a front's thread), and every open
sidebar is told through the same doors as its own messages (``apply_options``,
``TrustKeeper.set_approval``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from loom_jupyter.errors import LoomError
from loom_jupyter.host.commands.context import Context, HostContext
from loom_jupyter.host.commands.report import CostPlot, Note, Report, Table, listing, say

if TYPE_CHECKING:
    from collections.abc import Sequence

    from loom_jupyter.host.commands.arguments import (
        ApprovalArgs,
        DelegateArgs,
        EffortArgs,
        ModelArgs,
        NoArgs,
        ThinkingArgs,
    )
    from loom_jupyter.host.commands.fields import Front
    from loom_jupyter.host.commands.spec import Spec
    from loom_jupyter.host.host import Host
    from loom_jupyter.records import ModelCallRecord
    from loom_jupyter.session.options import SessionOptions

__all__ = [
    "always_text",
    "approval",
    "commands_help",
    "cost",
    "delegate",
    "effort",
    "model",
    "per_call_table",
    "thinking",
]


def _host(context: Context) -> Host:
    if not isinstance(context, HostContext):  # the registry offers these in kernels only
        raise TypeError("this command needs the kernel's host")
    return context.host


async def cost(context: Context, args: NoArgs) -> Report:
    """Per model and per call: tokens and cost (the one "price unknown" rule:
    :func:`~loom_jupyter.models.pricing.unpriced_call`), the plot, the cache's rhythm."""
    host = _host(context)
    session = await host.session_async()
    sid = session.session_id
    calls = await host.views.model_calls(sid) if sid else []
    if not calls:
        return say("No model calls yet in this session.")
    return Report(
        title=f"Cost of this session: {_total(calls)} over {len(calls)} model calls.",
        parts=(
            _per_model(calls),
            per_call_table(calls),
            CostPlot(tuple(calls)),
            Note(session.cache_note()),
        ),
    )


def _total(calls: Sequence[ModelCallRecord]) -> str:
    from loom_jupyter.models.pricing import cost_text, unpriced_call

    known = sum(c.cost_usd for c in calls if not unpriced_call(c))
    return cost_text(known, unknown=any(map(unpriced_call, calls)))


def _per_model(calls: Sequence[ModelCallRecord]) -> Table:
    rows = []
    for name in dict.fromkeys(c.model for c in calls):
        mine = [c for c in calls if c.model == name]
        rows.append(
            (
                name,
                len(mine),
                sum(c.input_tokens for c in mine),
                sum(c.output_tokens for c in mine),
                sum(c.cache_creation_tokens + c.cache_read_tokens for c in mine),
                _total(mine),
            )
        )
    return Table(("model", "calls", "in", "out", "cache", "cost"), tuple(rows), align="<>>>>>")


def per_call_table(calls: Sequence[ModelCallRecord]) -> Table:
    """One row per model call (the one "price unknown" rule), then the total."""
    from loom_jupyter.models.pricing import PRICE_UNKNOWN, cost_text, unpriced_call

    rows: list[tuple[object, ...]] = [
        (
            n,
            c.turn_number or "",
            c.model,
            c.input_tokens,
            c.output_tokens,
            c.cache_creation_tokens + c.cache_read_tokens,
            PRICE_UNKNOWN if unpriced_call(c) else cost_text(c.cost_usd),
            c.stop_reason or c.error or "",
        )
        for n, c in enumerate(calls, 1)
    ]
    rows.append(
        (
            "total",
            "",
            "",
            sum(c.input_tokens for c in calls),
            sum(c.output_tokens for c in calls),
            sum(c.cache_creation_tokens + c.cache_read_tokens for c in calls),
            _total(calls),
            "",
        )
    )
    headers = ("call", "turn", "model", "in", "out", "cache", "cost", "stop")
    return Table(headers, tuple(rows), align=">><>>>><")


async def model(context: Context, args: ModelArgs) -> Report:
    """Use another model from the next request; with no name, the models the Models API
    lists (id, display name, context window, max output; the current one marked)."""
    from loom_jupyter.models.catalog import model_rows

    session = await _host(context).session_async()
    if args.name:
        return await _switch_model(
            context, session.environment.options, args.name, refresh=args.refresh
        )
    listed = await session.environment.options.list_models(refresh=args.refresh)
    caption = f"* = current. {listed.describe()} Switch with {context.spelled('model NAME')}."
    rows = tuple(model_rows(listed, session.model.name))
    headers = ("", "id", "name", "context window", "max output")
    return Report(parts=(Table(headers, rows, caption, nowrap=True),))


async def _switch_model(
    context: Context, options: SessionOptions, name: str, *, refresh: bool
) -> Report:
    """Use ``name`` (an alias or an id) when the Models API lists it; refuse it, naming the
    listed ones, when the API answered without it; take it with a warning when the API
    could not be asked (offline, a provider without the Models API)."""
    from loom_jupyter.settings import MODEL_ALIASES

    wanted = MODEL_ALIASES.get(name, name)
    listed = await options.list_models(refresh=refresh)
    if listed.find(wanted) is None and listed.source == "cache" and listed.answered:
        listed = await options.list_models(refresh=True)  # a model newer than the cached list?
    if listed.find(wanted) is None and listed.answered:
        ids = ", ".join(f"`{m.id}`" for m in listed.models)
        aliases = ", ".join(MODEL_ALIASES)
        return say(
            f"Unknown model `{name}`: the Models API lists {ids} (or say {aliases}). The model "
            f"stays `{options.model.name}`; {context.spelled('model')} shows each one's limits.",
            ok=False,
        )
    options.set_model(name)
    said = f"Model: {options.model.name} (from the next request)."
    if listed.find(wanted) is None:
        why = listed.note or "it lists no models"
        said += (
            f" Not checked: the Models API could not be asked ({why}). If it does not know "
            "this model, the next request will say so."
        )
    return say(said)


async def effort(context: Context, args: EffortArgs) -> Report:
    """Show, or set from the next turn, the effort (``default``: none sent)."""
    from loom_jupyter.host.services.options import apply_options, options_line

    return say(options_line(await apply_options(_host(context), effort=args.level)))


async def thinking(context: Context, args: ThinkingArgs) -> Report:
    """Show, or set from the next turn, adaptive thinking."""
    from loom_jupyter.host.services.options import apply_options, options_line

    mode: Literal["off", "adaptive"] | None = None
    if args.mode is not None:
        mode = "adaptive" if args.mode == "on" else "off"
    return say(options_line(await apply_options(_host(context), thinking=mode)))


async def approval(context: Context, args: ApprovalArgs) -> Report:
    """The person's word on approvals, beating every setting; or what is in force."""
    host = _host(context)
    session = await host.session_async()
    if args.forget:
        session.policy.reset()
        return say('Forgot every "Always" answer: those calls ask again.')
    if args.mode is None:
        mode, source = host.trust.approval_mode()
        switch = context.spelled("approval MODE")
        return Report(
            parts=(
                Note(f"Approval policy: {mode} ({source}). Switch with {switch}."),
                Note(await always_text(context)),
            )
        )
    await host.trust.set_approval(args.mode)
    return say(f"Approval policy: {args.mode} (magic).")


async def always_text(context: Context) -> str:
    """What the person's "Always" answers allow in this session, and how to take them back."""
    session = await _host(context).session_async()
    labels = session.policy.always_labels()
    if not labels:
        return 'Nothing is allowed "Always" in this session.'
    listed = "; ".join(labels)
    return f'Allowed "Always": {listed}. {context.spelled("approval --forget")} asks again.'


async def delegate(context: Context, args: DelegateArgs) -> Report:
    """Plan the goal into subtasks and run them in the background."""
    from loom_jupyter.host.services.keys import missing_key_message
    from loom_jupyter.orchestrator import attach

    if not args.goal.strip():
        raise LoomError("Usage: /delegate GOAL — plan GOAL into subtasks and run them.")
    session = await _host(context).session_async()
    problem = missing_key_message() if session.settings.provider == "anthropic" else None
    if problem:
        raise LoomError(problem)
    outcome = await attach(session).start(args.goal, background=True)
    return say(
        f"Delegated task `{outcome.task_id[:8]}` is running: its plan and subtasks show above "
        "the chat, and its digest is posted to the conversation when it ends."
    )


MENTIONS_HELP = (
    "Type `@` to mention a variable (`@df`), a cell (`@cell:ID`) or a file in the "
    "notebook's folder (`@data/sales.csv`): the message then carries a short summary of it."
)


def commands_help(front: Front, offered: Sequence[Spec[Any]]) -> Report:
    """``/help``: the commands ``front`` offers (``offered``, the registry's, which answers
    ``help`` itself: it reads the table), one line each, then @-mentions."""
    lines = [f"`{spec.usage(front)}` — {spec.summary}" for spec in offered]
    return Report(title="Commands", parts=(Note(listing(lines)), Note(MENTIONS_HELP)))
