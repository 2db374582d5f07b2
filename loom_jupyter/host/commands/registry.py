"""Every command, declared once: :data:`COMMANDS`.

Each :class:`~loom_jupyter.host.commands.spec.Spec` names a command, says what it does,
which fronts offer it (``%cowork NAME`` in a cell, ``/NAME`` in the sidebar,
``loom-jupyter NAME`` in a terminal), when it may run, its argument dataclass and the
handler that answers it — both functions written out below, each importing its module
when first called, so mypy checks that a command's arguments and handler agree and the
layering test sees the imports. The
fronts are generated from this table: the magic's subcommands and their ``--help``, the
sidebar's slash commands (and their completion, sent in ``welcome``), the terminal's
argparse subcommands. :func:`execute` is the one way a command runs: availability first
(:func:`availability`), then the handler on the engine loop, which returns a
:class:`~loom_jupyter.host.commands.report.Report`.

Importing this module imports no handler and no argument dataclass (``%load_ext`` stays
light).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from loom_jupyter.errors import LoomError
from loom_jupyter.host.commands.spec import FRONTS, Front, Spec

if TYPE_CHECKING:
    from loom_jupyter.host.commands.arguments import (
        AdoptArgs,
        ApprovalArgs,
        DelegateArgs,
        DeleteArgs,
        EffortArgs,
        ExportArgs,
        ForkArgs,
        LoginArgs,
        McpArgs,
        ModelArgs,
        NameArgs,
        NoArgs,
        RebuildArgs,
        RecoverArgs,
        SearchArgs,
        SessionsArgs,
        ShowArgs,
        TargetArgs,
        ThinkingArgs,
        TrustArgs,
    )
    from loom_jupyter.host.commands.context import Context
    from loom_jupyter.host.commands.report import Report
    from loom_jupyter.host.commands.spec import Handler

__all__ = ["COMMANDS", "availability", "command", "commands_for", "execute", "handler"]

A = TypeVar("A")


# -- the table --------------------------------------------------------------------------

_KERNEL: frozenset[Front] = frozenset({"magic", "sidebar"})
_MAGIC: frozenset[Front] = frozenset({"magic"})
_SIDEBAR: frozenset[Front] = frozenset({"sidebar"})
_CLI: frozenset[Front] = frozenset({"cli"})
_ALL: frozenset[Front] = frozenset(FRONTS)


# -- what the table holds: each function imports its module when first called -------------
# The argument dataclasses (:mod:`.arguments`: parsing, ``--help``, usage lines).


def _adopt_args() -> type[AdoptArgs]:
    from loom_jupyter.host.commands.arguments import AdoptArgs

    return AdoptArgs


def _approval_args() -> type[ApprovalArgs]:
    from loom_jupyter.host.commands.arguments import ApprovalArgs

    return ApprovalArgs


def _delegate_args() -> type[DelegateArgs]:
    from loom_jupyter.host.commands.arguments import DelegateArgs

    return DelegateArgs


def _delete_args() -> type[DeleteArgs]:
    from loom_jupyter.host.commands.arguments import DeleteArgs

    return DeleteArgs


def _effort_args() -> type[EffortArgs]:
    from loom_jupyter.host.commands.arguments import EffortArgs

    return EffortArgs


def _export_args() -> type[ExportArgs]:
    from loom_jupyter.host.commands.arguments import ExportArgs

    return ExportArgs


def _fork_args() -> type[ForkArgs]:
    from loom_jupyter.host.commands.arguments import ForkArgs

    return ForkArgs


def _login_args() -> type[LoginArgs]:
    from loom_jupyter.host.commands.arguments import LoginArgs

    return LoginArgs


def _mcp_args() -> type[McpArgs]:
    from loom_jupyter.host.commands.arguments import McpArgs

    return McpArgs


def _model_args() -> type[ModelArgs]:
    from loom_jupyter.host.commands.arguments import ModelArgs

    return ModelArgs


def _name_args() -> type[NameArgs]:
    from loom_jupyter.host.commands.arguments import NameArgs

    return NameArgs


def _no_args() -> type[NoArgs]:
    from loom_jupyter.host.commands.arguments import NoArgs

    return NoArgs


def _rebuild_args() -> type[RebuildArgs]:
    from loom_jupyter.host.commands.arguments import RebuildArgs

    return RebuildArgs


def _recover_args() -> type[RecoverArgs]:
    from loom_jupyter.host.commands.arguments import RecoverArgs

    return RecoverArgs


def _search_args() -> type[SearchArgs]:
    from loom_jupyter.host.commands.arguments import SearchArgs

    return SearchArgs


def _sessions_args() -> type[SessionsArgs]:
    from loom_jupyter.host.commands.arguments import SessionsArgs

    return SessionsArgs


def _show_args() -> type[ShowArgs]:
    from loom_jupyter.host.commands.arguments import ShowArgs

    return ShowArgs


def _target_args() -> type[TargetArgs]:
    from loom_jupyter.host.commands.arguments import TargetArgs

    return TargetArgs


def _thinking_args() -> type[ThinkingArgs]:
    from loom_jupyter.host.commands.arguments import ThinkingArgs

    return ThinkingArgs


def _trust_args() -> type[TrustArgs]:
    from loom_jupyter.host.commands.arguments import TrustArgs

    return TrustArgs


# The handlers, by subject (``sessions``, ``archive``, ``usage``, ``variables``, ``folder``).


async def _new(context: Context, args: NoArgs) -> Report:
    from loom_jupyter.host.commands import sessions

    return await sessions.new(context, args)


async def _fork(context: Context, args: ForkArgs) -> Report:
    from loom_jupyter.host.commands import sessions

    return await sessions.fork(context, args)


async def _sessions(context: Context, args: SessionsArgs) -> Report:
    from loom_jupyter.host.commands import sessions

    return await sessions.sessions(context, args)


async def _resume(context: Context, args: TargetArgs) -> Report:
    from loom_jupyter.host.commands import sessions

    return await sessions.resume(context, args)


async def _close(context: Context, args: NoArgs) -> Report:
    from loom_jupyter.host.commands import sessions

    return await sessions.close(context, args)


async def _delete(context: Context, args: DeleteArgs) -> Report:
    from loom_jupyter.host.commands import sessions

    return await sessions.delete(context, args)


async def _recover(context: Context, args: RecoverArgs) -> Report:
    from loom_jupyter.host.commands import archive

    return await archive.recover(context, args)


async def _search(context: Context, args: SearchArgs) -> Report:
    from loom_jupyter.host.commands import archive

    return await archive.search(context, args)


async def _show(context: Context, args: ShowArgs) -> Report:
    from loom_jupyter.host.commands import archive

    return await archive.show(context, args)


async def _cost(context: Context, args: NoArgs) -> Report:
    from loom_jupyter.host.commands import usage

    return await usage.cost(context, args)


async def _model(context: Context, args: ModelArgs) -> Report:
    from loom_jupyter.host.commands import usage

    return await usage.model(context, args)


async def _effort(context: Context, args: EffortArgs) -> Report:
    from loom_jupyter.host.commands import usage

    return await usage.effort(context, args)


async def _thinking(context: Context, args: ThinkingArgs) -> Report:
    from loom_jupyter.host.commands import usage

    return await usage.thinking(context, args)


async def _approval(context: Context, args: ApprovalArgs) -> Report:
    from loom_jupyter.host.commands import usage

    return await usage.approval(context, args)


async def _delegate(context: Context, args: DelegateArgs) -> Report:
    from loom_jupyter.host.commands import usage

    return await usage.delegate(context, args)


async def _rebuild(context: Context, args: RebuildArgs) -> Report:
    from loom_jupyter.host.commands import variables

    return await variables.rebuild(context, args)


async def _provenance(context: Context, args: NameArgs) -> Report:
    from loom_jupyter.host.commands import variables

    return await variables.provenance(context, args)


async def _export(context: Context, args: ExportArgs) -> Report:
    from loom_jupyter.host.commands import archive

    return await archive.export(context, args)


async def _instructions(context: Context, args: NoArgs) -> Report:
    from loom_jupyter.host.commands import folder

    return await folder.instructions(context, args)


async def _mcp(context: Context, args: McpArgs) -> Report:
    from loom_jupyter.host.commands import folder

    return await folder.mcp(context, args)


async def _skills(context: Context, args: NoArgs) -> Report:
    from loom_jupyter.host.commands import folder

    return await folder.skills(context, args)


async def _trust(context: Context, args: TrustArgs) -> Report:
    from loom_jupyter.host.commands import folder

    return await folder.trust(context, args)


async def _help(context: Context, args: NoArgs) -> Report:
    """``/help`` reads this table, so it is answered here."""
    from loom_jupyter.host.commands.usage import commands_help

    return commands_help(context.front, commands_for(context.front))


# Built without a declared type, so mypy infers each command's argument class and checks
# that its handler takes it (under ``tuple[Spec[Any], ...]`` it would check nothing).
_TABLE = (
    Spec(
        "new",
        "start a new conversation",
        "Start a new session (the next prompt opens it).",
        _no_args,
        _new,
        _KERNEL,
        by_front=_SIDEBAR,
        busy="switch",
    ),
    Spec(
        "fork",
        "copy this conversation and continue in the copy",
        "Copy the current session (up to turn N) into a new one and switch to it.",
        _fork_args,
        _fork,
        _KERNEL,
        by_front=_SIDEBAR,
        busy="switch",
    ),
    Spec(
        "sessions",
        "list this notebook's conversations",
        "List this notebook's sessions (1 = most recent).",
        _sessions_args,
        _sessions,
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
        _target_args,
        _resume,
        _MAGIC,
        busy="switch",
    ),
    Spec(
        "close",
        "close this conversation",
        "Mark the current session closed (it stays searchable).",
        _no_args,
        _close,
        _MAGIC,
        busy="switch",
    ),
    Spec(
        "delete",
        "delete a conversation for good",
        "Delete a session and its turns for good (asks first).",
        _delete_args,
        _delete,
        _MAGIC,
        busy="switch",
    ),
    Spec(
        "adopt",
        "take over a gone notebook's conversation",
        "Take over the conversation of a notebook that is gone (renamed while its kernel was "
        "off): its sessions become this notebook's.",
        _adopt_args,
        None,
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
        _recover_args,
        _recover,
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
        _no_args,
        None,
        _MAGIC,
        by_front=_MAGIC,
    ),
    Spec(
        "search",
        "search every conversation of this notebook",
        "Full-text search of the conversation archive: the exact phrase first, then all "
        "words, then some; each match with the turns around it.",
        _search_args,
        _search,
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
        _show_args,
        _show,
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
        _no_args,
        _cost,
        _KERNEL,
    ),
    Spec(
        "model",
        "show the model, or use another",
        "Use another model from the next request (sonnet, opus, haiku or an id); an id the "
        "Models API does not list is refused, naming those it lists (when the API cannot be "
        "asked, it is taken with a warning). With no name, list the models the Models API "
        "offers (cached for a day).",
        _model_args,
        _model,
        _KERNEL,
    ),
    Spec(
        "effort",
        "show or set the thinking effort (default, low, medium, high, xhigh, max)",
        "How much effort the model puts in, from the next turn (loom.yaml: effort): low, "
        "medium, high, xhigh, max, or default (none sent). Sent only to models that take that "
        "level. Without an argument: show the current setting.",
        _effort_args,
        _effort,
        _KERNEL,
    ),
    Spec(
        "thinking",
        "adaptive thinking on or off",
        "Adaptive thinking on or off, from the next turn (loom.yaml: thinking). Sent only to "
        "models that take it; the thinking shows collapsed above the answer. Without an "
        "argument: show the current setting.",
        _thinking_args,
        _thinking,
        _MAGIC,
    ),
    Spec(
        "approval",
        "how write tools are approved",
        "How write tools are approved: ask, auto or read-only. What you type here beats every "
        "setting; with no argument, the mode in force, where it came from (default, user, env, "
        'project or magic) and what "Always" answers allow. Writes to loom.yaml, instruction '
        "files, .loom/, .git/, .ipynb files and your Loom config always ask.",
        _approval_args,
        _approval,
        _MAGIC,
    ),
    Spec(
        "delegate",
        "hand a big goal to parallel sub-agents",
        "Plan GOAL into subtasks and run them in parallel sub-agents; the digest is posted to "
        "the conversation when they end.",
        _delegate_args,
        _delegate,
        _SIDEBAR,
    ),
    Spec(
        "rebuild",
        "make variables again by re-running the recorded cells they need",
        "Make variables again (e.g. after a restart) by re-running the smallest ordered slice "
        "of archived executions that sets them; the slice is shown first, and steps that "
        "write files, use the network or run a subprocess need --yes.",
        _rebuild_args,
        _rebuild,
        _KERNEL,
        busy="refused",
    ),
    Spec(
        "provenance",
        "where a variable came from",
        "Show the execution (cell or agent code) that last set NAME — its code, time and "
        "duration — and the chain of executions it depends on; with no NAME, a table of every "
        "variable: what last set it and what rebuilding it would take.",
        _name_args,
        _provenance,
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
        _export_args,
        _export,
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
        _no_args,
        _instructions,
        _MAGIC,
    ),
    Spec(
        "mcp",
        "MCP servers, their state and tools",
        "List the MCP servers of loom.yaml (mcp_servers): transport, state, approval and tools "
        "(mcp__NAME__TOOL). Starts the servers not started yet.",
        _mcp_args,
        _mcp,
        _KERNEL,
    ),
    Spec(
        "skills",
        "the skills found, and whether each can be used",
        "List every Agent Skill found: the person's (~/.config/loom/skills, ~/.claude/skills, "
        "~/.agents/skills) and the project's (.claude/skills and .agents/skills from the "
        "notebook's folder up to the project root) — name, description, source, folder and "
        "state: usable, needs trust (a project skill of a folder not trusted), invalid (and "
        "why) or shadowed (a skill of the same name wins). The model sees the usable ones by "
        "name and description and loads one with load_skill.",
        _no_args,
        _skills,
        _KERNEL,
        needs_session=False,
    ),
    Spec(
        "trust",
        "what this folder asks for, and trust it (or not)",
        "What this notebook's folder asks for — each MCP server's command line or URL and the "
        "approval it wants, approval and web settings, instruction files — and whether you "
        "trust it; then asks. Until trusted, none of it is used (its approval and web settings "
        "may only make yours stricter).",
        _trust_args,
        _trust,
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
        _login_args,
        None,
        _MAGIC,
        by_front=_MAGIC,
        needs_session=False,
        runs_without_archive=True,
    ),
    Spec(
        "logout",
        "remove the saved API key",
        "Remove the API key %cowork login saved.",
        _no_args,
        None,
        _MAGIC,
        by_front=_MAGIC,
        needs_session=False,
        runs_without_archive=True,
    ),
    Spec(
        "help",
        "these commands, and @-mentions",
        "The commands, and @-mentions.",
        _no_args,
        _help,
        _SIDEBAR,
        needs_session=False,
    ),
)
COMMANDS: tuple[Spec[Any], ...] = _TABLE
"""Every command, in the order the fronts list them."""

_BY_NAME = {spec.name: spec for spec in COMMANDS}


def command(name: str) -> Spec[Any] | None:
    """The command called ``name``, if any."""
    return _BY_NAME.get(name)


def commands_for(front: Front) -> tuple[Spec[Any], ...]:
    """The commands ``front`` offers, in order."""
    return tuple(spec for spec in COMMANDS if front in spec.fronts)


# -- running ----------------------------------------------------------------------------


async def availability(spec: Spec[Any], context: Context) -> None:
    """Raise a :class:`~loom_jupyter.errors.LoomError` saying why ``spec`` cannot run now.

    The one busy rule (:meth:`HostContext.refuse_while_running`): what the session says runs
    (:meth:`CoworkSession.running_now`: its turn, a turn the floor began, a running
    delegation). A switch is left to the session, which refuses it with the same reading
    (:class:`~loom_jupyter.errors.SessionBusyError`).
    """
    from loom_jupyter.host.commands.context import HostContext

    if not isinstance(context, HostContext):
        if spec.needs_session:
            raise LoomError(f"{context.spelled(spec.name)} needs a kernel: run it in the notebook.")
        return
    if spec.busy == "refused":
        await context.refuse_while_running(spec.name)


def handler(spec: Spec[A]) -> Handler[A]:
    """The function that answers ``spec`` on the engine loop (its module is imported when it
    first runs)."""
    if spec.handler is None:
        raise LoomError(f"{spec.name} is answered by the front that offers it.")
    return spec.handler


async def execute(spec: Spec[A], context: Context, args: A) -> Report:
    """Run a command: its availability, then its handler (engine loop). A refusal or a
    failure raises :class:`~loom_jupyter.errors.LoomError`; each front says it its way."""
    await availability(spec, context)
    return await handler(spec)(context, args)
