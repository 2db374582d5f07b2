"""Render a turn's events into the cell (notebook) or the terminal.

Both renderers run on the kernel's main thread (the magic pumps events to
them). :class:`NotebookRenderer` streams the answer as Markdown through one
``display_id`` per text segment, updated at most every ``_FLUSH_SECONDS``,
and shows each tool call as a compact card (tool, input summary, result
summary). Model text goes out as :data:`ANSWER_MIME`, never as ``text/markdown``
or ``text/html``: JupyterLab trusts a cell it ran, and a notebook it signed, and
renders trusted markup unsanitized. The labextension renders the type sanitized,
with remote images held back; without it the readable ``text/plain`` beside it
shows (DESIGN §12). The HTML Loom builds itself (tool cards, thinking, notices,
diff cards) escapes every string that came from the model or the archive. The
model's thinking streams into a collapsed ``<details>`` ("thinking…",
expandable) above the answer it leads to. :class:`TextRenderer` prints the answer as
readable plain text, a line at a time (:mod:`.plain_markdown`), the thinking as plain
text under a "thinking…" line: in terminal IPython, and in a kernel whose cell came from
a console (``jupyter console``, qtconsole), which shows a display only as it first came
and would cut a streamed answer to its first piece; there the lines are ``stream``
output, which every front shows whole.
"""

from __future__ import annotations

import html
import sys
import time
import uuid
from typing import TYPE_CHECKING, Any, Protocol

from typing_extensions import assert_never

from loom_jupyter.engine.events import (
    ApprovalNeeded,
    Notice,
    StateChanged,
    TextDelta,
    ThinkingDelta,
    ToolDraft,
    ToolFinished,
    ToolStarted,
    TurnDone,
    TurnError,
    TurnStarted,
    UsageEvent,
)
from loom_jupyter.jupyter.cell.diffs import diff_html
from loom_jupyter.tools.approval import NOTEBOOK_CHANGES
from loom_jupyter.tools.cells import change_of

if TYPE_CHECKING:
    from collections.abc import Callable

    from loom_jupyter.engine.events import Event
    from loom_jupyter.jupyter.kernel.front import FrontKind
    from loom_jupyter.tools.base import ExecutionResult

__all__ = [
    "ANSWER_MIME",
    "NotebookRenderer",
    "Renderer",
    "TextRenderer",
    "answer_bundle",
    "make_renderer",
    "thinking_bundle",
]

ANSWER_MIME = "application/vnd.loom.markdown+json"
"""Model text in a cell: ``{"markdown": text}``, rendered by the labextension's
``answer.ts`` (the same constant there) through its sanitized markdown path."""

_FLUSH_SECONDS = 0.15
_CARD_STYLE = (
    "font-family:var(--jp-code-font-family,monospace);font-size:85%;margin:4px 0;"
    "padding:3px 8px;border-left:3px solid {color};background:rgba(127,127,127,0.08)"
)


class Renderer(Protocol):
    """Shows one turn's events; every method runs on the main thread."""

    def on_event(self, event: Event) -> None:
        """Render one engine event."""
        ...

    def tick(self) -> None:
        """Flush throttled output (called while the main thread waits)."""
        ...

    def show_execution(self, code: str, result: ExecutionResult) -> None:
        """Show what the agent's code produced that the person should see (figures)."""
        ...

    def message(self, text: str, *, level: str = "info") -> None:
        """A one-line notice outside the answer."""
        ...


def make_renderer(shell: Any, front: FrontKind | None = None) -> Renderer:
    """Rich output for a notebook front, plain text for a terminal shell and for a console
    (``front``: the cell's front, :func:`~loom_jupyter.jupyter.kernel.front.front_kind`;
    ``None``: any kernel's front counts as a notebook)."""
    if front is None:
        front = "notebook" if getattr(shell, "kernel", None) is not None else "terminal"
    return NotebookRenderer() if front == "notebook" else TextRenderer()


