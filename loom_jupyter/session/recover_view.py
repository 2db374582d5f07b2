"""A recovery's report as text a person reads (``%cowork recover`` and ``loom-jupyter recover``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from typing_extensions import assert_never

from loom_jupyter.archive.tables import table

if TYPE_CHECKING:
    from loom_jupyter.archive.salvage import SalvageReport, TableTally

__all__ = ["render_report"]


def render_report(report: SalvageReport) -> str:
    """What was saved, what was lost, where the damaged file is, what resumes."""
    match report.outcome:
        case "intact":
            return (
                f"The archive {report.archive} is not damaged (PRAGMA integrity_check: ok); "
                "nothing was changed."
            )
        case "moved_aside":
            return (
                f"{report.archive} was not a SQLite database, so nothing in it could be saved. "
                f"It is kept as {report.damaged_copy}; a new, empty archive starts in its place."
            )
        case "recovered":
            return "\n".join(_recovered(report))
        case _:
            assert_never(report.outcome)


def _recovered(report: SalvageReport) -> list[str]:
    turns = report.tally("conversation_turns")
    share = f" ({100 * turns.saved / turns.total:.1f} %)" if turns.total else ""
    lines = [
        f"Recovered {report.archive}: {turns.saved:,} of {turns.total:,} turns saved{share}.",
        "",
        *_table(report.tables),
        "",
        f"The damaged file is kept as {report.damaged_copy}.",
    ]
    if report.header_rebuilt:
        lines.insert(
            1, "Its 100-byte header was destroyed; it was rebuilt from the archive's schema."
        )
    if report.recreated_sessions:
        count = len(report.recreated_sessions)
        lines.append(
            f"{count} session{'s' if count > 1 else ''} whose own row was lost "
            f"{'were' if count > 1 else 'was'} recreated for {'their' if count > 1 else 'its'} "
            "turns, titled “(recovered) …”."
        )
    if report.recreated_tasks:
        count = len(report.recreated_tasks)
        lines.append(
            f"{count} delegated task{'s' if count > 1 else ''} whose own row was lost "
            f"{'were' if count > 1 else 'was'} recreated for {'their' if count > 1 else 'its'} "
            "subtasks, titled “(recovered task)”."
        )
    if report.latest_session_id:
        lines.append(f"The latest session ({report.latest_session_id[:8]}) goes on from here.")
    return lines


def _table(tallies: tuple[TableTally, ...]) -> list[str]:
    """Saved and lost per table, which pass saved them (the b-tree reads, then the pages),
    and how many kept rows lost their parent row."""
    labels = [_label(t.table) for t in tallies]
    width = max(len(label) for label in labels)
    head = (
        f"{'':<{width}}  {'saved':>7}  {'lost':>6}  {'by tree':>7}  {'by pages':>8}"
        f"  {'parent lost':>11}"
    )
    body = [
        f"{label:<{width}}  {t.saved:>7,}  {t.lost:>6,}  {t.from_trees:>7,}  {t.from_pages:>8,}"
        f"  {t.orphans:>11,}"
        for label, t in zip(labels, tallies, strict=True)
    ]
    note = (
        "“by tree”: read through the table's b-tree as SQLite reads it; “by pages”: found only "
        "by reading every page of the file; “parent lost”: kept although the row they belong "
        "to was lost (under a recreated session or task, or on their own)."
    )
    return [head, *body, note]


def _label(name: str) -> str:
    try:
        return table(name).label
    except KeyError:
        return name
