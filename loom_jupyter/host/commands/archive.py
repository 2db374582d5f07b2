"""Reading the archive: search, show, export; and recovering a damaged one.

In a kernel they read through the host's views (the current session is the default); in
a terminal (:class:`ArchiveContext`) straight from the archive file, a folder of
archives for ``search``.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING

from loom_jupyter.host.commands.context import ArchiveContext, Context, pick_session
from loom_jupyter.host.commands.report import Block, Report, say
from loom_jupyter.host.commands.spec import UsageProblem

if TYPE_CHECKING:
    from collections.abc import Sequence

    from loom_jupyter.archive import SessionInfo
    from loom_jupyter.host.commands.arguments import ExportArgs, RecoverArgs, SearchArgs, ShowArgs
    from loom_jupyter.messages import Turn

__all__ = ["export", "recover", "search", "session_header", "show", "turn_text"]


async def search(context: Context, args: SearchArgs) -> Report:
    """Matches first, each with the turns around it."""
    from loom_jupyter.session.search_view import render_matches

    if isinstance(context, ArchiveContext):
        return await _archive_search(context, args)
    views = context.host.views
    if args.all_notebooks:
        found, root = await views.project_search(args.query, args.limit)
        where = f"{found.archives} notebook archive(s) under {root}"
        return say(render_matches(found.matches, args.query, where=where, notes=found.skipped))
    sid = None if args.all else (await context.host.session_async()).session_id
    if sid is None and not args.all:
        return say(
            f"This session has no turns yet; use {context.spelled('search --all')} to search "
            "every session."
        )
    matches = await views.search(args.query, session_id=sid, limit=args.limit)
    where = "every session of this notebook" if args.all else "this session"
    return say(render_matches(matches, args.query, where=where))


async def _archive_search(context: ArchiveContext, args: SearchArgs) -> Report:
    from loom_jupyter.archive.project import ProjectArchives
    from loom_jupyter.archive.readable import search_for_people
    from loom_jupyter.session.search_view import render_matches

    if context.folder:
        found = await ProjectArchives(context.path).search_for_people(args.query, args.limit)
        if not found.archives:
            raise UsageProblem(
                f"No notebook archives under {context.path} (looked for .loom/*.sqlite, and "
                "under archive_dir when it is set)."
            )
        where = f"{found.archives} notebook archive(s) under {context.path}"
        return say(render_matches(found.matches, args.query, where=where, notes=found.skipped))
    archive = context.opened
    info = await pick_session(archive, args.session)
    sid = None if args.all else info.id
    matches = await search_for_people(archive, args.query, session_id=sid, limit=args.limit)
    where = "any session" if args.all else f"session {info.id[:8]}"
    return say(render_matches(matches, args.query, where=where))


async def show(context: Context, args: ShowArgs) -> Report:
    """A session's turns verbatim (a terminal's reading), each exchange that loaded skills
    ending with a line naming them."""
    if not isinstance(context, ArchiveContext):
        raise UsageProblem("show reads an archive from a terminal: loom-jupyter show NOTEBOOK")
    archive = context.opened
    info = await pick_session(archive, args.session)
    start, end = _parse_range(args.range)
    turns = await archive.get_turns(info.id, start, end)
    by = await archive.outside_clients(info.id, start or 1, end or info.turn_count)
    shown = [turn_text(t, by.get(t.turn_number, "")) for t in turns]
    for at, line in _skills_loaded(turns):
        shown[at] += f"\n   {line}"
    body = "\n\n".join(shown)
    body = body or "(no turns in that range)"
    return say(f"{session_header(info)}\n\n{body}")


def session_header(info: SessionInfo) -> str:
    """A few lines naming a session and its usage."""
    from loom_jupyter.models.pricing import session_cost
    from loom_jupyter.session.export import clock

    tokens = info.input_tokens + info.output_tokens + info.cache_creation_tokens
    tokens += info.cache_read_tokens
    fork = (
        f"  fork of {info.parent_session_id[:8]} at turn {info.forked_at_turn}"
        if (info.parent_session_id)
        else ""
    )
    return (
        f"Session {info.id}  [{info.status}]{fork}\n"
        f"Title:   {info.title or '(untitled)'}\n"
        f"Model:   {info.model}   Turns: {info.turn_count}   Tokens: {tokens:,}   "
        f"Cost: {session_cost(info)}\n"
        f"Started: {clock(info.created_at)} UTC   Last active: {clock(info.last_active_at)} UTC"
    )


def turn_text(turn: Turn, outside_client: str = "") -> str:
    """One turn for reading: a header line (naming the outside agent that made the call,
    if one did), then its text indented."""
    from loom_jupyter.messages import ToolUseBlock
    from loom_jupyter.session.export import clock

    label: str = turn.role
    if turn.role == "tool":
        label = f"tool {turn.tool_name or '?'}" + (" (error)" if turn.is_error else "")
        label += f" · called by {outside_client} (outside agent)" if outside_client else ""
    if turn.status != "complete":
        label += f" [{turn.status}]"
    lines = [f"── #{turn.turn_number} {label} · {clock(turn.created_at)}"]
    if turn.role == "tool" and turn.tool_input is not None:
        lines.append(f"   input: {json.dumps(dict(turn.tool_input), ensure_ascii=False)}")
    lines += [f"   {line}" for line in turn.content.splitlines()] or ["   (no text)"]
    for block in turn.blocks:
        if isinstance(block, ToolUseBlock):
            called = json.dumps(dict(block.input), ensure_ascii=False)
            lines.append(f"   → calls {block.name} {called}")
    return "\n".join(lines)


def _skills_loaded(turns: Sequence[Turn]) -> list[tuple[int, str]]:
    """Where each exchange (a person's message and what answered it) that loaded skills
    ends, with a line naming them: ``skills loaded: plot-style (user, FOLDER)``. Read off
    the archived ``load_skill`` results (DESIGN §15); a failed load names none."""
    from loom_jupyter.skills import loaded_skill

    lines: list[tuple[int, str]] = []
    loaded: list[str] = []
    for at, turn in enumerate(turns):
        if turn.role == "user" and loaded:
            lines.append((at - 1, "skills loaded: " + ", ".join(loaded)))
            loaded = []
        found = (
            loaded_skill(turn.content)
            if turn.role == "tool" and turn.tool_name == "load_skill" and not turn.is_error
            else None
        )
        if found is not None:
            name, source, folder = found
            if (named := f"{name} ({source}, {folder})") not in loaded:
                loaded.append(named)
    if loaded:
        lines.append((len(turns) - 1, "skills loaded: " + ", ".join(loaded)))
    return lines


def _parse_range(text: str | None) -> tuple[int | None, int | None]:
    if text is None:
        return None, None
    first, sep, last = text.partition(":")
    try:
        start = int(first) if first else None
        end = (int(last) if last else None) if sep else start
    except ValueError:
        raise UsageProblem(f"Bad --range {text!r}: use A:B, A: or :B with turn numbers.") from None
    return start, end


async def export(context: Context, args: ExportArgs) -> Report:
    """The session as Markdown (0600): in a kernel the current one, written beside the
    notebook unless PATH; in a terminal any session, to stdout unless ``-o``."""
    from loom_jupyter.session.export import export_session, write_export

    if isinstance(context, ArchiveContext):
        archive = context.opened
        info = await pick_session(archive, args.session)
        turns, tables = await archive.get_turns(info.id), await archive.session_tables(info.id)
        text = export_session(info, turns, args.format, tables)
        if args.output is None:
            return Report(parts=(Block(text.rstrip("\n"), kind="markdown"),))
        target = write_export(Path(args.output), text, force=args.force)
        return say(f"Wrote {len(text):,} characters ({info.turn_count} turns) to {target}.")
    host = context.host
    sid = (await host.session_async()).session_id
    if sid is None:
        return say("Nothing to export yet: this session has no turns.")
    info = await host.views.session_info(sid)
    turns = await host.views.turns(sid)
    default = f"{host.location.path.stem}-cowork-{sid[:8]}.md"
    text = export_session(info, turns, "md", await host.views.archive.session_tables(sid))
    where = host.location.directory  # a relative PATH is the notebook's folder's

    def write() -> Path:
        return write_export(where / Path(args.path or default).expanduser(), text, force=args.force)

    path = await asyncio.to_thread(write)
    return say(f"Exported {len(turns)} turns to `{path}` (readable by you only).")


async def recover(context: Context, args: RecoverArgs) -> Report:
    """Rebuild a damaged archive from a terminal (a kernel's ``%cowork recover`` steps its
    coworker down around it: the cell answers that one)."""
    from loom_jupyter.archive.salvage import recover_archive
    from loom_jupyter.session.recover_view import render_report

    if not isinstance(context, ArchiveContext):
        raise UsageProblem("Run %cowork recover in a cell.")
    settings = context.settings
    report = await recover_archive(
        context.path,
        move_aside=args.move_aside,
        busy_timeout=settings.busy_timeout_seconds,
        stale_after=settings.lease_stale_seconds,
    )
    return say(render_report(report))