class NotebookRenderer:
    """Markdown segments and HTML tool cards, updated in place."""

    rich = True  # can show displays (the approval question is one)

    def __init__(self) -> None:
        self._text = ""
        self._segment_id: str | None = None
        self._dirty = False
        self._last_flush = 0.0
        self._cards: dict[str, tuple[str, str]] = {}  # call id -> (display id, input)
        self._thinking: _Thinking | None = None  # the thinking block streaming now

    def on_event(self, event: Event) -> None:
        """Render one engine event."""
        if self._thinking is not None and not isinstance(event, ThinkingDelta):
            self._end_thinking()
        match event:
            case TextDelta():
                self._text += event.text
                self._dirty = True
                self.tick()
            case ThinkingDelta():
                self._end_segment()
                if self._thinking is None:
                    self._thinking = _Thinking()
                self._thinking.add(event)
                self.tick()
            case ApprovalNeeded() | ToolStarted() | ToolFinished():
                self._end_segment()
                self._tool_card(event)
            case Notice():
                self.message(event.message, level=event.level)
            case TurnDone():
                self._end_segment()
                if event.message:
                    self.message(event.message, level="warning")
            case TurnError():
                self._end_segment()
                self.message(event.message, level="error")
            case TurnStarted() | UsageEvent() | StateChanged() | ToolDraft():
                pass  # the panel and the sidebar show these; the cell shows the answer
            case _:
                assert_never(event)

    def tick(self) -> None:
        """Push the streaming text if it changed and the throttle allows."""
        now = time.monotonic()
        thinking = self._thinking
        if (
            thinking is not None
            and thinking.dirty
            and (thinking.display_id is None or now - thinking.flushed >= _FLUSH_SECONDS)
        ):
            thinking.flush(now, done=False)
        if self._dirty and (self._segment_id is None or now - self._last_flush >= _FLUSH_SECONDS):
            self._flush(now)

    def show_execution(self, code: str, result: ExecutionResult) -> None:
        """Display the figures the agent's code made (with words where an image cannot show)."""
        from IPython.display import display

        for image in result.images:
            words = "(a figure the agent's code made)"
            display({image.media_type: image.data, "text/plain": words}, raw=True)

    def message(self, text: str, *, level: str = "info") -> None:
        """A small coloured line."""
        from IPython.display import display

        color = {"error": "#c62828", "warning": "#b26a00"}.get(level, "#666")
        body = f'<div style="color:{color};font-size:90%">{html.escape(text)}</div>'
        display({"text/html": body, "text/plain": text}, raw=True)

    def _flush(self, now: float) -> None:
        from IPython.display import display, update_display

        bundle = answer_bundle(self._text)
        if self._segment_id is None:
            self._segment_id = uuid.uuid4().hex
            display(bundle, raw=True, display_id=self._segment_id)
        else:
            update_display(bundle, raw=True, display_id=self._segment_id)
        self._dirty = False
        self._last_flush = now

    def _end_thinking(self) -> None:
        if self._thinking is not None:
            self._thinking.flush(time.monotonic(), done=True)
        self._thinking = None

    def _end_segment(self) -> None:
        if self._dirty:
            self._flush(time.monotonic())
        self._text, self._segment_id = "", None

    def _tool_card(self, event: Any) -> None:
        from IPython.display import display, update_display

        known = self._cards.get(event.call_id)
        if known is None:
            summary = "" if event.kind == "tool_finished" else event.summary
            known = self._cards[event.call_id] = (uuid.uuid4().hex, summary)
            show: Callable[..., Any] = display
        else:
            show = update_display
        card_id, summary = known
        show(_card_bundle(event, summary), raw=True, display_id=card_id)


def answer_bundle(text: str) -> dict[str, Any]:
    """Model text as a display bundle: Loom's own type, and readable plain text."""
    from loom_jupyter.jupyter.cell.plain_markdown import plain_text

    return {ANSWER_MIME: {"markdown": text}, "text/plain": plain_text(text)}


class _Thinking:
    """One thinking block in the cell: a collapsed ``<details>``, updated in place."""

    def __init__(self) -> None:
        self.text = ""
        self.redacted = 0
        self.display_id: str | None = None
        self.dirty = False
        self.flushed = 0.0

    def add(self, event: ThinkingDelta) -> None:
        self.text += event.text
        self.redacted += event.redacted
        self.dirty = True

    def flush(self, now: float, *, done: bool) -> None:
        from IPython.display import display, update_display

        bundle = thinking_bundle(self.text, self.redacted, done=done)
        if self.display_id is None:
            self.display_id = uuid.uuid4().hex
            display(bundle, raw=True, display_id=self.display_id)
        else:
            update_display(bundle, raw=True, display_id=self.display_id)
        self.dirty, self.flushed = False, now


