"""Every command, declared once: :data:`COMMANDS`.

Each :class:`~loom_jupyter.host.commands.spec.Spec` names a command, says what it does,
which fronts offer it (``%cowork NAME`` in a cell, ``/NAME`` in the sidebar,
``loom-jupyter NAME`` in a terminal), when it may run, and which handler answers it. The
fronts are generated from this table: the magic's subcommands and their ``--help``, the
sidebar's slash commands (and their completion, sent in ``welcome``), the terminal's
argparse subcommands. :func:`execute` is the one way a command runs: availability first
(:func:`availability`), then the handler on the engine loop, which returns a
:class:`~loom_jupyter.host.commands.report.Report`.

Importing this module imports no handler (``%load_ext`` stays light).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from loom_jupyter.errors import LoomError
from loom_jupyter.host.commands.spec import FRONTS, Front, Spec

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from loom_jupyter.host.commands.context import Context
    from loom_jupyter.host.commands.report import Report

__all__ = ["COMMANDS", "availability", "command", "commands_for", "execute"]


# -- the table --------------------------------------------------------------------------

_KERNEL: frozenset[Front] = frozenset({"magic", "sidebar"})
_MAGIC: frozenset[Front] = frozenset({"magic"})
_SIDEBAR: frozenset[Front] = frozenset({"sidebar"})
_CLI: frozenset[Front] = frozenset({"cli"})
_ALL: frozenset[Front] = frozenset(FRONTS)


COMMANDS: tuple[Spec, ...] = (
    Spec(
        "new",
        "start a new conversation",
        "Start a new session (the next prompt opens it).",
        "NoArgs",
        "sessions:new",
        _KERNEL,
        by_front=_SIDEBAR,
        busy="switch",
    ),
    Spec(
        "fork",
        "copy this conversation and continue in the copy",
        "Copy the current session (up to turn N) into a new one and switch to it.",
        "ForkArgs",
        "sessions:fork",
        _KERNEL,
        by_front=_SIDEBAR,
        busy="switch",
    ),
    Spec(
        "sessions",
        "list this notebook's conversations",
        "List this notebook's sessions (1 = most recent).",
        "SessionsArgs",
        "sessions:sessions",
        _ALL,
        by_front=_SIDEBAR,
        needs_session=False,
        cli_about="List the notebook's sessions, most recently active first.",
        examples="  loom-jupyter sessions analysis.ipynb\n"
        "  loom-jupyter sessions analysis.ipynb --limit 5",
    ),
    Spec(
        "resume",
        "switch to another conversation",
        "Switch to a session, by number in %cowork sessions or by id (prefix).",
        "TargetArgs",
        "sessions:resume",
        _MAGIC,
        busy="switch",
    ),
    Spec(
        "close",
        "close this conversation",
        "Mark the current session closed (it stays searchable).",
        "NoArgs",
        "sessions:close",
        _MAGIC,
        busy="switch",
    ),
    Spec(
        "delete",
        "delete a conversation for good",
        "Delete a session and its turns for good (asks first).",
        "DeleteArgs",
        "sessions:delete",
        _MAGIC,
        busy="switch",
    ),
    Spec(
        "adopt",
        "take over a gone notebook's conversation",
        "Take over the conversation of a notebook that is gone (renamed while its kernel was "
        "off): its sessions become this notebook's.",
        "AdoptArgs",
        "",
        _MAGIC,
        by_front=_MAGIC,
    ),
    Spec(
        "recover",
        "rebuild a damaged archive",
        "Rebuild this notebook's archive when it is damaged: every session, turn, task and "
        "model call that can still be read goes into a new archive, the damaged file is kept "
        "beside it (<name>.damaged-<UTC time>), and the latest session goes on. An intact "
        "archive is left as it is.",
        "RecoverArgs",
        "archive:recover",
        frozenset({"magic", "cli"}),
        by_front=_MAGIC,
        needs_session=False,
        runs_without_archive=True,
        cli_about="Rebuild a damaged archive: every session, turn, task and model call that "
        "can still be read is copied into a new archive in its place; the damaged file is kept "
        "beside it as <name>.damaged-<UTC time>. An intact archive is left as it is. Stop the "
        "notebook's kernel first (or run %%cowork recover in it).",
        examples="  loom-jupyter recover analysis.ipynb\n"
        "  loom-jupyter recover .loom/analysis.ipynb.sqlite\n"
        "  loom-jupyter recover analysis.ipynb --move-aside   # the file is not SQLite at all",
    ),
    Spec(
        "status",
        "the live panel",
        "Show the live panel (tokens, cost, state).",
        "NoArgs",
        "",
        _MAGIC,
        by_front=_MAGIC,
    ),
    Spec(
        "search",
        "search every conversation of this notebook",
        "Full-text search of the conversation archive: the exact phrase first, then all "
        "words, then some; each match with the turns around it.",
        "SearchArgs",
        "archive:search",
        _ALL,
        by_front=_SIDEBAR,
        needs_session=False,
        cli_about="Full-text search: the exact phrase first, then all words, then some; each "
        "match with the turns around it. NOTEBOOK may be a folder: every notebook archive "
        "under it is searched.",
        examples="  loom-jupyter search analysis.ipynb 'merge the sales tables'\n"
        "  loom-jupyter search analysis.ipynb outlier --all-sessions --limit 20\n"
        "  loom-jupyter search . 'churn threshold'      # every notebook under this folder",
    ),
    Spec(
        "show",
        "print a session's turns",
        "Print a session's turns verbatim.",
        "ShowArgs",
        "archive:show",
        _CLI,
        needs_session=False,
        examples="  loom-jupyter show analysis.ipynb            # the latest session\n"
        "  loom-jupyter show analysis.ipynb 2          # the second in `sessions`\n"
        "  loom-jupyter show analysis.ipynb 3f9a --range 10:20",
    ),
    Spec(
        "cost",
        "tokens and cost of this conversation",
        "Tokens and cost per model call, with a small plot.",
        "NoArgs",
        "usage:cost",
        _KERNEL,
    ),
    Spec(
        "model",
        "show the model, or use another",
        "Use another model from the next request (sonnet, opus, haiku or an id); an id the "
        "Models API does not list is refused, naming those it lists (when the API cannot be "
        "asked, it is taken with a warning). With no name, list the models the Models API "
        "offers (cached for a day).",
        "ModelArgs",
        "usage:model",
        _KERNEL,
    ),
    Spec(
        "effort",
        "show or set the thinking effort (default, low, medium, high, xhigh, max)",
        "How much effort the model puts in, from the next turn (loom.yaml: effort): low, "
        "medium, high, xhigh, max, or default (none sent). Sent only to models that take that "
        "level. Without an argument: show the current setting.",
        "EffortArgs",
        "usage:effort",
        _KERNEL,
    ),
    Spec(
        "thinking",
        "adaptive thinking on or off",
        "Adaptive thinking on or off, from the next turn (loom.yaml: thinking). Sent only to "
        "models that take it; the thinking shows collapsed above the answer. Without an "
        "argument: show the current setting.",
        "ThinkingArgs",
        "usage:thinking",
        _MAGIC,
    ),
    Spec(
        "approval",
        "how write tools are approved",
        "How write tools are approved: ask, auto or read-only. What you type here beats every "
        "setting; with no argument, the mode in force, where it came from (default, user, env, "
        'project or magic) and what "Always" answers allow. Writes to loom.yaml, instruction '
        "files, .loom/, .git/, .ipynb files and your Loom config always ask.",
        "ApprovalArgs",
        "usage:approval",
        _MAGIC,
    ),
    Spec(
        "delegate",
        "hand a big goal to parallel sub-agents",
        "Plan GOAL into subtasks and run them in parallel sub-agents; the digest is posted to "
        "the conversation when they end.",
        "DelegateArgs",
        "usage:delegate",
        _SIDEBAR,
    ),
    Spec(
        "rebuild",
        "make variables again by re-running the recorded cells they need",
        "Make variables again (e.g. after a restart) by re-running the smallest ordered slice "
        "of archived executions that sets them; the slice is shown first, and steps that "
        "write files, use the network or run a subprocess need --yes.",
        "RebuildArgs",
        "variables:rebuild",
        _KERNEL,
        busy="refused",
    ),
    Spec(
        "provenance",
        "where a variable came from",
        "Show the execution (cell or agent code) that last set NAME — its code, time and "
        "duration — and the chain of executions it depends on; with no NAME, a table of every "
        "variable: what last set it and what rebuilding it would take.",
        "NameArgs",
        "variables:provenance",
        frozenset({"magic", "cli"}),
        needs_session=False,
        cli_about="Where a variable came from, by the executions the notebook's kernels "
        "archived (the person's cells and the agent's code): the one that last set NAME, its "
        "code and time, and the executions it depends on. Without NAME: every name the archive "
        "saw set, with what last set it.",
        examples="  loom-jupyter provenance analysis.ipynb\n"
        "  loom-jupyter provenance analysis.ipynb monthly_revenue",
    ),
    Spec(
        "export",
        "write this conversation as Markdown (0600; --force replaces)",
        "Write the session as a Markdown journal, readable by you only (0600): it holds what "
        "the agent read. An existing file is kept unless --force.",
        "ExportArgs",
        "archive:export",
        _ALL,
        needs_session=False,
        cli_about="Write a whole session as Markdown or JSON.",
        examples="  loom-jupyter export analysis.ipynb --format md -o session.md\n"
        "  loom-jupyter export analysis.ipynb 2 --format json | jq '.turns | length'",
    ),
    Spec(
        "instructions",
        "the project instructions in the system prompt",
        "Show the project instructions in the system prompt: AGENTS.md, CLAUDE.md and "
        ".loom/instructions.md from the project root (the folder holding .git) down to the "
        "notebook's folder, outermost first, with their size and whether they were cut "
        "(instructions_max_chars).",
        "NoArgs",
        "folder:instructions",
        _MAGIC,
    ),
    Spec(
        "mcp",
        "MCP servers, their state and tools",
        "List the MCP servers of loom.yaml (mcp_servers): transport, state, approval and tools "
        "(mcp__NAME__TOOL). Starts the servers not started yet.",
        "McpArgs",
        "folder:mcp",
        _KERNEL,
    ),
    Spec(
        "trust",
        "what this folder asks for, and trust it (or not)",
        "What this notebook's folder asks for — each MCP server's command line or URL and the "
        "approval it wants, approval and web settings, instruction files — and whether you "
        "trust it; then asks. Until trusted, none of it is used (its approval and web settings "
        "may only make yours stricter).",
        "TrustArgs",
        "folder:trust",
        _ALL,
        by_front=frozenset({"magic", "cli"}),
        needs_session=False,
        runs_without_archive=True,
        cli_about="Show what a notebook's folder asks Loom for — each MCP server's command line "
        "or URL and the approval it wants, approval and web settings, instruction files — and "
        "whether you trust it; in a terminal, then ask. Until trusted none of it is used (its "
        "approval and web settings may only make yours stricter). Kernels follow the decision "
        "from their next turn.",
        examples="  loom-jupyter trust analysis.ipynb\n"
        "  loom-jupyter trust ~/src/cloned-repo --yes\n"
        "  loom-jupyter trust ~/src/cloned-repo --revoke",
    ),
    Spec(
        "login",
        "save your API key",
        "Save your Anthropic API key outside the notebook: asks for it without showing it and "
        "keeps it in the system keyring, else in ~/.config/loom/anthropic-api-key (readable by "
        "you only). ANTHROPIC_API_KEY in the environment wins over it.",
        "LoginArgs",
        "",
        _MAGIC,
        by_front=_MAGIC,
        needs_session=False,
        runs_without_archive=True,
    ),
    Spec(
        "logout",
        "remove the saved API key",
        "Remove the API key %cowork login saved.",
        "NoArgs",
        "",
        _MAGIC,
        by_front=_MAGIC,
        needs_session=False,
        runs_without_archive=True,
    ),
    Spec(
        "help",
        "these commands, and @-mentions",
        "The commands, and @-mentions.",
        "NoArgs",
        "usage:help",
        _SIDEBAR,
        needs_session=False,
    ),
)
"""Every command, in the order the fronts list them."""

_BY_NAME = {spec.name: spec for spec in COMMANDS}


def command(name: str) -> Spec | None:
    """The command called ``name``, if any."""
    return _BY_NAME.get(name)


def commands_for(front: Front) -> tuple[Spec, ...]:
    """The commands ``front`` offers, in order."""
    return tuple(spec for spec in COMMANDS if front in spec.fronts)


# -- running ----------------------------------------------------------------------------


async def availability(spec: Spec, context: Context) -> None:
    """Raise a :class:`~loom_jupyter.errors.LoomError` saying why ``spec`` cannot run now.

    The one busy rule: what the session says runs (:meth:`CoworkSession.running_now`: its
    turn, a turn the floor began, a running delegation). A switch is left to the session,
    which refuses it with the same reading (:class:`~loom_jupyter.errors.SessionBusyError`).
    """
    from loom_jupyter.host.commands.context import HostContext

    if not isinstance(context, HostContext):
        if spec.needs_session:
            raise LoomError(f"{context.spelled(spec.name)} needs a kernel: run it in the notebook.")
        return
    if spec.busy != "refused":
        return
    session = await context.host.session_async()
    running = session.running_now()
    if running is not None:
        what = running[0].lower() + running[1:]
        raise LoomError(
            f"Not now: {what} is running. Wait for it to end (or stop it), then send the "
            f"{context.spelled(spec.name)} again."
        )


def handler(spec: Spec) -> Callable[[Context, Any], Awaitable[Report]]:
    """The function that answers ``spec`` (imported when it first runs)."""
    if not spec.handler:
        raise LoomError(f"{spec.name} is answered by the front that offers it.")
    module, _, name = spec.handler.partition(":")
    found = importlib.import_module(f"loom_jupyter.host.commands.{module}")
    function: Callable[[Context, Any], Awaitable[Report]] = getattr(found, name)
    return function


async def execute(spec: Spec, context: Context, args: Any) -> Report:
    """Run a command: its availability, then its handler (engine loop). A refusal or a
    failure raises :class:`~loom_jupyter.errors.LoomError`; each front says it its way."""
    await availability(spec, context)
    return await handler(spec)(context, args)
