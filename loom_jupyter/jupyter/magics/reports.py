"""Handlers of the ``%cowork`` subcommands (sessions, resume, search, export, cost...).

Each reads or changes the archive through the session on the engine loop
(:meth:`KernelCowork.run`) and shows its result with :mod:`.output`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from loom_jupyter.jupyter.cell.output import plural, shorten, show_table, show_text

if TYPE_CHECKING:
    import argparse

    from loom_jupyter.jupyter.coworker.runtime import KernelCowork
    from loom_jupyter.records import SessionInfo

__all__ = [
    "adopt",
    "approval",
    "close",
    "cost",
    "delete",
    "export",
    "fork",
    "model",
    "new",
    "resume",
    "search",
    "sessions",
    "status",
]


def _list(cw: KernelCowork) -> list[SessionInfo]:
    """The person's sessions (a delegation's sub-agents are under ``%delegate status``)."""
    return cw.run(cw.views.sessions())


def _pick(cw: KernelCowork, target: str) -> SessionInfo:
    """A session by its number in ``%cowork sessions`` or by an id prefix."""
    return cw.run(cw.views.pick(target))


def _prompts(cw: KernelCowork, listed: list[SessionInfo]) -> dict[str, int]:
    return cw.run(cw.views.prompt_counts([s.id for s in listed]))


def sessions(cw: KernelCowork, args: argparse.Namespace) -> None:
    """``%cowork sessions``: number, title, prompts, last active, status (rows in details)."""
    listed = _list(cw)
    if not listed:
        show_text(
            "No sessions yet in this notebook's archive: send a prompt with %cowork to start one."
        )
        return
    current = cw.session.session_id
    prompts = _prompts(cw, listed)
    rows = [
        (
            f"{n}{' *' if s.id == current else ''}",
            shorten(s.title or "(untitled)", 40),
            prompts[s.id],
            s.last_active_at[:16].replace("T", " "),
            s.status,
            s.id[:8],
            s.turn_count,
        )
        for n, s in enumerate(listed, 1)
    ]
    show_table(
        ("#", "title", "prompts", "last active (UTC)", "status", "id", "rows"),
        rows,
        caption="* = current. Switch with %cowork resume N.",
        nowrap=True,
    )


def resume(cw: KernelCowork, args: argparse.Namespace) -> None:
    """``%cowork resume ID|N``."""
    info = cw.run(cw.session.resume(_pick(cw, args.target).id))
    cw.refresh_panel()
    count = plural(_prompts(cw, [info])[info.id], "prompt")
    show_text(f"Resumed “{info.title or '(untitled)'}” ({count}; {info.turn_count} archive rows).")


def new(cw: KernelCowork, args: argparse.Namespace) -> None:
    """``%cowork new``."""
    cw.run(cw.session.new())
    cw.refresh_panel()
    show_text("New session: your next %cowork prompt starts it. Older ones: %cowork sessions.")


def fork(cw: KernelCowork, args: argparse.Namespace) -> None:
    """``%cowork fork [--at N]``."""
    info = cw.run(cw.session.fork(at_turn=args.at))
    cw.refresh_panel()
    show_text(f"Forked into a new session with {info.turn_count} turns; you are now in the fork.")


def close(cw: KernelCowork, args: argparse.Namespace) -> None:
    """``%cowork close``."""
    cw.run(cw.session.end())
    cw.refresh_panel()
    show_text("Session closed (still searchable and resumable). The next prompt starts a new one.")


def delete(cw: KernelCowork, args: argparse.Namespace) -> None:
    """``%cowork delete ID [--yes]``: asks on stdin unless --yes."""
    target = _pick(cw, args.target)
    label = f"“{target.title or '(untitled)'}” ({target.turn_count} turns, id {target.id[:8]})"
    if not args.yes and not _confirm(f"Delete session {label} for good? [y/N]: "):
        return
    if target.id == cw.session.session_id:
        cw.run(cw.session.new())
    cw.run(cw.views.delete_session(target.id))
    cw.refresh_panel()
    show_text(f"Deleted session {label}.")


def _confirm(question: str) -> bool:
    from loom_jupyter.jupyter.cell.approval import read_answer

    answer = read_answer(question)
    if answer is None:
        show_text("Not deleted: cannot ask for confirmation here (no stdin). Pass --yes to delete.")
        return False
    if answer.strip().lower() in {"y", "yes"}:
        return True
    show_text("Not deleted.")
    return False


def status(cw: KernelCowork, args: argparse.Namespace) -> None:
    """``%cowork status``: the approval mode and what "Always" allows, the archive's path,
    filesystem and journal, then the live panel."""
    mode, source = cw.host.approval_mode()
    show_text(f"Approval: {mode} ({source}). {always_text(cw)}\n{cw.host.storage_line()}")
    cw.ensure_panel().show()


def always_text(cw: KernelCowork) -> str:
    """What the person's "Always" answers allow in this session, and how to take them back."""
    labels = cw.session.policy.always_labels()
    if not labels:
        return 'Nothing is allowed "Always" in this session.'
    listed = "; ".join(labels)
    return f'Allowed "Always": {listed}. %cowork approval --forget asks again.'