def thinking_bundle(text: str, redacted: int = 0, *, done: bool) -> dict[str, str]:
    """The cell's thinking block: collapsed, "thinking…" while it streams."""
    label = "thinking" if done else "thinking…"
    note = "(part of the thinking is encrypted by the API and not shown)" if redacted else ""
    body = html.escape(text.strip()) + (f"\n<i>{note}</i>" if note else "")
    style = "color:var(--jp-ui-font-color2,#666);font-size:90%;margin:4px 0"
    pre = "white-space:pre-wrap;margin:4px 0 0 12px;font-family:inherit"
    page = (
        f'<details data-loom="thinking" style="{style}"><summary>{label}</summary>'
        f'<div style="{pre}">{body}</div></details>'
    )
    return {"text/html": page, "text/plain": f"[{label}]"}


def _status(event: Any) -> tuple[str, str]:
    if event.kind == "approval_needed":
        return "waiting for approval", "#b26a00"
    if event.kind == "tool_started":
        return "running", "#1565c0"
    return ("failed", "#c62828") if event.is_error else ("done", "#2e7d32")


def _card_bundle(event: Any, summary: str) -> dict[str, str]:
    status, color = _status(event)
    result = event.summary if event.kind == "tool_finished" else ""
    head = f"<b>⚙ {html.escape(event.name)}</b> <code>{html.escape(summary)}</code>"
    tail = f'<span style="color:{color}">{html.escape(status)}</span>'
    if result:
        tail += f" — {html.escape(result)}"
    change = _change(event)
    card = diff_html(change) if change else ""
    body = f'<div style="{_CARD_STYLE.format(color=color)}">{head}<br>{tail}{card}</div>'
    plain = f"[{event.name}] {summary} — {status}" + (f": {result}" if result else "")
    if change:
        plain += "\n" + change
    return {"text/html": body, "text/plain": plain}


def _change(event: Any) -> str | None:
    """The diff of a finished notebook edit (a compact card under the tool's line)."""
    if event.kind != "tool_finished" or event.is_error or event.name not in NOTEBOOK_CHANGES:
        return None
    return change_of(event.result)


class TextRenderer:
    """Plain text for terminal IPython and a console's cells (printed: ``stream`` in a kernel)."""

    rich = False

    def __init__(self) -> None:
        from loom_jupyter.jupyter.cell.plain_markdown import MarkdownLines

        self._at_line_start = True
        self._markdown = MarkdownLines()  # the answer is Markdown: print it readably
        self._in_thinking = False

    def on_event(self, event: Event) -> None:
        """Print one engine event."""
        if self._in_thinking and not isinstance(event, ThinkingDelta):
            self._in_thinking = False
            self._line("(end of thinking)")
        match event:
            case TextDelta():
                self._write(self._markdown.feed(event.text))
            case ThinkingDelta():
                if not self._in_thinking:
                    self._in_thinking = True
                    self._line("thinking…")
                if event.redacted:
                    self._write("(encrypted thinking, not shown)\n")
                self._write(event.text)
            case ApprovalNeeded():
                self._line(f"  ⚙ {event.name}: {event.summary} (needs approval)")
            case ToolStarted():
                self._line(f"  ⚙ {event.name}: {event.summary}")
            case ToolFinished():
                mark = "✗" if event.is_error else "✓"
                self._line(f"    {mark} {event.summary}")
            case Notice():
                self._line(f"[{event.level}] {event.message}")
            case TurnDone():
                self._line(event.message) if event.message else self._end_line()
            case TurnError():
                self._line(f"Error: {event.message}")
            case TurnStarted() | UsageEvent() | StateChanged() | ToolDraft():
                pass  # `%cowork status` shows these; a call shows once it runs
            case _:
                assert_never(event)

    def tick(self) -> None:
        """Nothing is throttled in a terminal."""

    def show_execution(self, code: str, result: ExecutionResult) -> None:
        """Mention figures (a terminal cannot show them)."""
        if result.images:
            self._line(f"    ({len(result.images)} figure(s) captured and sent to the model)")

    def message(self, text: str, *, level: str = "info") -> None:
        """A line of its own."""
        self._line(text)

    def _write(self, text: str) -> None:
        sys.stdout.write(text)
        sys.stdout.flush()
        if text:
            self._at_line_start = text.endswith("\n")

    def _end_line(self) -> None:
        self._write(self._markdown.flush())
        if not self._at_line_start:
            self._write("\n")

    def _line(self, text: str) -> None:
        self._end_line()
        self._write(text + "\n")
