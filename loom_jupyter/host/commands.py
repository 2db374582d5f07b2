"""The sidebar's slash commands: the one table, and the answers the kernel gives.

:data:`SLASH_COMMANDS` is the table, written once: ``/help`` lists it and the front's
completion reads it from ``labextension/src/generated/commands.ts``, which
``python -m loom_jupyter.buildtools.contract`` writes from it. ``/new``, ``/fork``,
``/sessions`` and ``/search`` are answered by the front itself (``front``); the rest
need the kernel, without the model. Each answer is a
:class:`~loom_jupyter.host.wire.protocol.CommandResult` whose markdown the sidebar renders
sanitized, as a small card. Nothing here imports Jupyter.
"""

from __future__ import annotations

import asyncio
import re
import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING, get_args

from loom_jupyter.errors import LoomError
from loom_jupyter.host.wire.protocol import CommandResult, EffortChoice

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Sequence

    from loom_jupyter.host.host import Host
    from loom_jupyter.lineage import RebuildPlan
    from loom_jupyter.records import ModelCallRecord
    from loom_jupyter.tools.rebuild import Replayed

__all__ = ["SLASH_COMMANDS", "SlashCommand", "help_text", "run_command"]


@dataclass(frozen=True)
class SlashCommand:
    """A sidebar slash command: how it is typed and what it does. The kernel's `/help` and
    the front's completion show these words."""

    name: str
    """Typed after the slash, e.g. `rebuild`."""
    args: str
    """Its arguments as typed after the name (`""`: none), e.g. `NAME [NAME ...] [--yes]`."""
    description: str
    """What it does, in a few words."""
    front: bool = False
    """The front answers it itself; the others go to the kernel as a `command` message."""

    @property
    def usage(self) -> str:
        """The whole form: `/rebuild NAME [NAME ...] [--yes]`."""
        return f"/{self.name} {self.args}".rstrip()


EFFORT_LEVELS: tuple[str, ...] = get_args(EffortChoice)

SLASH_COMMANDS: tuple[SlashCommand, ...] = (
    SlashCommand("new", "", "start a new conversation", front=True),
    SlashCommand("fork", "", "copy this conversation and continue in the copy", front=True),
    SlashCommand("sessions", "", "list this notebook's conversations", front=True),
    SlashCommand("search", "WORDS", "search every conversation of this notebook", front=True),
    SlashCommand("cost", "", "tokens and cost of this conversation"),
    SlashCommand("model", "[NAME]", "show the model, or use another"),
    SlashCommand(
        "effort", "[LEVEL]", f"show or set the thinking effort ({', '.join(EFFORT_LEVELS)})"
    ),
    SlashCommand("delegate", "GOAL", "hand a big goal to parallel sub-agents"),
    SlashCommand(
        "rebuild",
        "NAME [NAME ...] [--yes]",
        "make variables again by re-running the recorded cells they need",
    ),
    SlashCommand(
        "export", "[PATH] [--force]", "write this conversation as Markdown (0600; --force replaces)"
    ),
    SlashCommand("mcp", "[--restart NAME]", "MCP servers, their state and tools"),
    SlashCommand("trust", "", "what this folder asks for, and trust it (or not)"),
    SlashCommand("help", "", "these commands, and @-mentions"),
)
"""Every slash command, in the order the front lists them."""

PRINTED_CHARS = 4000
"""The most of the replayed steps' printed output a /rebuild answer shows."""


_MENTIONS_HELP = (
    "Type `@` to mention a variable (`@df`), a cell (`@cell:ID`) or a file in the "
    "notebook's folder (`@data/sales.csv`): the message then carries a short summary of it."
)


def help_text() -> str:
    """The `/help` answer: one line per command of :data:`SLASH_COMMANDS`, then mentions."""
    lines = [f"- `{c.usage}` — {c.description}" for c in SLASH_COMMANDS]
    return "**Commands**\n\n" + "\n".join(lines) + "\n\n" + _MENTIONS_HELP


