"""The ``%cowork`` subcommands: one small parser and handler each.

A line is a subcommand when its first word names one and the rest parses with
that subcommand's options (``%cowork sessions``, ``%cowork resume 2``);
anything else is a prompt for the model. ``%cowork -- text`` always sends a
prompt. Every subcommand takes ``-h``/``--help``.
"""

from __future__ import annotations

import argparse
import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from IPython.core.magic_arguments import MagicArgumentParser

from loom_jupyter.importguard import loom_imports

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["SUBCOMMANDS", "Handler", "Subcommand"]


@dataclass(frozen=True)
class Handler:
    """The function that runs a subcommand, imported when it first runs (``%load_ext``
    stays light): ``module.name`` in this package, called with the coworker (or the
    shell) and the parsed arguments."""

    module: Literal[
        "reports", "recover", "instructions", "mcp_servers", "options", "rebuild", "trust", "login"
    ]
    name: str

    def resolve(self) -> Callable[[Any, argparse.Namespace], None]:
        """The handler function."""
        with loom_imports():  # the main thread: what the handler's module imports is Loom's
            found = importlib.import_module(f"loom_jupyter.jupyter.magics.{self.module}")
        function: Callable[[Any, argparse.Namespace], None] = getattr(found, self.name)
        return function


@dataclass(frozen=True)
class Subcommand:
    """A subcommand's parser (for ``--help`` and arguments) and its handler."""

    name: str
    parser: MagicArgumentParser
    handler: Handler
    required: bool = False  # needs an argument: a bare word shows usage instead of prompting
    on_shell: bool = False  # the handler gets the shell: it must run even when loom cannot open

    def summary(self) -> str:
        """The first line of the description."""
        return (self.parser.description or "").splitlines()[0]


def _parser(
    name: str, description: str, *arguments: tuple[tuple[str, ...], dict[str, Any]]
) -> MagicArgumentParser:
    parser = MagicArgumentParser(
        prog=f"%cowork {name}", description=description, formatter_class=argparse.HelpFormatter
    )
    for flags, options in arguments:
        parser.add_argument(*flags, **options)
    return parser


def _arg(*flags: str, **options: Any) -> tuple[tuple[str, ...], dict[str, Any]]:
    return flags, options


