"""Rendering recalled turns compactly within an output budget.

Each recalled turn becomes one ``[Turn 12] user: ...`` entry; entries come in
groups (one search hit with its neighbours, one range, one past tool call),
best group first. When the text exceeds the budget it is cut in this order,
and the output says what was cut and how to fetch it in full:

1. tool results are shortened to a head+tail preview;
2. then user and assistant text is shortened;
3. then whole groups are dropped from the end (lowest ranked, or latest).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from loom_jupyter.messages import ToolUseBlock

if TYPE_CHECKING:
    from collections.abc import Sequence

    from loom_jupyter.messages import Turn

__all__ = ["RecallEntry", "Rendered", "entry_from_turn", "render_within_budget", "shorten_text"]

# Successive caps (characters) tried when shortening; the last is a bare preview.
_TOOL_CAPS = (3000, 1200, 400, 160)
_TEXT_CAPS = (3000, 1200, 500)
_INPUT_PREVIEW = 200


@dataclass(frozen=True)
class RecallEntry:
    """One turn as shown by recall."""

    turn: int
    role: str
    label: str
    text: str
    session_tag: str = ""
    match: bool = False
    cut: int = 0

    def render(self) -> str:
        """``[Turn 12] user: text`` (with the session and a match mark when relevant)."""
        where = f"{self.session_tag} " if self.session_tag else ""
        mark = " (match)" if self.match else ""
        note = (
            f"\n  [... {self.cut:,} chars cut; full text: action=range, "
            f"start_turn={self.turn}, end_turn={self.turn}]"
            if self.cut
            else ""
        )
        return f"[{where}Turn {self.turn}]{mark} {self.label}: {self.text}{note}"


def entry_from_turn(turn: Turn, *, session_tag: str = "", match: bool = False) -> RecallEntry:
    """The entry for an archived turn (assistant tool calls are listed inline)."""
    text = turn.content
    label: str = turn.role
    if turn.role == "assistant":
        calls = [b for b in turn.blocks if isinstance(b, ToolUseBlock)]
        text += "".join(f"\n  -> called {b.name}({_preview_input(b.input)})" for b in calls)
    elif turn.role == "tool":
        label = f"tool result of {turn.tool_name or '?'}" + (" (error)" if turn.is_error else "")
    if turn.status != "complete":
        label += f" [{turn.status}]"
    return RecallEntry(turn.turn_number, turn.role, label, text.strip(), session_tag, match)


def _preview_input(data: object) -> str:
    text = json.dumps(data, ensure_ascii=False, default=str)
    return text if len(text) <= _INPUT_PREVIEW else text[:_INPUT_PREVIEW] + "...}"


def _shorten(entry: RecallEntry, cap: int) -> RecallEntry:
    """Keep about two thirds of ``cap`` from the start and one third from the end."""
    if len(entry.text) <= cap:
        return entry
    head, tail = _head(entry.text, cap * 2 // 3), _tail(entry.text, cap // 3)
    cut = len(entry.text) - len(head) - len(tail)
    return replace(entry, text=f"{head} [...] {tail}", cut=entry.cut + cut)


def _head(text: str, size: int) -> str:
    """The first ``size`` characters, ending at a line break when one is near."""
    head = text[:size]
    newline = head.rfind("\n")
    return head[:newline] if newline > size * 2 // 3 else head


def _tail(text: str, size: int) -> str:
    """The last ``size`` characters, starting at a line break when one is near."""
    tail = text[-size:]
    newline = tail.find("\n")
    return tail[newline + 1 :] if 0 <= newline < size // 3 else tail


def shorten_text(text: str, cap: int) -> str:
    """``text`` cut to about ``cap`` characters (head and tail kept, at line breaks)."""
    return _shorten(RecallEntry(0, "", "", text), cap).text


def _render(groups: Sequence[Sequence[RecallEntry]]) -> str:
    return "\n\n".join("\n".join(e.render() for e in group) for group in groups)


@dataclass(frozen=True)
class Rendered:
    """The text and what had to be cut to fit."""

    text: str
    shortened_tool: int
    shortened_text: int
    dropped_groups: int


def render_within_budget(groups: Sequence[Sequence[RecallEntry]], max_chars: int) -> Rendered:
    """Render ``groups`` in ``max_chars``: cut tool results, then text, then drop groups."""
    current = [list(g) for g in groups]
    for tool, caps in ((True, _TOOL_CAPS), (False, _TEXT_CAPS)):
        for cap in caps:
            if len(_render(current)) <= max_chars:
                break
            current = _shorten_all(current, cap, tool=tool)
    dropped = 0
    while len(current) > 1 and len(_render(current)) > max_chars:
        current.pop()
        dropped += 1
    text = _render(current)
    if len(text) > max_chars:  # a single group still too big: keep its head
        text = text[:max_chars] + "\n[... the rest of this group is cut; narrow the range]"
    entries = [e for group in current for e in group if e.cut]
    tools = sum(1 for e in entries if e.role == "tool")
    return Rendered(text, tools, len(entries) - tools, dropped)


def _shorten_all(
    groups: list[list[RecallEntry]], cap: int, *, tool: bool
) -> list[list[RecallEntry]]:
    return [
        [_shorten(e, cap) if (e.role == "tool") == tool else e for e in group] for group in groups
    ]
