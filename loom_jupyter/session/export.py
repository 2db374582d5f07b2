"""A whole session as a Markdown journal or as JSON (the CLI's and ``%cowork export``).

The JSON carries the session's row, its turns and its rows of every other table that
holds a session's rows (``archive/tables.py``: model calls, tasks and subtasks, cell
changes, executions, outside agents' marks), each under the table's name. The journal
marks an outside agent's calls and lists the cells each turn changed.
"""

from __future__ import annotations

import dataclasses
import json
import os
from typing import TYPE_CHECKING, Any, Literal

from loom_jupyter.errors import LoomError
from loom_jupyter.messages import ThinkingBlock, ToolUseBlock, block_to_api
from loom_jupyter.models.pricing import session_cost
from loom_jupyter.tools.output import redact, secret_values

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path

    from loom_jupyter.archive import SessionInfo
    from loom_jupyter.archive.session_tables import SessionTables
    from loom_jupyter.messages import ContentBlock, Turn

__all__ = ["ExportFormat", "clock", "export_session", "write_export"]

ExportFormat = Literal["md", "json"]


def export_session(
    info: SessionInfo, turns: Sequence[Turn], fmt: ExportFormat, tables: SessionTables | None = None
) -> str:
    """The whole session in ``fmt``; ``tables``: its rows of the other tables
    (``Archive.session_tables``)."""
    from loom_jupyter.archive.session_tables import SessionTables

    rows = tables or SessionTables()
    return _json(info, turns, rows) if fmt == "json" else _markdown(info, turns, rows)


def write_export(path: Path, text: str, *, force: bool = False) -> Path:
    """Write an export as a new file only the person can read (0600): the conversation
    holds every file and dataframe the agent saw, as the archive does. An existing file
    is replaced only with ``force``; every failure is a :class:`LoomError` that says why."""
    path = path.expanduser()
    flags = os.O_WRONLY | os.O_CREAT | (os.O_TRUNC if force else os.O_EXCL)
    try:
        fd = os.open(path, flags | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except FileExistsError:
        raise LoomError(
            f"{path} exists already: give another path, or --force to replace it."
        ) from None
    except OSError as error:
        raise LoomError(
            f"Cannot write the export to {path}: {error.strerror or error}. "
            "Give a path in an existing folder you can write to."
        ) from error
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        os.fchmod(handle.fileno(), 0o600)  # a replaced file keeps no looser mode
        handle.write(text)
    return path


def _json(info: SessionInfo, turns: Sequence[Turn], tables: SessionTables) -> str:
    secrets = secret_values()
    payload: dict[str, object] = {
        "session": dataclasses.asdict(info),
        "turns": [_turn_dict(turn, secrets) for turn in turns],
    }
    payload.update({name: list(rows) for name, rows in tables.tables.items()})
    return json.dumps(payload, ensure_ascii=False, indent=2) + "\n"


def _turn_dict(turn: Turn, secrets: Sequence[str]) -> dict[str, object]:
    data = dataclasses.asdict(turn)
    data.pop("id", None)
    data["blocks"] = [_block_dict(block, secrets) for block in turn.blocks]
    data["tool_input"] = None if turn.tool_input is None else dict(turn.tool_input)
    return data


def _block_dict(block: ContentBlock, secrets: Sequence[str]) -> dict[str, Any]:
    """A block in API form; thinking redacted like the answer was as it streamed (the
    archive keeps it verbatim: its signature covers the exact text, security review R9)."""
    data = block_to_api(block)
    if isinstance(block, ThinkingBlock):
        data["thinking"] = redact(block.thinking, secrets)
    return data


def _markdown(info: SessionInfo, turns: Sequence[Turn], tables: SessionTables) -> str:
    lines = [
        f"# {info.title or 'Untitled session'}",
        "",
        f"- Session: `{info.id}` ({info.status})",
        f"- Notebook: `{info.notebook_path}`",
        f"- Model: {info.model}",
        f"- Started: {clock(info.created_at)} UTC; last active {clock(info.last_active_at)} UTC",
        f"- Tokens in/out: {info.input_tokens:,}/{info.output_tokens:,}; cost {session_cost(info)}",
        "",
    ]
    outside = tables.outside_clients()
    for turn in turns:
        lines += _markdown_turn(turn, outside.get(turn.turn_number, ""))
        lines += _changed_cells(tables.cell_changes(turn.turn_number))
    return "\n".join(lines).rstrip() + "\n"


def _changed_cells(changes: list[dict[str, object]]) -> list[str]:
    """The cells a turn changed (reverted ones say so)."""
    if not changes:
        return []
    told = [
        f"`{change['cell_id']}` {change['action']}"
        + (" (reverted)" if change["reverted_at"] else "")
        for change in changes
    ]
    return [f"Changed cells: {', '.join(told)}", ""]


def _markdown_turn(turn: Turn, outside_client: str = "") -> list[str]:
    title = turn.role.capitalize()
    if turn.role == "tool":
        title = f"Tool `{turn.tool_name}`" + (" (error)" if turn.is_error else "")
        title += f" · called by {outside_client} (outside agent)" if outside_client else ""
    status = "" if turn.status == "complete" else f" ({turn.status})"
    lines = [f"## {turn.turn_number}. {title}{status}", f"*{clock(turn.created_at)} UTC*", ""]
    if turn.role == "tool":
        if turn.tool_input is not None:
            lines += ["Input:", "", _fence(_pretty(turn.tool_input), "json"), ""]
        lines += [_fence(turn.content), ""]
        return lines
    lines += [turn.content, ""] if turn.content else []
    for block in turn.blocks:
        if isinstance(block, ToolUseBlock):
            lines += [f"Calls `{block.name}`:", "", _fence(_pretty(block.input), "json"), ""]
    return lines


def clock(timestamp: str) -> str:
    """``2026-11-22 02:46`` from an archive timestamp (UTC)."""
    return timestamp[:16].replace("T", " ")


def _pretty(data: Mapping[str, Any]) -> str:
    return json.dumps(dict(data), indent=2, ensure_ascii=False, default=str)


def _fence(text: str, language: str = "") -> str:
    fence = "```"
    while fence in text:  # a longer fence than any run of backticks inside
        fence += "`"
    return f"{fence}{language}\n{text}\n{fence}"