SUBCOMMANDS: dict[str, Subcommand] = {
    s.name: s
    for s in (
        Subcommand(
            "sessions",
            _parser("sessions", "List this notebook's sessions (1 = most recent)."),
            Handler("reports", "sessions"),
        ),
        Subcommand(
            "resume",
            _parser(
                "resume",
                "Switch to a session, by number in %cowork sessions or by id (prefix).",
                _arg("target", help="session number or id"),
            ),
            Handler("reports", "resume"),
            required=True,
        ),
        Subcommand(
            "new",
            _parser("new", "Start a new session (the next prompt opens it)."),
            Handler("reports", "new"),
        ),
        Subcommand(
            "fork",
            _parser(
                "fork",
                "Copy the current session (up to turn N) into a new one and switch to it.",
                _arg("--at", type=int, default=None, metavar="N", help="last turn to copy"),
            ),
            Handler("reports", "fork"),
        ),
        Subcommand(
            "close",
            _parser("close", "Mark the current session closed (it stays searchable)."),
            Handler("reports", "close"),
        ),
        Subcommand(
            "delete",
            _parser(
                "delete",
                "Delete a session and its turns for good (asks first).",
                _arg("target", help="session number or id"),
                _arg("--yes", action="store_true", help="do not ask for confirmation"),
            ),
            Handler("reports", "delete"),
            required=True,
        ),
        Subcommand(
            "adopt",
            _parser(
                "adopt",
                "Take over the conversation of a notebook that is gone (renamed while its "
                "kernel was off): its sessions become this notebook's.",
                _arg("notebook", help="the gone notebook's file name, like Untitled.ipynb"),
            ),
            Handler("reports", "adopt"),
            required=True,
        ),
        Subcommand(
            "recover",
            _parser(
                "recover",
                "Rebuild this notebook's archive when it is damaged: every session, turn, task "
                "and model call that can still be read goes into a new archive, the damaged "
                "file is kept beside it (<name>.damaged-<UTC time>), and the latest session "
                "goes on. An intact archive is left as it is.",
                _arg(
                    "--move-aside",
                    action="store_true",
                    help="when the file is not SQLite at all (nothing in it can be saved), keep "
                    "it aside and start a new, empty archive",
                ),
            ),
            Handler("recover", "recover"),
            on_shell=True,
        ),
        Subcommand(
            "status",
            _parser("status", "Show the live panel (tokens, cost, state)."),
            Handler("reports", "status"),
        ),
        Subcommand(
            "search",
            _parser(
                "search",
                "Full-text search of the conversation archive: the exact phrase first, then "
                "all words, then some; each match with the turns around it.",
                _arg("query", nargs="+", help="words to look for"),
                _arg("--all", action="store_true", help="search every session of this notebook"),
                _arg(
                    "--all-notebooks",
                    action="store_true",
                    help="search every notebook of the project (the folder holding .git)",
                ),
                _arg("--limit", type=int, default=10, help="number of hits"),
            ),
            Handler("reports", "search"),
            required=True,
        ),
        Subcommand(
            "export",
            _parser(
                "export",
                "Write the session as a Markdown journal, readable by you only (0600): it holds "
                "what the agent read. An existing file is kept unless --force.",
                _arg(
                    "path",
                    nargs="?",
                    default=None,
                    help="file to write (default: beside the notebook)",
                ),
                _arg("--force", action="store_true", help="replace the file if it exists"),
            ),
            Handler("reports", "export"),
        ),
        Subcommand(
            "cost",
            _parser("cost", "Tokens and cost per model call, with a small plot."),
            Handler("reports", "cost"),
        ),
        Subcommand(
            "model",
            _parser(
                "model",
                "Use another model from the next request (sonnet, opus, haiku or an id); with "
                "no name, list the models the Models API offers (cached for a day).",
                _arg("name", nargs="?", default=None, help="model name or alias"),
                _arg("--refresh", action="store_true", help="ask the Models API again now"),
            ),
            Handler("reports", "model"),
        ),
        Subcommand(
            "instructions",
            _parser(
                "instructions",
                "Show the project instructions in the system prompt: AGENTS.md, CLAUDE.md and "
                ".loom/instructions.md from the project root (the folder holding .git) down to "
                "the notebook's folder, outermost first, with their size and whether they were "
                "cut (instructions_max_chars).",
            ),
            Handler("instructions", "instructions"),
        ),
        Subcommand(
            "mcp",
            _parser(
                "mcp",
                "List the MCP servers of loom.yaml (mcp_servers): transport, state, approval "
                "and tools (mcp__NAME__TOOL). Starts the servers not started yet.",
                _arg("--restart", metavar="NAME", default=None, help="start this server again"),
            ),
            Handler("mcp_servers", "mcp"),
        ),
        Subcommand(
            "thinking",
            _parser(
                "thinking",
                "Adaptive thinking on or off, from the next turn (loom.yaml: thinking). Sent "
                "only to models that take it; the thinking shows collapsed above the answer. "
                "Without an argument: show the current setting.",
                _arg("mode", nargs="?", choices=("on", "off"), default=None),
            ),
            Handler("options", "thinking"),
        ),
        Subcommand(
            "effort",
            _parser(
                "effort",
                "How much effort the model puts in, from the next turn (loom.yaml: effort): "
                "low, medium, high, xhigh, max, or default (none sent). Sent only to models "
                "that take that level. Without an argument: show the current setting.",
                _arg(
                    "level",
                    nargs="?",
                    choices=("low", "medium", "high", "xhigh", "max", "default"),
                    default=None,
                ),
            ),
            Handler("options", "effort"),
        ),
        Subcommand(
            "approval",
            _parser(
                "approval",
                "How write tools are approved: ask, auto or read-only. What you type here "
                "beats every setting; with no argument, the mode in force, where it came "
                'from (default, user, env, project or magic) and what "Always" answers '
                "allow. Writes to loom.yaml, instruction files, .loom/, .git/, .ipynb files "
                "and your Loom config always ask.",
                _arg("mode", nargs="?", default=None, choices=("ask", "auto", "read-only")),
                _arg(
                    "--forget",
                    action="store_true",
                    help='forget every "Always" answer of this session (those calls ask again)',
                ),
            ),
            Handler("reports", "approval"),
        ),
        Subcommand(
            "trust",
            _parser(
                "trust",
                "What this notebook's folder asks for — each MCP server's command line or "
                "URL and the approval it wants, approval and web settings, instruction files "
                "— and whether you trust it; then asks. Until trusted, none of it is used "
                "(its approval and web settings may only make yours stricter).",
                _arg("--yes", action="store_true", help="trust the folder as it is now"),
                _arg("--revoke", action="store_true", help="forget the decision"),
            ),
            Handler("trust", "trust"),
        ),
        Subcommand(
            "login",
            _parser(
                "login",
                "Save your Anthropic API key outside the notebook: asks for it without showing "
                "it and keeps it in the system keyring, else in ~/.config/loom/anthropic-api-key "
                "(readable by you only). ANTHROPIC_API_KEY in the environment wins over it.",
                _arg("--logout", action="store_true", help="remove the saved key instead"),
            ),
            Handler("login", "login"),
            on_shell=True,
        ),
        Subcommand(
            "logout",
            _parser("logout", "Remove the API key %cowork login saved."),
            Handler("login", "logout"),
            on_shell=True,
        ),
        Subcommand(
            "provenance",
            _parser(
                "provenance",
                "Show the execution (cell or agent code) that last set NAME — its code, time "
                "and duration — and the chain of executions it depends on; with no NAME, a "
                "table of every variable: what last set it and what rebuilding it would take.",
                _arg("name", nargs="?", default=None, help="variable name"),
            ),
            Handler("rebuild", "provenance"),
        ),
        Subcommand(
            "rebuild",
            _parser(
                "rebuild",
                "Make variables again (e.g. after a restart) by re-running the smallest ordered "
                "slice of archived executions that sets them; the slice is shown first, and "
                "steps that write files, use the network or run a subprocess need --yes.",
                _arg("names", nargs="+", metavar="NAME", help="variable names"),
                _arg("--yes", action="store_true", help="also run steps with side effects"),
            ),
            Handler("rebuild", "rebuild"),
            required=True,
        ),
    )
}
