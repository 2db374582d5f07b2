"""The sessions of a notebook: list, resume, new, fork, close, delete.

A switch goes through the session, which refuses it while a turn or a delegation runs
(:class:`~loom_jupyter.errors.SessionBusyError`); then every front is told
(:meth:`Host.session_changed`: the sidebars and the cell's panel reload).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loom_jupyter.host.commands.context import ArchiveContext, Context, HostContext
from loom_jupyter.host.commands.report import Note, Report, Table, say

if TYPE_CHECKING:
    from loom_jupyter.archive import SessionInfo
    from loom_jupyter.host.commands.arguments import (
        DeleteArgs,
        ForkArgs,
        NoArgs,
        SessionsArgs,
        TargetArgs,
    )
    from loom_jupyter.host.host import Host

__all__ = ["close", "delete", "fork", "new", "resume", "sessions"]


def _plural(count: int, word: str) -> str:
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def _short(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


async def sessions(context: Context, args: SessionsArgs) -> Report:
    """The sessions, newest first: in a kernel with the current one marked and its prompts;
    from an archive with tokens and cost."""
    if isinstance(context, ArchiveContext):
        return await _archive_sessions(context, args)
    views = context.host.views
    listed = await views.sessions()
    if not listed:
        return say(
            "No sessions yet in this notebook's archive: send a prompt with %cowork to start one."
        )
    current = (await context.host.session_async()).session_id
    prompts = await views.prompt_counts([s.id for s in listed])
    rows = tuple(
        (
            f"{n}{' *' if s.id == current else ''}",
            _short(s.title or "(untitled)", 40),
            prompts[s.id],
            s.last_active_at[:16].replace("T", " "),
            s.status,
            s.id[:8],
            s.turn_count,
        )
        for n, s in enumerate(listed, 1)
    )
    caption = f"* = current. Switch with {context.spelled('resume N')}."
    headers = ("#", "title", "prompts", "last active (UTC)", "status", "id", "rows")
    return Report(parts=(Table(headers, rows, caption, nowrap=True),))


async def _archive_sessions(context: ArchiveContext, args: SessionsArgs) -> Report:
    from loom_jupyter.models.pricing import session_cost
    from loom_jupyter.session.export import clock

    archive = context.opened
    listed = await archive.list_sessions(limit=args.limit, delegated=args.delegated)
    if not listed:
        return say(f"No sessions yet in {archive.path}.")

    def row(number: int, info: SessionInfo) -> tuple[str, ...]:
        tokens = info.input_tokens + info.output_tokens + info.cache_creation_tokens
        tokens += info.cache_read_tokens
        return (
            str(number),
            info.id[:8],
            info.status,
            str(info.turn_count),
            f"{tokens:,}",
            session_cost(info),
            clock(info.last_active_at),
            info.title or "(untitled)",
        )

    headers = ("#", "ID", "STATUS", "TURNS", "TOKENS", "COST", "LAST ACTIVE (UTC)", "TITLE")
    rows = tuple(row(n, info) for n, info in enumerate(listed, 1))
    return Report(parts=(Table(headers, rows, align="<<<>>><<"),))


def _host(context: Context) -> Host:
    if not isinstance(context, HostContext):  # the registry offers these in kernels only
        raise TypeError("a session switch needs the kernel's host")
    return context.host


async def resume(context: Context, args: TargetArgs) -> Report:
    host = _host(context)
    session = await host.session_async()
    info = await session.resume((await host.views.pick(args.target)).id)
    await host.switches.changed()
    count = _plural((await host.views.prompt_counts([info.id]))[info.id], "prompt")
    return say(f"Resumed “{info.title or '(untitled)'}” ({count}; {info.turn_count} archive rows).")


async def new(context: Context, args: NoArgs) -> Report:
    host = _host(context)
    await (await host.session_async()).new()
    await host.switches.changed()
    return say(
        f"New session: your next {context.spelled('')}prompt starts it. Older ones: "
        f"{context.spelled('sessions')}."
    )


async def fork(context: Context, args: ForkArgs) -> Report:
    host = _host(context)
    info = await (await host.session_async()).fork(at_turn=args.at)
    await host.switches.changed()
    return say(f"Forked into a new session with {info.turn_count} turns; you are now in the fork.")


async def close(context: Context, args: NoArgs) -> Report:
    host = _host(context)
    await (await host.session_async()).end()
    await host.switches.changed()
    return say("Session closed (still searchable and resumable). The next prompt starts a new one.")


async def delete(context: Context, args: DeleteArgs) -> Report:
    """Without ``--yes`` nothing is deleted: the report asks (a front that can ask runs the
    command again with ``--yes`` on a yes)."""
    host = _host(context)
    target = await host.views.pick(args.target)
    label = f"“{target.title or '(untitled)'}” ({target.turn_count} turns, id {target.id[:8]})"
    if not args.yes:
        return Report(
            parts=(Note(f"Not deleted. Pass --yes to delete session {label}."),),
            ok=False,
            confirm=f"Delete session {label} for good? [y/N]: ",
        )
    session = await host.session_async()
    if target.id == session.session_id:
        await session.new()
    await host.views.delete_session(target.id)
    await host.switches.changed()
    return say(f"Deleted session {label}.")
