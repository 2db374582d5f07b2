"""The sidebar's slash commands, generated from :data:`~.registry.COMMANDS`.

:data:`SLASH_COMMANDS` is the sidebar's rows of the table (sent in ``welcome``: the
page's completion shows what this kernel offers; ``/help`` lists them). ``/new``,
``/fork``, ``/sessions`` and ``/search`` are answered by the front itself (``front``);
the rest come as a ``command`` message, whose words are tokenized into the command's
argument dataclass, run by :func:`~.registry.execute` and answered by a
:class:`~loom_jupyter.host.wire.protocol.CommandResult` carrying the report as markdown
(:func:`~.report.to_markdown`), rendered sanitized as a small card.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loom_jupyter.errors import LoomError
from loom_jupyter.host.commands.context import HostContext
from loom_jupyter.host.commands.registry import command, commands_for, execute
from loom_jupyter.host.commands.report import to_markdown
from loom_jupyter.host.commands.spec import parse_words
from loom_jupyter.host.wire.protocol import CommandResult, SlashCommand

if TYPE_CHECKING:
    from loom_jupyter.host.host import Host

__all__ = ["SLASH_COMMANDS", "help_text", "run_command"]

SLASH_COMMANDS: tuple[SlashCommand, ...] = tuple(
    SlashCommand(spec.name, spec.arg_line("sidebar"), spec.summary, "sidebar" in spec.by_front)
    for spec in commands_for("sidebar")
)
"""Every slash command, in the order the front lists them."""


def help_text() -> str:
    """The `/help` answer: one line per command of :data:`SLASH_COMMANDS`, then mentions."""
    from loom_jupyter.host.commands.usage import MENTIONS_HELP

    lines = [f"- `{c.usage}` — {c.description}" for c in SLASH_COMMANDS]
    return "**Commands**\n\n" + "\n".join(lines) + "\n\n" + MENTIONS_HELP


async def run_command(host: Host, name: str, args: str) -> CommandResult:
    """Run ``/name args``; a refusal or a failure is a result that says why (``ok`` False)."""
    spec = command(name)
    if spec is None or "sidebar" not in spec.fronts:
        known = ", ".join(f"/{c.name}" for c in SLASH_COMMANDS)
        return CommandResult(name, f"Unknown command `/{name}`. Commands: {known}.", ok=False)
    if "sidebar" in spec.by_front:  # only an incomplete one reaches the kernel (/search)
        text = f"Usage: `{spec.usage('sidebar')}` — {spec.summary} (the sidebar answers it)."
        return CommandResult(name, text, ok=False)
    try:
        parsed = parse_words(spec, "sidebar", args.strip())
        report = await execute(spec, HostContext(host, "sidebar"), parsed)
    except LoomError as exc:
        return CommandResult(name, str(exc), ok=False)
    return CommandResult(name, to_markdown(report), ok=report.ok)