async def run_command(host: Host, name: str, args: str) -> CommandResult:
    """Run ``/name args``; a failure is a result that says why (``ok`` False)."""
    command = next((c for c in SLASH_COMMANDS if c.name == name), None)
    if command is None:
        known = ", ".join(f"/{c.name}" for c in SLASH_COMMANDS)
        return CommandResult(name, f"Unknown command `/{name}`. Commands: {known}.", ok=False)
    if command.front:  # only an incomplete one reaches the kernel, e.g. /search without words
        text = f"Usage: `{command.usage}` — {command.description} (the sidebar answers it)."
        return CommandResult(name, text, ok=False)
    try:
        return await _HANDLERS[name](host, args.strip())
    except LoomError as exc:
        return CommandResult(name, str(exc), ok=False)


async def _help(host: Host, args: str) -> CommandResult:
    return CommandResult("help", help_text())


async def _cost(host: Host, args: str) -> CommandResult:
    session = await host.session_async()
    sid = session.session_id
    calls = await host.views.model_calls(sid) if sid else []
    if not calls:
        return CommandResult("cost", "No model calls yet in this conversation.")
    return CommandResult("cost", _cost_text(calls) + "\n\n" + session.cache_note())


def _cost_text(calls: Sequence[ModelCallRecord]) -> str:
    from loom_jupyter.models.pricing import cost_text, priced

    def unpriced(c: ModelCallRecord) -> bool:
        used = c.input_tokens + c.output_tokens + c.cache_creation_tokens + c.cache_read_tokens
        return used > 0 and not priced(c.model)

    rows = ["| model | calls | in | out | cache | cost |", "|---|---:|---:|---:|---:|---:|"]
    for model in dict.fromkeys(c.model for c in calls):
        mine = [c for c in calls if c.model == model]
        known = sum(c.cost_usd for c in mine if not unpriced(c))
        rows.append(
            f"| {_cell(model)} | {len(mine)} | {sum(c.input_tokens for c in mine):,} | "
            f"{sum(c.output_tokens for c in mine):,} | "
            f"{sum(c.cache_creation_tokens + c.cache_read_tokens for c in mine):,} | "
            f"{cost_text(known, unknown=any(map(unpriced, mine)))} |"
        )
    known = sum(c.cost_usd for c in calls if not unpriced(c))
    total = cost_text(known, unknown=any(map(unpriced, calls)))
    return f"**Cost of this conversation: {total}** over {len(calls)} model calls.\n\n" + "\n".join(
        rows
    )


async def _model(host: Host, args: str) -> CommandResult:
    session = await host.session_async()
    if not args:
        return CommandResult(
            "model", f"Model: `{session.model.name}`. Use another with `/model NAME`."
        )
    session.set_model(args)
    return CommandResult("model", f"Model: `{session.model.name}` (from the next request).")


async def _effort(host: Host, args: str) -> CommandResult:
    try:  # the options (thinking, effort) and their set_options message
        from loom_jupyter.host.services.options import apply_options, model_options, options_line
    except ImportError:
        return CommandResult("effort", "Effort is not available in this kernel.", ok=False)
    if args and args not in EFFORT_LEVELS:
        raise LoomError(f"Usage: /effort {'|'.join(EFFORT_LEVELS)} (got {args!r}).")
    if args:  # the same door as the sidebar's set_options message
        options = await apply_options(host, effort=args)
    else:
        options = model_options(await host.session_async())
    return CommandResult("effort", options_line(options))


async def _trust(host: Host, args: str) -> CommandResult:
    """What the folder asks for, as text (the folder's words are never markup), and the
    trust card opened to answer it."""
    from loom_jupyter.host.services.trust import show_trust

    if args:
        raise LoomError("Usage: /trust (then Allow or Deny on the card)")
    trust = await show_trust(host)
    return CommandResult("trust", "**Folder trust**\n\n" + _fenced(trust.report()))


