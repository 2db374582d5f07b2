"""The sidebar's slash commands, generated from :data:`~.registry.COMMANDS`.

:data:`SLASH_COMMANDS` is the sidebar's rows of the table (sent in ``welcome``: the
page's completion shows what this kernel offers; ``/help`` lists them). ``/new``,
``/fork``, ``/sessions`` and ``/search`` are answered by the front itself (``front``);
the rest come as a ``command`` message, whose words are read into the command's
argument dataclass (:func:`~.checking.read`: a value it does not take is answered with
those it takes), run by :func:`~.registry.execute` and answered by a
:class:`~loom_jupyter.host.wire.protocol.CommandResult` carrying the report as markdown
(:func:`~.report.to_markdown`), rendered sanitized as a small card. The page sends a
``/word`` it does not know as a message; :func:`mistyped` answers one that misspells a
command ("did you mean …") so it never reaches the model.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from typing_extensions import assert_never

from loom_jupyter.errors import LoomError
from loom_jupyter.host.commands.checking import (
    BadValue,
    Fits,
    Misfit,
    misspelling,
    misspelling_text,
    read,
)
from loom_jupyter.host.commands.context import HostContext
from loom_jupyter.host.commands.registry import command, commands_for, execute
from loom_jupyter.host.commands.report import to_markdown
from loom_jupyter.host.wire.protocol import CommandResult, SlashCommand

if TYPE_CHECKING:
    from loom_jupyter.host.host import Host

__all__ = ["SLASH_COMMANDS", "help_text", "mistyped", "run_command"]

_SLASH = re.compile(r"/(\S+)(?:\s+(.*))?", re.DOTALL)

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


def mistyped(text: str) -> str | None:
    """The answer to a message that misspells a slash command and fits its arguments
    (``/sesions``, ``/serach outliers``): "did you mean …"; ``None`` for any other message.
    The page sends what it does not know as a message: this keeps it from the model."""
    found = _SLASH.fullmatch(text.strip())
    if found is None:
        return None
    word, rest = found.group(1), found.group(2) or ""
    meant = misspelling("sidebar", word, rest)
    if meant is None:
        return None
    return misspelling_text("sidebar", text.strip()[1:], meant.name, rest)


async def run_command(host: Host, name: str, args: str) -> CommandResult:
    """Run ``/name args``; a refusal or a failure is a result that says why (``ok`` False)."""
    spec = command(name)
    if spec is None or "sidebar" not in spec.fronts:
        return CommandResult(name, _unknown(name, args), ok=False)
    if "sidebar" in spec.by_front:  # only an incomplete one reaches the kernel (/search)
        text = f"Usage: `{spec.usage('sidebar')}` — {spec.summary} (the sidebar answers it)."
        return CommandResult(name, text, ok=False)
    reading = read(spec, "sidebar", args.strip())
    match reading:
        case Fits():
            pass
        case BadValue() | Misfit():
            return CommandResult(name, reading.problem, ok=False)
        case _:
            assert_never(reading)
    try:
        report = await execute(spec, HostContext(host, "sidebar"), reading.args)
    except LoomError as exc:
        return CommandResult(name, str(exc), ok=False)
    return CommandResult(name, to_markdown(report), ok=report.ok)


def _unknown(name: str, args: str) -> str:
    meant = misspelling("sidebar", name, args)
    if meant is not None:
        return misspelling_text("sidebar", f"{name} {args}".strip(), meant.name, args)
    known = ", ".join(f"/{c.name}" for c in SLASH_COMMANDS)
    return f"Unknown command `/{name}`. Commands: {known}."