def search(cw: KernelCowork, args: argparse.Namespace) -> None:
    """``%cowork search QUERY [--all | --all-notebooks]``: matches first, with context."""
    from loom_jupyter.session.search_view import render_matches

    query = " ".join(args.query)
    if args.all_notebooks:
        found, root = cw.run(cw.views.project_search(query, args.limit))
        where = f"{found.archives} notebook archive(s) under {root}"
        show_text(render_matches(found.matches, query, where=where, notes=found.skipped))
        return
    sid = None if args.all else cw.session.session_id
    if sid is None and not args.all:
        show_text("This session has no turns yet; use --all to search every session.")
        return
    matches = cw.run(cw.views.search(query, session_id=sid, limit=args.limit))
    where = "every session of this notebook" if args.all else "this session"
    show_text(render_matches(matches, query, where=where))


def export(cw: KernelCowork, args: argparse.Namespace) -> None:
    """``%cowork export [PATH]``: a Markdown journal of the current session."""
    from loom_jupyter.session.export import export_session, write_export

    sid = cw.session.session_id
    if sid is None:
        show_text("Nothing to export yet: this session has no turns.")
        return
    info = cw.run(cw.views.session_info(sid))
    turns = cw.run(cw.views.turns(sid))
    default = cw.location.directory / f"{cw.location.path.stem}-cowork-{sid[:8]}.md"
    path = Path(args.path).expanduser() if args.path else default
    write_export(path, export_session(info, turns, "md"), force=args.force)
    show_text(f"Exported {len(turns)} turns to {path} (readable by you only).")


def cost(cw: KernelCowork, args: argparse.Namespace) -> None:
    """``%cowork cost``: per-call tokens and cost, totals, and a small plot."""
    from loom_jupyter.jupyter.magics.cost import show_cost

    sid = cw.session.session_id
    calls = cw.run(cw.views.model_calls(sid)) if sid else []
    show_cost(calls, rich=cw.in_kernel)
    if calls:
        show_text(cw.session.cache_note())


def adopt(cw: KernelCowork, args: argparse.Namespace) -> None:
    """``%cowork adopt NAME``: take over the conversation of a notebook that is gone."""
    from loom_jupyter.jupyter.coworker.moves import adopt as take_over

    successor = take_over(cw, args.notebook)
    show_text(f"The conversation of {args.notebook} is now this notebook's.\n{successor.banner()}")


def model(cw: KernelCowork, args: argparse.Namespace) -> None:
    """``%cowork model NAME``; with no name, the models the Models API lists (id, display
    name, context window, max output; the current one marked), cached for a day."""
    if args.name:
        cw.session.options.set_model(args.name)
        show_text(f"Model: {cw.session.model.name} (from the next request).")
        return
    from loom_jupyter.models.catalog import model_rows

    listed = cw.run(cw.session.options.list_models(refresh=args.refresh))
    show_table(
        ("", "id", "name", "context window", "max output"),
        model_rows(listed, cw.session.model.name),
        caption=f"* = current. {listed.describe()} Switch with %cowork model NAME.",
        nowrap=True,
    )


def approval(cw: KernelCowork, args: argparse.Namespace) -> None:
    """``%cowork approval ask|auto|read-only``: the person's word, beating every setting."""
    from loom_jupyter.host.services.trust import set_approval

    if args.forget:
        cw.session.policy.reset()
        show_text('Forgot every "Always" answer: those calls ask again.')
        return
    if args.mode is None:
        mode, source = cw.host.approval_mode()
        show_text(f"Approval policy: {mode} ({source}). Switch with %cowork approval MODE.")
        show_text(always_text(cw))
        return
    cw.run(set_approval(cw.host, args.mode))
    show_text(f"Approval policy: {args.mode} (magic).")
