"""The subcommands; each returns its output text."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from loom_jupyter.archive import Archive
from loom_jupyter.archive.project import ProjectArchives
from loom_jupyter.archive.readable import search_for_people
from loom_jupyter.archive.salvage import recover_archive
from loom_jupyter.cli.locate import (
    UsageError,
    find_archive,
    find_folder,
    notebook_folder,
    pick_session,
)
from loom_jupyter.cli.render import session_header, table, turn_text
from loom_jupyter.models.pricing import session_cost
from loom_jupyter.session.export import clock, export_session, write_export
from loom_jupyter.session.recover_view import render_report
from loom_jupyter.session.search_view import render_matches
from loom_jupyter.settings import Settings

if TYPE_CHECKING:
    import argparse

    from loom_jupyter.archive import SessionInfo
    from loom_jupyter.lineage import ExecutionRecord

__all__ = ["run_command"]


async def run_command(args: argparse.Namespace) -> str:
    """Run the subcommand ``args.command`` against the notebook's archive."""
    folder = find_folder(args.notebook) if args.command == "search" else None
    if folder is not None:
        return await _search_folder(folder, args)
    path = find_archive(args.notebook)
    # loom.yaml settings are looked up from the notebook's folder (the archive may be in
    # its .loom/ or under archive_dir).
    settings = Settings.load(notebook_folder(args.notebook, path))
    if args.command == "recover":  # the archive may not open: it is not opened here
        return await _recover(path, settings, args)
    opening = Archive.open(
        path, busy_timeout=settings.busy_timeout_seconds, journal_mode=settings.journal_mode
    )
    async with opening as archive:
        if args.command == "sessions":
            return await _sessions(archive, args)
        if args.command == "show":
            return await _show(archive, args)
        if args.command == "search":
            return await _search(archive, args)
        if args.command == "provenance":
            return await _provenance(archive, args)
        return await _export(archive, args)


async def _sessions(archive: Archive, args: argparse.Namespace) -> str:
    sessions = await archive.list_sessions(limit=args.limit, delegated=args.delegated)
    if not sessions:
        return f"No sessions yet in {archive.path}."
    rows = [_session_row(number, info) for number, info in enumerate(sessions, 1)]
    headers = ("#", "ID", "STATUS", "TURNS", "TOKENS", "COST", "LAST ACTIVE (UTC)", "TITLE")
    return table(headers, rows, "<<<>>><<")


def _session_row(number: int, info: SessionInfo) -> list[str]:
    tokens = info.input_tokens + info.output_tokens + info.cache_creation_tokens
    tokens += info.cache_read_tokens
    return [
        str(number),
        info.id[:8],
        info.status,
        str(info.turn_count),
        f"{tokens:,}",
        session_cost(info),
        clock(info.last_active_at),
        info.title or "(untitled)",
    ]


async def _show(archive: Archive, args: argparse.Namespace) -> str:
    info = await pick_session(archive, args.session)
    start, end = _parse_range(args.range)
    turns = await archive.get_turns(info.id, start, end)
    body = "\n\n".join(turn_text(turn) for turn in turns) or "(no turns in that range)"
    return f"{session_header(info)}\n\n{body}"


def _parse_range(text: str | None) -> tuple[int | None, int | None]:
    if text is None:
        return None, None
    first, sep, last = text.partition(":")
    try:
        start = int(first) if first else None
        end = (int(last) if last else None) if sep else start
    except ValueError:
        raise UsageError(f"Bad --range {text!r}: use A:B, A: or :B with turn numbers.") from None
    return start, end


async def _search(archive: Archive, args: argparse.Namespace) -> str:
    info = await pick_session(archive, args.session)
    sid = None if args.all_sessions else info.id
    matches = await search_for_people(archive, args.query, session_id=sid, limit=args.limit)
    where = "any session" if args.all_sessions else f"session {info.id[:8]}"
    return render_matches(matches, args.query, where=where)


async def _search_folder(folder: Path, args: argparse.Namespace) -> str:
    found = await ProjectArchives(folder).search_for_people(args.query, args.limit)
    if not found.archives:
        raise UsageError(
            f"No notebook archives under {folder} (looked for .loom/*.sqlite, and under "
            "archive_dir when it is set)."
        )
    where = f"{found.archives} notebook archive(s) under {folder}"
    return render_matches(found.matches, args.query, where=where, notes=found.skipped)


async def _export(archive: Archive, args: argparse.Namespace) -> str:
    info = await pick_session(archive, args.session)
    text = export_session(info, await archive.get_turns(info.id), args.format)
    if args.output is None:
        return text.rstrip("\n")
    target = write_export(Path(args.output), text, force=args.force)
    return f"Wrote {len(text):,} characters ({info.turn_count} turns) to {target}."


async def _provenance(archive: Archive, args: argparse.Namespace) -> str:
    from loom_jupyter.lineage import trace
    from loom_jupyter.tools.rebuild import provenance_text, when

    records = await archive.executions()
    if not records:
        return f"No executions recorded yet in {archive.path} (they are once Loom is loaded)."
    if args.name is not None:
        return provenance_text(trace(records, args.name))
    last: dict[str, ExecutionRecord] = {}
    for record in records:
        if record.error is None:
            for name in (*record.sets, *record.mutates):
                last[name] = record
    rows = [[name, last[name].label, when(last[name])] for name in sorted(last)]
    return table(("NAME", "LAST SET BY", "WHEN"), rows, "<<<")


async def _recover(path: Path, settings: Settings, args: argparse.Namespace) -> str:
    report = await recover_archive(
        path,
        move_aside=args.move_aside,
        busy_timeout=settings.busy_timeout_seconds,
        stale_after=settings.lease_stale_seconds,
    )
    return render_report(report)
