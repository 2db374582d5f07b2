"""The sidebar's messages as typed values, and their JSON codec (docs/sidebar-protocol.md).

Front -> kernel messages are parsed by :func:`parse_inbound` into frozen values
(a bad message raises :class:`ProtocolError`, never anything else). Kernel ->
front messages are frozen values with a ``type`` field; :func:`encode` turns
one into the JSON object the comm sends, stamped with ``seq``,
``kernel_session`` and ``turn`` by the outbox.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from loom_jupyter.errors import LoomError

__all__ = [
    "Approval",
    "ApprovalClosed",
    "Approve",
    "CancelQueued",
    "CellProposal",
    "Decision",
    "Fork",
    "Hello",
    "History",
    "HistoryItem",
    "Inbound",
    "LoadMore",
    "New",
    "NoticeMsg",
    "Outbound",
    "ProtocolError",
    "QueueMsg",
    "Queued",
    "Resume",
    "Search",
    "SearchResults",
    "Send",
    "SessionChanged",
    "SessionRow",
    "SessionSummary",
    "Sessions",
    "SessionsMsg",
    "SetNotebook",
    "StateName",
    "Status",
    "Stop",
    "SubtaskView",
    "TaskView",
    "TextMsg",
    "ToolFinishedMsg",
    "ToolInputMsg",
    "ToolItem",
    "ToolStartedMsg",
    "TurnDoneMsg",
    "TurnErrorMsg",
    "TurnStartedMsg",
    "UsageMsg",
    "Welcome",
    "encode",
    "parse_inbound",
    "version_notice",
]

PROTOCOL_VERSION = 1
MAX_MESSAGE_CHARS = 400_000
"""A front's message holds at most this many characters of text (about 100k tokens:
more than a prompt can use); a longer one is refused with a notice, never archived."""
MAX_MESSAGE_ITEMS = 10_000
"""...and at most this many values (keys, list items, nested objects), at any depth."""
Decision = Literal["allow", "deny", "always"]
StateName = Literal["idle", "thinking", "waiting-approval", "queued", "waiting-cell"]
_DECISIONS: tuple[Decision, ...] = ("allow", "deny", "always")


class ProtocolError(LoomError):
    """A message from the front that does not follow the protocol."""


# -- front -> kernel ----------------------------------------------------------


@dataclass(frozen=True)
class Hello:
    """Open or re-sync; ``since_seq`` asks for a replay of what the front missed.

    ``notebook_path`` is the notebook's path in the server's contents (relative to
    ``server_root``, the server's folder when the front knows it).
    """

    notebook_path: str = ""
    since_seq: int | None = None
    kernel_session: str | None = None
    client: str = "lab"
    server_root: str = ""
    protocol: int = 1  # the front's protocol version (a front that omits it speaks 1)
    type: Literal["hello"] = "hello"

    @property
    def understood(self) -> bool:
        """Whether this kernel speaks the front's protocol (same major version)."""
        return self.protocol == PROTOCOL_VERSION


@dataclass(frozen=True)
class Send:
    """A person's message; ``client_id`` makes a resend idempotent."""

    client_id: str
    text: str
    type: Literal["send"] = "send"


@dataclass(frozen=True)
class CancelQueued:
    """Drop a queued message."""

    client_id: str
    type: Literal["cancel_queued"] = "cancel_queued"


@dataclass(frozen=True)
class Stop:
    """Interrupt the running turn."""

    type: Literal["stop"] = "stop"


@dataclass(frozen=True)
class Approve:
    """The answer to an approval request."""

    request_id: str
    decision: Decision
    type: Literal["approve"] = "approve"


@dataclass(frozen=True)
class LoadMore:
    """Older history: archive turns before ``before_turn``."""

    before_turn: int
    type: Literal["load_more"] = "load_more"


@dataclass(frozen=True)
class Sessions:
    """List the notebook's sessions."""

    type: Literal["sessions"] = "sessions"


@dataclass(frozen=True)
class Resume:
    """Switch to a session (id, id prefix or list number)."""

    session: str
    type: Literal["resume"] = "resume"


@dataclass(frozen=True)
class New:
    """Start a new session with the next message."""

    type: Literal["new"] = "new"


@dataclass(frozen=True)
class Fork:
    """Copy the session up to ``at_turn`` (all when None) and switch to it."""

    at_turn: int | None = None
    type: Literal["fork"] = "fork"


@dataclass(frozen=True)
class Search:
    """Full-text search over the notebook's sessions."""

    query: str
    type: Literal["search"] = "search"


@dataclass(frozen=True)
class SetNotebook:
    """The notebook was renamed or saved under another name: its conversation follows it."""

    path: str
    server_root: str = ""
    type: Literal["set_notebook"] = "set_notebook"


Inbound: TypeAlias = (
    Hello
    | Send
    | CancelQueued
    | Stop
    | Approve
    | LoadMore
    | Sessions
    | Resume
    | New
    | Fork
    | Search
    | SetNotebook
)


def parse_inbound(data: object) -> Inbound:
    """The typed message in a comm's ``data``; :class:`ProtocolError` when malformed."""
    if not isinstance(data, dict):
        raise ProtocolError("a message must be a JSON object with a 'type'")
    _check_size(data)
    kind = data.get("type")
    parser = _PARSERS.get(kind) if isinstance(kind, str) else None
    if parser is None:
        raise ProtocolError(f"unknown message type {kind!r}")
    message: Inbound = parser(_Fields(data))
    return message


def _check_size(data: dict[str, Any]) -> None:
    """Refuse a message over :data:`MAX_MESSAGE_CHARS` or :data:`MAX_MESSAGE_ITEMS`;
    the walk is iterative and stops at the first limit, so its cost is bounded too."""
    chars, items, stack = 0, 0, [data]
    while stack:
        value = stack.pop()
        items += 1
        if isinstance(value, str):
            chars += len(value)
        elif isinstance(value, dict):
            stack.extend(value.values())
            chars += sum(len(str(key)) for key in value)
        elif isinstance(value, list):
            stack.extend(value)
        if chars > MAX_MESSAGE_CHARS:
            raise ProtocolError(
                f"the message is longer than {MAX_MESSAGE_CHARS:,} characters; save long "
                "text to a file in the notebook's folder and ask about the file"
            )
        if items > MAX_MESSAGE_ITEMS:
            raise ProtocolError(f"the message holds more than {MAX_MESSAGE_ITEMS:,} values")


def version_notice(front: int) -> str:
    """What a front speaking another protocol version is told (and nothing else)."""
    newer = "newer" if front > PROTOCOL_VERSION else "older"
    return (
        f"This Loom sidebar speaks protocol {front}, {newer} than the kernel's loom_jupyter "
        f"(protocol {PROTOCOL_VERSION}). Install the same loom_jupyter version for JupyterLab "
        "and for this kernel's Python (pip install -U loom_jupyter in both), then restart the "
        "kernel and reload the page."
    )


class _Fields:
    """Typed access to one message's fields."""

    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    def text(self, name: str, *, default: str | None = None) -> str:
        value = self._data.get(name, default)
        if not isinstance(value, str):
            raise ProtocolError(f"'{name}' must be a string")
        return value

    def whole(self, name: str, *, optional: bool = False) -> int | None:
        value = self._data.get(name)
        if value is None and optional:
            return None
        if not isinstance(value, int) or isinstance(value, bool):
            raise ProtocolError(f"'{name}' must be an integer")
        return value

    def decision(self) -> Decision:
        value = self._data.get("decision")
        for known in _DECISIONS:
            if value == known:
                return known
        raise ProtocolError("'decision' must be allow, deny or always")


def _hello(f: _Fields) -> Hello:
    session = f._data.get("kernel_session")
    return Hello(
        notebook_path=f.text("notebook_path", default=""),
        since_seq=f.whole("since_seq", optional=True),
        kernel_session=session if isinstance(session, str) else None,
        client=f.text("client", default="lab"),
        server_root=f.text("server_root", default=""),
        protocol=_version(f),
    )


def _version(f: _Fields) -> int:
    value = f.whole("protocol", optional=True)
    return 1 if value is None else value


def _required(f: _Fields, name: str) -> int:
    value = f.whole(name)
    assert value is not None
    return value


_PARSERS: dict[str, Any] = {
    "hello": _hello,
    "send": lambda f: Send(f.text("client_id"), f.text("text")),
    "cancel_queued": lambda f: CancelQueued(f.text("client_id")),
    "stop": lambda f: Stop(),
    "approve": lambda f: Approve(f.text("request_id"), f.decision()),
    "load_more": lambda f: LoadMore(_required(f, "before_turn")),
    "sessions": lambda f: Sessions(),
    "resume": lambda f: Resume(f.text("session")),
    "new": lambda f: New(),
    "fork": lambda f: Fork(f.whole("at_turn", optional=True)),
    "search": lambda f: Search(f.text("query")),
    "set_notebook": lambda f: SetNotebook(f.text("path"), f.text("server_root", default="")),
}


# -- kernel -> front: values inside messages ------------------------------------


@dataclass(frozen=True)
class SessionSummary:
    """The current session, as the front's header shows it."""

    id: str
    title: str
    prompts: int
    turns: int
    model: str
    approval: str
    last_active: str


@dataclass(frozen=True)
class HistoryItem:
    """A person's message or an assistant answer from the archive."""

    kind: Literal["user", "assistant"]
    turn: int
    text: str


@dataclass(frozen=True)
class ToolItem:
    """A tool call and its result from the archive."""

    turn: int
    call_id: str
    name: str
    input: dict[str, Any]
    summary: str
    is_error: bool
    result: str
    kind: Literal["tool"] = "tool"


@dataclass(frozen=True)
class Queued:
    """A message waiting behind the running turn."""

    client_id: str
    text: str


@dataclass(frozen=True)
class SessionRow:
    """One line of the session picker."""

    id: str
    title: str
    prompts: int
    turns: int
    last_active: str
    status: str
    current: bool


@dataclass(frozen=True)
class SubtaskView:
    """One delegated subtask's progress."""

    id: str
    description: str
    status: str
    attempt: int = 1
    elapsed_s: float = 0.0
    tokens: int = 0
    last_tool: str | None = None


@dataclass(frozen=True)
class TaskView:
    """A delegated task's progress (a full snapshot)."""

    task_id: str
    goal: str
    status: str
    subtasks: tuple[SubtaskView, ...] = ()
    type: Literal["task"] = "task"


# -- kernel -> front: messages ----------------------------------------------------


@dataclass(frozen=True)
class Status:
    """What the coworker is doing."""

    state: StateName
    detail: str = ""
    type: Literal["status"] = "status"


@dataclass(frozen=True)
class Welcome:
    """The reply to a hello that cannot be answered by a replay."""

    session: SessionSummary | None
    history: tuple[HistoryItem | ToolItem, ...]
    more_before: int | None
    busy: bool
    state: Status
    queue: tuple[Queued, ...]
    subshells: bool
    tasks: tuple[TaskView, ...]
    type: Literal["welcome"] = "welcome"


@dataclass(frozen=True)
class History:
    """A page of older history."""

    items: tuple[HistoryItem | ToolItem, ...]
    more_before: int | None
    type: Literal["history"] = "history"


@dataclass(frozen=True)
class TurnStartedMsg:
    """A turn began (from a cell or the sidebar)."""

    turn: int
    source: Literal["cell", "sidebar"]
    text: str
    client_id: str | None
    type: Literal["turn_started"] = "turn_started"


@dataclass(frozen=True)
class TextMsg:
    """A piece of the answer."""

    turn: int
    delta: str
    type: Literal["text"] = "text"


@dataclass(frozen=True)
class ToolStartedMsg:
    """A tool call started."""

    turn: int
    call_id: str
    name: str
    summary: str
    input: dict[str, Any] = field(default_factory=dict)
    type: Literal["tool_started"] = "tool_started"


@dataclass(frozen=True)
class ToolInputMsg:
    """A new piece of a tool call's JSON input, as the model writes it (append it)."""

    turn: int
    call_id: str
    name: str
    partial: str
    type: Literal["tool_input"] = "tool_input"


@dataclass(frozen=True)
class ToolFinishedMsg:
    """A tool call ended."""

    turn: int
    call_id: str
    name: str
    summary: str
    is_error: bool
    duration_ms: int
    result: str
    input: dict[str, Any] = field(default_factory=dict)
    type: Literal["tool_finished"] = "tool_finished"


@dataclass(frozen=True)
class Approval:
    """A write tool waits for the person's decision."""

    request_id: str
    tool: str
    input: dict[str, Any]
    preview: str
    summary: str
    type: Literal["approval"] = "approval"


@dataclass(frozen=True)
class ApprovalClosed:
    """An approval was answered (here or elsewhere)."""

    request_id: str
    decision: Decision
    by: Literal["sidebar", "stdin", "timeout"]
    type: Literal["approval_closed"] = "approval_closed"


@dataclass(frozen=True)
class UsageMsg:
    """One model request's usage."""

    input_tokens: int
    output_tokens: int
    cost_usd: float
    context_tokens: int
    context_budget: int
    type: Literal["usage"] = "usage"


@dataclass(frozen=True)
class TurnDoneMsg:
    """The turn ended."""

    turn: int
    stop_reason: str
    text: str
    type: Literal["turn_done"] = "turn_done"


@dataclass(frozen=True)
class TurnErrorMsg:
    """The turn failed."""

    turn: int | None
    message: str
    error_type: str
    type: Literal["turn_error"] = "turn_error"


@dataclass(frozen=True)
class QueueMsg:
    """The whole queue."""

    items: tuple[Queued, ...]
    type: Literal["queue"] = "queue"


@dataclass(frozen=True)
class SessionsMsg:
    """The notebook's sessions."""

    items: tuple[SessionRow, ...]
    type: Literal["sessions"] = "sessions"


@dataclass(frozen=True)
class SessionChanged:
    """After resume, new or fork."""

    session: SessionSummary | None
    history: tuple[HistoryItem | ToolItem, ...]
    more_before: int | None
    type: Literal["session_changed"] = "session_changed"


@dataclass(frozen=True)
class SearchResults:
    """Archive search hits."""

    query: str
    hits: tuple[dict[str, Any], ...]
    type: Literal["search_results"] = "search_results"


@dataclass(frozen=True)
class NoticeMsg:
    """Something to tell the person."""

    message: str
    level: Literal["info", "warning", "error"] = "info"
    type: Literal["notice"] = "notice"


@dataclass(frozen=True)
class CellProposal:
    """A sidebar turn proposes a new code cell."""

    source: str
    type: Literal["cell"] = "cell"


Outbound: TypeAlias = (
    Welcome
    | History
    | TurnStartedMsg
    | TextMsg
    | ToolInputMsg
    | ToolStartedMsg
    | ToolFinishedMsg
    | Approval
    | ApprovalClosed
    | UsageMsg
    | TurnDoneMsg
    | TurnErrorMsg
    | Status
    | QueueMsg
    | SessionsMsg
    | SessionChanged
    | SearchResults
    | TaskView
    | NoticeMsg
    | CellProposal
)


def encode(message: Outbound, *, seq: int, kernel_session: str, turn: int | None) -> dict[str, Any]:
    """The JSON object sent on the comm (``turn`` is overridden by the message's own)."""
    body = dataclasses.asdict(message)
    return {"seq": seq, "kernel_session": kernel_session, "turn": turn, **body}