def _fenced(text: str, language: str = "text") -> str:
    """``text`` as a fenced block that nothing inside can close."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text}\n{fence}"


async def _mcp(host: Host, args: str) -> CommandResult:
    from loom_jupyter.mcp.view import CAPTION, HEADERS, NO_SERVERS, status_rows

    restart = None
    words = args.split()
    if words[:1] == ["--restart"]:
        if len(words) != 2:
            raise LoomError("Usage: /mcp --restart NAME")
        restart = words[1]
    elif words:
        raise LoomError("Usage: /mcp or /mcp --restart NAME")
    session = await host.session_async()
    statuses = await session.mcp_status(restart=restart)
    if not statuses:
        return CommandResult("mcp", NO_SERVERS)
    rows = ["| " + " | ".join(HEADERS) + " |", "|" + "---|" * len(HEADERS)]
    rows += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in status_rows(statuses)]
    caption = CAPTION.replace("%cowork mcp --restart NAME", "/mcp --restart NAME")
    return CommandResult("mcp", "**MCP servers**\n\n" + "\n".join(rows) + "\n\n" + caption)


async def _export(host: Host, args: str) -> CommandResult:
    from loom_jupyter.session.export import export_session, write_export

    session = await host.session_async()
    sid = session.session_id
    if sid is None:
        return CommandResult("export", "Nothing to export yet: this conversation has no turns.")
    info = await host.views.session_info(sid)
    turns = await host.views.turns(sid)
    words = shlex.split(args)
    force = "--force" in words
    given = next((w for w in words if w != "--force"), "")
    default = f"{host.location.path.stem}-cowork-{sid[:8]}.md"
    path = host.location.directory / (given or default)  # relative: the notebook's folder
    text = export_session(info, turns, "md")
    path = await asyncio.to_thread(write_export, path, text, force=force)
    return CommandResult(
        "export", f"Exported {len(turns)} turns to `{path}` (readable by you only)."
    )


async def _delegate(host: Host, args: str) -> CommandResult:
    from loom_jupyter.host.host import missing_key_message
    from loom_jupyter.orchestrator import attach

    if not args:
        raise LoomError("Usage: /delegate GOAL — plan GOAL into subtasks and run them.")
    session = await host.session_async()
    problem = missing_key_message() if session.settings.provider == "anthropic" else None
    if problem:
        raise LoomError(problem)
    outcome = await attach(session).start(args, background=True)
    return CommandResult(
        "delegate",
        f"Delegated task `{outcome.task_id[:8]}` is running: its plan and subtasks show above "
        "the chat, and its digest is posted to the conversation when it ends.",
    )


async def _rebuild(host: Host, args: str) -> CommandResult:
    """Plan, show, run (side effects only with ``--yes``), check: ``%cowork rebuild``'s path."""
    from loom_jupyter.lineage import plan_rebuild
    from loom_jupyter.tools.rebuild import consent_note, rebuild_names, replay

    words = args.split()
    flags = [w for w in words if w.startswith("-")]
    if set(flags) - {"--yes"} or not words:
        raise LoomError(f"Usage: `{_usage('rebuild')}`, e.g. `/rebuild total`.")
    names = rebuild_names(w for w in words if w != "--yes")
    _refuse_while_busy(host)
    session = await host.session_async()
    kernel = session.kernel
    present = {v.name for v in await kernel.list_variables()}
    plan = plan_rebuild(await host.executions(), names, present)
    shown = _plan_markdown(plan, names)
    held = consent_note(plan)
    if held is not None and "--yes" not in flags:
        retry = f"Type `/rebuild {' '.join(names)} --yes` to run them."
        return CommandResult("rebuild", f"{shown}\n\n**{held}** {retry}", ok=False)
    if not plan.steps:
        return CommandResult("rebuild", shown, ok=not plan.missing)
    _refuse_while_busy(host)
    done = await replay(kernel, plan, names)
    if done.ok:
        host.restart_offer = None  # taken up: a sidebar opened now is not offered it again
    answer = f"{shown}\n\n{_checks_markdown(done)}"
    return CommandResult("rebuild", answer, ok=done.ok and not plan.missing)


