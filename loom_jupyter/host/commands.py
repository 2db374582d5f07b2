"""The sidebar's slash commands that the kernel answers without the model.

``/new``, ``/fork``, ``/sessions`` and ``/search`` are the front's own messages; the
commands here need the kernel: ``/cost``, ``/model``, ``/effort``, ``/mcp``,
``/export``, ``/delegate`` and ``/help``. Each answer is a
:class:`~loom_jupyter.host.protocol.CommandResult` whose markdown the sidebar renders
sanitized, as a small card. Nothing here imports Jupyter.
"""

from __future__ import annotations

import asyncio
import shlex
from typing import TYPE_CHECKING

from loom_jupyter.errors import LoomError
from loom_jupyter.host.protocol import CommandResult

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from loom_jupyter.host.host import Host
    from loom_jupyter.records import ModelCallRecord

__all__ = ["COMMANDS", "run_command"]

COMMANDS: tuple[tuple[str, str], ...] = (
    ("new", "start a new conversation"),
    ("fork", "copy this conversation and continue in the copy"),
    ("sessions", "list this notebook's conversations"),
    ("search", "search every conversation of this notebook: /search WORDS"),
    ("cost", "tokens and cost of this conversation"),
    ("model", "show the model, or use another: /model NAME"),
    ("effort", "show or set the thinking effort: /effort low|medium|high|xhigh|max"),
    ("delegate", "hand a big goal to parallel sub-agents: /delegate GOAL"),
    ("export", "write this conversation as Markdown: /export [PATH]"),
    ("mcp", "MCP servers, their state and tools: /mcp [--restart NAME]"),
    ("help", "these commands, and @-mentions"),
)
"""Every slash command and its one-line description (the sidebar has the same table)."""

_MENTIONS_HELP = (
    "Type `@` to mention a variable (`@df`), a cell (`@cell:ID`) or a file in the "
    "notebook's folder (`@data/sales.csv`): the message then carries a short summary of it."
)


async def run_command(host: Host, name: str, args: str) -> CommandResult:
    """Run ``/name args``; a failure is a result that says why (``ok`` False)."""
    handler = _HANDLERS.get(name)
    if handler is None:
        known = ", ".join(f"/{n}" for n, _ in COMMANDS)
        return CommandResult(name, f"Unknown command `/{name}`. Commands: {known}.", ok=False)
    try:
        return await handler(host, args.strip())
    except LoomError as exc:
        return CommandResult(name, str(exc), ok=False)


async def _help(host: Host, args: str) -> CommandResult:
    lines = [f"- `/{n}` — {text}" for n, text in COMMANDS]
    return CommandResult("help", "**Commands**\n\n" + "\n".join(lines) + "\n\n" + _MENTIONS_HELP)


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
        from loom_jupyter.host.options import apply_options, model_options, options_line
    except ImportError:
        return CommandResult("effort", "Effort is not available in this kernel.", ok=False)
    levels = ("default", "low", "medium", "high", "xhigh", "max")
    if args and args not in levels:
        raise LoomError(f"Usage: /effort {'|'.join(levels)} (got {args!r}).")
    if args:  # the same door as the sidebar's set_options message
        options = await apply_options(host, effort=args)
    else:
        options = model_options(await host.session_async())
    return CommandResult("effort", options_line(options))


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
    from loom_jupyter.session.export import export_session

    session = await host.session_async()
    sid = session.session_id
    if sid is None:
        return CommandResult("export", "Nothing to export yet: this conversation has no turns.")
    info = await host.views.session_info(sid)
    turns = await host.views.turns(sid)
    given = shlex.split(args)[0] if args else ""
    default = f"{host.location.path.stem}-cowork-{sid[:8]}.md"
    path = host.location.directory / (given or default)  # relative: the notebook's folder
    try:
        path = await asyncio.to_thread(_write, path, export_session(info, turns, "md"))
    except OSError as error:
        raise LoomError(
            f"Cannot write the export to {path}: {error.strerror or error}. "
            "Give a path in an existing folder you can write to."
        ) from error
    return CommandResult("export", f"Exported {len(turns)} turns to `{path}`.")


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


def _write(path: Path, text: str) -> Path:
    path = path.expanduser()
    path.write_text(text, encoding="utf-8")
    return path


def _cell(value: object) -> str:
    """A value inside a markdown table's cell."""
    return " ".join(str(value).split()).replace("|", "\\|")


_HANDLERS = {
    "help": _help,
    "cost": _cost,
    "model": _model,
    "effort": _effort,
    "mcp": _mcp,
    "export": _export,
    "delegate": _delegate,
}