def _refuse_while_busy(host: Host) -> None:
    """A rebuild runs code in the namespace: never beside a turn or a delegation."""
    running = [t for t in host.floor.tasks.values() if t.status in ("planning", "running")]
    if not host.idle or host.floor.busy or running:
        what = "a delegation" if running and host.idle else "a turn"
        raise LoomError(
            f"Not now: {what} is running. Wait for it to end (or stop it), then send the "
            "/rebuild again."
        )


def _plan_markdown(plan: RebuildPlan, names: Sequence[str]) -> str:
    """The plan as markdown: the steps' table, the estimate, what cannot be made and why."""
    from loom_jupyter.tools.rebuild import PLAN_HEADERS, plan_rows, seconds, step_codes

    wanted = ", ".join(_code(n) for n in names)
    if not plan.steps:
        parts = [f"**Nothing to run to rebuild {wanted}.**"]
    else:
        head = f"**To rebuild {wanted}: {len(plan.steps)} step(s), about "
        rows = [
            f"| {n} | {_cell(label)} | {_cell(_code(line))} | {est} | {_cell(effects or '—')} |"
            for n, label, line, est, effects in plan_rows(plan)
        ]
        table = ["| " + " | ".join(PLAN_HEADERS) + " |", "|---:|---|---|---:|---|", *rows]
        parts = [head + f"{seconds(plan.estimated_s)}.**", "\n".join(table)]
        parts += [
            f"{_cell(heading)}:\n\n{_fenced(code, 'python')}" for heading, code in step_codes(plan)
        ]
    if plan.missing:
        missing = [f"- {_code(name)}: {_cell(why)}" for name, why in plan.missing.items()]
        parts.append("Cannot rebuild:\n\n" + "\n".join(missing))
    if plan.unresolved:
        listed = ", ".join(_code(n) for n in plan.unresolved)
        parts.append(f"Read but set by no recorded execution (must exist already): {listed}.")
    return "\n\n".join(parts)


def _checks_markdown(done: Replayed) -> str:
    """What the rebuild ran and each name's check, as markdown."""
    rows = [
        f"| {_code(name)} | {'yes' if ok else 'no'} | {_cell(found)} |"
        for name, ok, found in done.checks
    ]
    table = "\n".join(["| name | rebuilt | check |", "|---|---|---|", *rows])
    ran = f"Ran {len(done.runs)} of {done.total} step(s)."
    failure = f" {_cell(done.failure)}" if done.failure is not None else ""
    return f"{ran}{failure}{_printed(done)}\n\n{table}"


def _printed(done: Replayed) -> str:
    """What the steps printed, as the magic shows it: a fenced block, capped."""
    text = "".join(run.result.stdout for run in done.runs).rstrip()
    if not text:
        return ""
    if len(text) > PRINTED_CHARS:
        text = text[:PRINTED_CHARS].rstrip() + f"\n[... cut at {PRINTED_CHARS:,} characters]"
    fence = "`" * max(3, max(map(len, re.findall(r"`+", text)), default=0) + 1)
    return f"\n\nThe steps printed:\n\n{fence}text\n{text}\n{fence}"


def _usage(name: str) -> str:
    return next(c.usage for c in SLASH_COMMANDS if c.name == name)


def _code(text: str) -> str:
    """``text`` as an inline code span, whatever backticks it holds."""
    if not text:
        return ""
    fence = "`" * (max(map(len, re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _cell(value: object) -> str:
    """A value inside a markdown table's cell."""
    return " ".join(str(value).split()).replace("|", "\\|")


_HANDLERS: dict[str, Callable[[Host, str], Awaitable[CommandResult]]] = {
    "help": _help,
    "cost": _cost,
    "model": _model,
    "effort": _effort,
    "mcp": _mcp,
    "trust": _trust,
    "export": _export,
    "delegate": _delegate,
    "rebuild": _rebuild,
}
