"""The sidebar's messages as typed values, and their JSON codec: the protocol written once.

These frozen dataclasses are the single source of the sidebar protocol
(docs/sidebar-protocol.md). :mod:`loom_jupyter.buildtools.contract` derives
the JSON Schema from them with pydantic; the labextension's build generates the
TypeScript types and validators from that schema, and the page's message tables
are generated too (a test fails when any generated file is stale). Class
docstrings and attribute docstrings are the documentation of each message.

Front -> kernel messages are parsed by :func:`parse_inbound` into frozen values
(a bad message raises :class:`ProtocolError`, never anything else). Kernel ->
front messages are frozen values with a ``type`` field; :func:`encode` turns
one into the JSON object the comm sends, stamped with the :class:`Envelope`.
Encoding is plain :func:`dataclasses.asdict` (the hot path: many ``text``
deltas a second); pydantic is imported only when a front's message is first
parsed, never at ``%load_ext``.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, TypeVar, get_args

# pydantic reads the fields' annotations at run time: these names must be importable here
from loom_jupyter.cells import CellChange, ChangeResult  # noqa: TC001
from loom_jupyter.errors import LoomError
from loom_jupyter.records import SubtaskStatus, TaskStatus  # noqa: TC001

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from pydantic import TypeAdapter, ValidationError

__all__ = [
    "MAX_MESSAGE_CHARS",
    "MAX_MESSAGE_ITEMS",
    "PROTOCOL_MAJOR",
    "PROTOCOL_MINOR",
    "PROTOCOL_VERSION",
    "REPLIES",
    "SINCE",
    "Approval",
    "ApprovalClosed",
    "ApprovalModeMsg",
    "ApprovalModeView",
    "Approve",
    "CancelQueued",
    "CellProposal",
    "Command",
    "CommandResult",
    "Complete",
    "CompletionItem",
    "Completions",
    "Decision",
    "EffortChoice",
    "Envelope",
    "Examples",
    "ExamplesMsg",
    "Focus",
    "Fork",
    "Hello",
    "History",
    "HistoryItem",
    "Inbound",
    "KeyMsg",
    "LoadMore",
    "ModelOptions",
    "New",
    "NotebookReply",
    "NotebookRequest",
    "NoticeMsg",
    "OptionsMsg",
    "Origin",
    "OriginStep",
    "Outbound",
    "OutsideCall",
    "OutsidePart",
    "OutsideResult",
    "PagesMsg",
    "Ping",
    "Pong",
    "ProtocolError",
    "QueueMsg",
    "Queued",
    "Request",
    "Resume",
    "RevertTurn",
    "Search",
    "SearchHitItem",
    "SearchResults",
    "Send",
    "SessionChanged",
    "SessionRow",
    "SessionSummary",
    "Sessions",
    "SessionsMsg",
    "SetKey",
    "SetNotebook",
    "SetOptions",
    "SlashCommand",
    "StateName",
    "Status",
    "Stop",
    "SubtaskItem",
    "TaskView",
    "TextMsg",
    "ThinkingMsg",
    "ToolFinishedMsg",
    "ToolInputMsg",
    "ToolItem",
    "ToolStartedMsg",
    "TrustDecisionMsg",
    "TrustMsg",
    "TrustView",
    "TurnDoneMsg",
    "TurnErrorMsg",
    "TurnStartedMsg",
    "UsageMsg",
    "Welcome",
    "WhereFrom",
    "added_in",
    "decode",
    "encode",
    "field_since",
    "message_since",
    "page_reads",
    "parse_inbound",
    "reply_to",
    "since",
    "version_notice",
]

PROTOCOL_VERSION = "1.4"
"""The protocol's version, `major.minor`. Within a major version a page and a kernel of any
minor versions chat: what a minor version adds is optional (:func:`since`) and each side
ignores fields it does not know. A page of another major gets a notice and nothing else.
Raise the minor for an addition, the major for anything else (docs/sidebar-protocol.md)."""
PROTOCOL_MAJOR, PROTOCOL_MINOR = (int(part) for part in PROTOCOL_VERSION.split("."))
SINCE = "since"
"""The field metadata key :func:`since` sets: the minor version that added the field."""
MAX_MESSAGE_CHARS = 400_000
"""A front's message holds at most this many characters of text (about 100k tokens:
more than a prompt can use); a longer one is refused with a notice, never archived."""
MAX_MESSAGE_ITEMS = 10_000
"""...and at most this many values (keys, list items, nested objects), at any depth."""
Decision = Literal["allow", "deny", "always"]
StateName = Literal["idle", "thinking", "waiting-approval", "queued", "waiting-cell"]
NoticeLevel = Literal["info", "warning", "error"]
MatchKind = Literal["phrase", "all_words", "some_words"]
EffortChoice = Literal["default", "low", "medium", "high", "xhigh", "max"]
"""An effort level, or `default`: none sent (the API's own default)."""
CompletionKind = Literal["command", "variable", "cell", "file"]


class ProtocolError(LoomError):
    """A message from the front that does not follow the protocol."""


def since(version: str, default: Any = None, *, factory: Callable[[], Any] | None = None) -> Any:
    """A field added in minor ``version`` (e.g. ``"1.1"``): optional by construction.

    It has a default (a message from an older side, which lacks it, still parses), and the
    schema does not require it (``buildtools/contract.py``), so an older kernel's message
    validates in a newer page. Every field without it is part of the 1.0 protocol.
    """
    meta = {SINCE: version}
    if factory is not None:
        return field(default_factory=factory, metadata=meta)
    return field(default=default, metadata=meta)


def field_since(cls: type, name: str) -> str | None:
    """The version that added field ``name`` of dataclass ``cls`` (None: 1.0)."""
    found: str | None = next(
        (f.metadata.get(SINCE) for f in dataclasses.fields(cls) if f.name == name), None
    )
    return found


_Message = TypeVar("_Message", bound=type)
_ADDED = "_loom_added_in"


def added_in(version: str) -> Callable[[_Message], _Message]:
    """A message type added in minor ``version`` (e.g. ``"1.3"``); every other type is 1.0.

    An older side does not know it: a page sends it only to a kernel whose `welcome` says
    ``version`` or later, and the kernel sends it only to a page whose `hello` does (an older
    page would not read it; a page of this release skips a type it does not know).
    ``buildtools/compat.py`` holds each frozen schema to these declarations.
    """

    def mark(cls: _Message) -> _Message:
        setattr(cls, _ADDED, version)
        return cls

    return mark


def message_since(cls: type) -> str:
    """The version that added message type ``cls`` (``"1.0"``: one of the first)."""
    return str(getattr(cls, _ADDED, f"{PROTOCOL_MAJOR}.0"))


# -- front -> kernel ----------------------------------------------------------


@dataclass(frozen=True)
class Hello:
    """The first message (the `comm_open` data); sent again as a `comm_msg` to re-sync.

    With `since_seq` and the `kernel_session` it saw, a front asks for a replay of what
    it missed. A `notebook_path` that differs from the kernel's notebook is followed like
    `set_notebook`. A `protocol` other than the kernel's is answered with an error
    `notice` naming both versions and what to install, and nothing else: every later
    message but a new `hello` gets the same notice.
    """

    notebook_path: str = ""
    """The notebook's path, relative to `server_root`."""
    since_seq: int | None = None
    """The last `seq` this front applied (`null` on a fresh page)."""
    kernel_session: str | None = None
    """The `kernel_session` of the events this front holds."""
    client: str = "lab"
    """`"lab"` or `"notebook7"`."""
    server_root: str = ""
    """The server's folder (the page's `serverRoot`); `""` when unknown."""
    protocol: int = 1
    """The front's major protocol version (a front that omits it speaks 1). An integer, as a
    1.0 kernel reads it: the minor version travels in `minor`."""
    documents: bool = False
    """The front holds the open notebook and applies `notebook_request`s to it."""
    minor: int = since("1.1", 0)
    """The front's minor protocol version: `protocol` 1 and `minor` 2 is 1.2 (a 1.0 front
    omits it)."""
    agent: str = since("1.1", "")
    """On the `loom-agent` comm (DESIGN §14): the outside agent's client (MCP `clientInfo`,
    e.g. `"Claude Code"`), answered with `pages`. A link's kind is fixed by the comm it
    opened: an agent link gets no `welcome` and no broadcasts, is never asked to approve,
    and sends only `hello` and `outside_call`; a page (`loom`) whose hello names an agent is
    refused (`""`: a page)."""
    on_screen: bool = since("1.3", False)
    """A page: this notebook is the one it shows (its current notebook, in a visible page).
    `focus` says when that changes; outside agents are pointed at the notebook on screen."""
    type: Literal["hello"] = "hello"

    @property
    def understood(self) -> bool:
        """Whether this kernel speaks the front's protocol (same major version, any minor)."""
        return self.protocol == PROTOCOL_MAJOR

    @property
    def version(self) -> str:
        """The front's version, `major.minor`."""
        return f"{self.protocol}.{self.minor}"


@dataclass(frozen=True)
class Send:
    """A person's message. Blank text is refused with a notice, never archived."""

    client_id: str
    """A uuid that makes a resend idempotent: a `client_id` the kernel has seen is not
    run again."""
    text: str
    type: Literal["send"] = "send"


@dataclass(frozen=True)
class CancelQueued:
    """Drop a queued (not yet started) message."""

    client_id: str
    type: Literal["cancel_queued"] = "cancel_queued"


@dataclass(frozen=True)
class Stop:
    """Interrupt the running turn, whichever front started it (cell or sidebar)."""

    type: Literal["stop"] = "stop"


@dataclass(frozen=True)
class Approve:
    """The answer to an `approval`."""

    request_id: str
    decision: Decision
    type: Literal["approve"] = "approve"


@dataclass(frozen=True)
class LoadMore:
    """Older history: archive turns numbered below `before_turn`."""

    before_turn: int
    request_id: str | None = since("1.1")
    """The page's id for this request; the reply echoes it as `reply_to`."""
    type: Literal["load_more"] = "load_more"


@dataclass(frozen=True)
class Sessions:
    """List the notebook's sessions."""

    request_id: str | None = since("1.1")
    """The page's id for this request; the reply echoes it as `reply_to`."""
    type: Literal["sessions"] = "sessions"


@dataclass(frozen=True)
class Resume:
    """Switch to a session."""

    session: str
    """Its id, a 4+ character id prefix, or its list number."""
    type: Literal["resume"] = "resume"


@dataclass(frozen=True)
class New:
    """Leave the session; the next message starts a new one."""

    type: Literal["new"] = "new"


@dataclass(frozen=True)
class Fork:
    """Copy the session (up to a turn) and switch to the copy."""

    at_turn: int | None = None
    """The last turn copied; `null` copies all."""
    type: Literal["fork"] = "fork"


@dataclass(frozen=True)
class Search:
    """Full-text search over every session of the notebook."""

    query: str
    request_id: str | None = since("1.1")
    """The page's id for this request; the reply echoes it as `reply_to`."""
    type: Literal["search"] = "search"


@dataclass(frozen=True)
class SetNotebook:
    """The notebook was renamed or saved under another name: its conversation follows it.

    Once no turn or delegation runs, the kernel copies the archive to the new name and
    reopens on it (same session; open sidebars stay connected and get a notice). The old
    archive is removed after a rename and kept after Save As; a new name that already has
    an archive, or a path that is no notebook file on the kernel's machine, changes nothing
    (the first with a warning notice).
    """

    path: str
    server_root: str = ""
    type: Literal["set_notebook"] = "set_notebook"


@dataclass(frozen=True)
class NotebookReply:
    """What the front did with a `notebook_request`."""

    request_id: str
    result: ChangeResult
    type: Literal["notebook_reply"] = "notebook_reply"


@dataclass(frozen=True)
class RevertTurn:
    """Undo one turn's notebook changes (when no changed cell was edited since)."""

    turn: int
    """The person's message (archive turn number) whose changes are undone."""
    type: Literal["revert_turn"] = "revert_turn"


@dataclass(frozen=True)
class Complete:
    """Ask for completions of an `@`-mention the person is typing in the message box.

    Answered with `completions`: variables of the live namespace, the notebook's cells
    (by id and first line) and files in the notebook's folder whose name starts with (or
    holds) `query`.
    """

    query: str
    """What follows the `@` so far (may be empty)."""
    kind: CompletionKind | Literal["all"] = "all"
    """Only this kind of object, or `"all"`."""
    request_id: str | None = since("1.1")
    """The page's id for this request; the reply echoes it as `reply_to`."""
    type: Literal["complete"] = "complete"


@dataclass(frozen=True)
class Command:
    """A sidebar slash command that the kernel answers without the model.

    One the page's slash command table marks as answered by the kernel (`cost`, `rebuild`,
    `help`...); answered with `command_result` (or an error `notice`).
    """

    name: str
    """The command without its slash, e.g. `"mcp"`."""
    args: str = ""
    """The rest of the line after the command's name."""
    request_id: str | None = since("1.1")
    """The page's id for this request; the reply echoes it as `reply_to`."""
    type: Literal["command"] = "command"


@dataclass(frozen=True)
class SetOptions:
    """Change the model options from the next turn on (`null` leaves one as it is); every
    front gets the new `options`."""

    thinking: Literal["off", "adaptive"] | None = None
    """Adaptive thinking, where the model takes it."""
    effort: EffortChoice | None = None
    type: Literal["set_options"] = "set_options"


@dataclass(frozen=True)
class WhereFrom:
    """Where did a variable come from? (The person hovers a variable mentioned in the chat.)

    Answered with `origin`, to this front only: the archived execution that last set it
    and the chain it depends on. A name that is no Python identifier (a dotted one is
    traced by its first part) or longer than 200 characters gets an error `notice`.
    """

    name: str
    """The variable, e.g. `"df"`."""
    request_id: str | None = since("1.1")
    """The page's id for this request; the reply echoes it as `reply_to`."""
    type: Literal["where_from"] = "where_from"


@dataclass(frozen=True)
class TrustDecisionMsg:
    """The person's answer on the trust card (DESIGN §12): `trust` the notebook's folder as
    it asks now, or `deny` it (its extras stay off and the card stops opening by itself).
    Every front then gets `trust` and `approval_mode`."""

    decision: Literal["trust", "deny"]
    digest: str | None = since("1.2")
    """The `digest` of the card the person answered: the kernel records the decision only
    while the folder still hashes to it, else it opens the card again on what is there now
    (a 1.1 page, which sends none, is always asked again)."""
    with_approval: bool = since("1.2", False)
    """The card's `[data-loom="trust-approval"]` box: the folder's looser approval applies
    too. Unchecked, the folder is trusted and the person's approval mode stays."""
    type: Literal["trust_decision"] = "trust_decision"


@dataclass(frozen=True)
class SetKey:
    """The sidebar's key field (DESIGN §12, "The key"): store this Anthropic API key outside
    the notebook — the system keyring, else a file only the person can read in their Loom
    config folder — as `%cowork login` does. Every front then gets `key`; the key itself is
    never sent back, logged, archived or kept in the replay log."""

    key: str
    type: Literal["set_key"] = "set_key"


@added_in("1.1")
@dataclass(frozen=True)
class OutsideCall:
    """An outside agent's tool call (DESIGN §14), from an `agent` link: run `tool` with
    `input` through this kernel's host as the agent's own call would run (approval mode,
    folder trust, the floor, the archive). Answered with `outside_result` to that link only;
    every page sees the call as a tool card marked with the client's name."""

    request_id: str
    """The link's id for the call; the `outside_result` carries it back."""
    client: str
    """Who calls, from MCP's `clientInfo` (e.g. `"Claude Code"`)."""
    tool: str
    """One of Loom's tools: `run_python`, `inspect_variables`, `read_notebook`,
    `insert_cell`, `edit_cell`, `run_cell`, `conversation_recall`, `rebuild_variables`,
    `variable_provenance`."""
    input: dict[str, Any] = field(default_factory=dict)
    """The tool's input, as the agent's own tool takes it."""
    type: Literal["outside_call"] = "outside_call"


@added_in("1.3")
@dataclass(frozen=True)
class Focus:
    """The page's notebook came on screen (it became the current notebook, the page became
    visible or its window gained focus) or left it (protocol 1.3; a page sends it only to a
    kernel whose `welcome` says 1.3 or later). The kernel tells outside agents which notebook
    the person is looking at, and which one they looked at last."""

    on_screen: bool
    """Whether the notebook is on screen now."""
    type: Literal["focus"] = "focus"


@added_in("1.3")
@dataclass(frozen=True)
class Pong:
    """The answer to a `ping`, at once (protocol 1.3): this page is still there."""

    ping_id: str
    """The `ping`'s id."""
    on_screen: bool = False
    """Whether the notebook is on screen now (as `focus` says)."""
    type: Literal["pong"] = "pong"


@dataclass(frozen=True)
class Examples:
    """Ask for example prompts built from the live namespace (an empty conversation shows
    them); answered with `examples`, to this front only."""

    request_id: str | None = since("1.1")
    """The page's id for this request; the reply echoes it as `reply_to`."""
    type: Literal["examples"] = "examples"


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
    | NotebookReply
    | RevertTurn
    | SetOptions
    | Complete
    | Command
    | WhereFrom
    | TrustDecisionMsg
    | SetKey
    | Examples
    | OutsideCall
    | Focus
    | Pong
)
Request: TypeAlias = LoadMore | Sessions | Search | Complete | Command | WhereFrom | Examples
"""The front's messages answered by one reply to that front (`history`, `sessions`,
`search_results`, `completions`, `command_result`, `origin`, `examples`, or an error `notice`),
which echoes their `request_id` as `reply_to` (anywidget's way)."""


def reply_to(message: Inbound) -> str:
    """What a reply to ``message`` carries as ``reply_to``: its request id, ``""`` if none."""
    if isinstance(message, get_args(Request)):
        return message.request_id or ""
    return ""


# -- kernel -> front: values inside messages ------------------------------------


@dataclass(frozen=True)
class Envelope:
    """What every kernel -> front message carries beside its own fields.

    Broadcast events take the next `seq`; replies to one front carry the current `seq`
    without advancing it, and say so with `reply_to`.
    """

    seq: int
    kernel_session: str
    """A new value whenever the kernel (or the extension in it) restarts."""
    turn: int | None
    """The user-turn number the message belongs to, or `null`."""
    reply_to: str | None = since("1.1")
    """`null`: a broadcast event (numbered, kept for replay). A string: a reply to one front's
    message, not numbered: that message's `request_id`, or `""` when it had none (a `hello`,
    an error about any message). A 1.0 kernel omits it."""


@dataclass(frozen=True)
class SessionSummary:
    """The current session, as the front's header shows it."""

    id: str
    title: str
    prompts: int
    """The person's messages."""
    turns: int
    """Every archived row."""
    model: str
    approval: str
    last_active: str


@dataclass(frozen=True)
class HistoryItem:
    """A person's message or an assistant answer from the archive."""

    kind: Literal["user", "assistant"]
    turn: int
    """Its own archive turn number."""
    text: str
    thinking: str = ""
    """The thinking the answer came with, shown collapsed before it (empty: none)."""
    thinking_redacted: bool = False
    """Part of that thinking was encrypted by the API (nothing to show)."""


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
    outside: str = since("1.1", "")
    """The outside agent that made this call (`"Claude Code"`); `""`: Loom's own agent."""
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
class SearchHitItem:
    """A turn that contains the words searched for."""

    session_id: str
    turn: int
    role: str
    snippet: str
    match: MatchKind
    """How it matched: the exact phrase, all the words, or some of them."""


@dataclass(frozen=True)
class SubtaskItem:
    """One delegated subtask's progress (a row of the task's table)."""

    id: str
    description: str
    status: SubtaskStatus
    attempt: int = 1
    elapsed_s: float = 0.0
    tokens: int = 0
    last_tool: str | None = None


@dataclass(frozen=True)
class TaskView:
    """Delegation progress: a full snapshot each time (replace by `task_id`)."""

    task_id: str
    goal: str
    status: TaskStatus
    subtasks: tuple[SubtaskItem, ...] = ()
    type: Literal["task"] = "task"


# -- kernel -> front: messages ----------------------------------------------------


@dataclass(frozen=True)
class Status:
    """What the coworker is doing.

    `waiting-cell`: the agent's code waits for the person's running cell; `queued`: a
    message waits behind a running turn.
    """

    state: StateName
    detail: str = ""
    type: Literal["status"] = "status"


@dataclass(frozen=True)
class ModelOptions:
    """Thinking and effort as set, and whether the current model takes them (when it does
    not, they are not sent)."""

    model: str
    thinking: Literal["off", "adaptive"]
    effort: EffortChoice
    thinking_supported: bool
    effort_levels: tuple[str, ...]
    """The effort levels the model takes (empty: none)."""


@dataclass(frozen=True)
class OptionsMsg:
    """The model options changed (`set_options`, `%cowork thinking`, `%cowork effort`)."""

    options: ModelOptions
    type: Literal["options"] = "options"


@dataclass(frozen=True)
class ApprovalModeView:
    """The approval mode in force and where that value came from (DESIGN §12): the footer
    shows it as `[data-loom="approval-mode"]` with `data-source`."""

    mode: Literal["ask", "auto", "read-only"]
    source: Literal["default", "user", "env", "project", "magic"]
    """`default`, the person's `user` config, a `LOOM_APPROVAL` `env` variable, the folder's
    `project` loom.yaml, or a `magic` the person typed (`%cowork approval`)."""
    managed: str = since("1.4", "")
    """The organisation's managed policy in force (DESIGN §16), as one line: `managed by
    your organisation (FILES): ` and each key in force; or why it cannot be used (a file that
    does not parse, named). `""`: no managed policy. Plain text: the footer marks the mode
    `data-managed` and shows this line in its tooltip."""
    overrides: tuple[str, ...] = since("1.4", ())
    """Each value the person or the folder set that the policy overrides, one line each,
    naming where they set it and the policy's file (`model: X (your loom.yaml) is not
    allowed; Y is used (…)`). Plain text."""
    by_policy: bool = since("1.4", False)
    """The policy decides the mode: it overrides a looser mode the person or the folder set,
    and `mode` is the policy's own (the footer says `(managed)` instead of the source)."""


@dataclass(frozen=True)
class ApprovalModeMsg:
    """The approval mode in force changed (`%cowork approval`, a trust decision)."""

    approval: ApprovalModeView
    type: Literal["approval_mode"] = "approval_mode"


@dataclass(frozen=True)
class TrustView:
    """What the notebook's folder asks for and the person's decision (the trust card)."""

    root: str
    """The project root's real path (the folder holding `.git`, else the notebook's)."""
    status: Literal["trusted", "untrusted", "changed", "denied", "not-needed"]
    """`changed`: trusted once, but its loom.yaml or an instruction file changed since."""
    asks: tuple[str, ...]
    """Everything it asks for, one item a line, nothing cut short: each MCP server's whole
    command line or URL and the approval it wants, approval and web settings, instruction
    files. Plain text."""
    digest: str = since("1.2", "")
    """The hash of exactly the files this view shows; a `trust_decision` sends it back."""
    loosens: tuple[str, ...] = since("1.2", ())
    """The lines of `asks` that would make Loom ask the person less (the folder's `approval`
    or a server's, looser than the person's mode): asked apart, unchecked by default."""
    with_approval: bool = since("1.2", False)
    """Whether the person let the folder loosen approvals (when it is trusted)."""
    note: str = since("1.2", "")
    """Why the card is shown again: the folder changed since the card was shown, or Loom
    checks folders differently since the person last trusted it. Plain text."""


@dataclass(frozen=True)
class TrustMsg:
    """The folder's trust (after a decision, or `/trust`). The card opens when `show` is
    true, or when the folder is `untrusted` or `changed`."""

    trust: TrustView
    show: bool = False
    type: Literal["trust"] = "trust"


@dataclass(frozen=True)
class Welcome:
    """The reply to a `hello` that cannot be answered by a replay, built from the archive.

    When a turn is running, `history` stops before that turn and the kernel follows the
    `welcome` with that turn's events so far (its text pieces merged into one `text`
    event carrying the last piece's `seq`).
    """

    session: SessionSummary | None
    history: tuple[HistoryItem | ToolItem, ...]
    more_before: int | None
    """The turn number to ask `load_more` for, or `null` when nothing is older."""
    busy: bool
    state: Status
    queue: tuple[Queued, ...]
    subshells: bool
    """Whether the comm rides a kernel subshell (answers while a cell runs)."""
    tasks: tuple[TaskView, ...]
    options: ModelOptions | None = None
    """Thinking and effort (`null` before the session is open)."""
    approval: ApprovalModeView | None = None
    """The approval mode in force and its source (the footer)."""
    trust: TrustView | None = None
    """The folder's trust; the card opens on `untrusted` or `changed`."""
    has_key: bool = True
    """Whether requests have an API key (the environment, or one `%cowork login` or the key
    field saved; always true for Bedrock and Vertex). False: the key field shows."""
    protocol: str = since("1.1", "1.0")
    """The kernel's protocol version, `major.minor` (a 1.0 kernel omits it)."""
    commands: tuple[SlashCommand, ...] = since("1.1", ())
    """The slash commands this kernel offers, in the order the front lists them (protocol
    1.1; a page completes from them, so it shows what this kernel can do)."""
    kernel_process: str = since("1.3", "")
    """Names the kernel's process (the same across an extension reload, new after a kernel
    restart): a page says "kernel restarted" only when it changes. `""`: not said."""
    usage: UsageMsg | None = since("1.3", None)  # noqa: RUF009 (a field(): frozen, None)
    """The session's usage as the footer shows it after its last request (`null`: none yet),
    so a page opened later shows the cost before the next turn."""
    type: Literal["welcome"] = "welcome"


@dataclass(frozen=True)
class History:
    """A page of older history (the reply to `load_more`)."""

    items: tuple[HistoryItem | ToolItem, ...]
    more_before: int | None
    type: Literal["history"] = "history"


@dataclass(frozen=True)
class TurnStartedMsg:
    """A turn began, from a cell or the sidebar."""

    turn: int
    """The archive turn number of the person's message."""
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
class ThinkingMsg:
    """A piece of the model's thinking (shown collapsed, before the answer it leads to)."""

    turn: int
    delta: str
    redacted: bool = False
    """An encrypted thinking block came (nothing to show)."""
    type: Literal["thinking"] = "thinking"


@dataclass(frozen=True)
class ToolStartedMsg:
    """A tool call started."""

    turn: int
    call_id: str
    name: str
    summary: str
    input: dict[str, Any] = field(default_factory=dict)
    """The call's input, read from the archived assistant turn."""
    outside: str = since("1.1", "")
    """The outside agent that made this call (`"Claude Code"`); `""`: Loom's own agent."""
    type: Literal["tool_started"] = "tool_started"


@dataclass(frozen=True)
class ToolInputMsg:
    """The next piece of a tool call's input JSON as the model writes it.

    The front appends the pieces; the first one makes the card, before `tool_started`.
    """

    turn: int
    call_id: str
    name: str
    partial: str
    outside: str = since("1.3", "")
    """The outside agent that makes this call (`"Claude Code"`), as `tool_started` says it:
    an outside call's card is made by its input before the person is asked; `""`: Loom's own
    agent."""
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
    """Capped at 4,000 characters."""
    input: dict[str, Any] = field(default_factory=dict)
    """From the archive."""
    outside: str = since("1.1", "")
    """The outside agent that made this call (`"Claude Code"`); `""`: Loom's own agent."""
    type: Literal["tool_finished"] = "tool_finished"


@dataclass(frozen=True)
class Approval:
    """A write tool waits for the person's decision."""

    request_id: str
    tool: str
    input: dict[str, Any]
    preview: str
    """The code, command or diff."""
    summary: str
    always: str | None = ""
    """What the Always button would allow from then on, e.g. "`git status` commands" (`""`:
    offered, unnamed); `null`: no Always is offered (a write to one of Loom's guard rails
    asks every time)."""
    question: Literal["run", "keep"] = since("1.3", "run")
    """`run`: may the call run? `keep`: the call changed files Loom protects without the
    person's yes, Loom put them back, and `preview` is the attempted change as a diff:
    `allow` keeps the change, `deny` leaves it undone."""
    type: Literal["approval"] = "approval"


@dataclass(frozen=True)
class ApprovalClosed:
    """An approval was answered, here or elsewhere (first answer wins)."""

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
    """The session's total of what is priced."""
    context_tokens: int
    context_budget: int
    unpriced: bool = False
    """Some of it ran on a model without a public price: show "price unknown", never $0."""
    type: Literal["usage"] = "usage"


@dataclass(frozen=True)
class TurnDoneMsg:
    """The turn ended."""

    turn: int
    stop_reason: str
    text: str
    """The final answer text."""
    type: Literal["turn_done"] = "turn_done"


@dataclass(frozen=True)
class TurnErrorMsg:
    """The turn failed."""

    turn: int | None
    message: str
    error_type: str
    client_id: str | None = None
    """The sidebar message that could not be sent (it never became a turn, e.g. no API key):
    the page that sent it puts its text back in the message box."""
    type: Literal["turn_error"] = "turn_error"


@dataclass(frozen=True)
class QueueMsg:
    """The whole queue, after every change."""

    items: tuple[Queued, ...]
    type: Literal["queue"] = "queue"


@dataclass(frozen=True)
class SessionsMsg:
    """The notebook's sessions (the reply to `sessions`)."""

    items: tuple[SessionRow, ...]
    type: Literal["sessions"] = "sessions"


@dataclass(frozen=True)
class SessionChanged:
    """The conversation changed after `resume`, `new` or `fork`."""

    session: SessionSummary | None
    history: tuple[HistoryItem | ToolItem, ...]
    more_before: int | None
    type: Literal["session_changed"] = "session_changed"


@dataclass(frozen=True)
class SearchResults:
    """Turns that contain the words searched for, best first (the reply to `search`)."""

    query: str
    hits: tuple[SearchHitItem, ...]
    type: Literal["search_results"] = "search_results"


@dataclass(frozen=True)
class NoticeMsg:
    """Something to tell the person."""

    message: str
    level: NoticeLevel = "info"
    type: Literal["notice"] = "notice"


@dataclass(frozen=True)
class CellProposal:
    """A sidebar turn's `insert_cell`: the front inserts a code cell below the active cell."""

    source: str
    type: Literal["cell"] = "cell"


@dataclass(frozen=True)
class NotebookRequest:
    """Read the live notebook or change it (sent to the one front that holds it, which
    answers with `notebook_reply`). Changes go to the notebook model, undoable with the
    notebook's own undo; a change the front cannot make exactly is not made at all."""

    request_id: str
    change: CellChange
    type: Literal["notebook_request"] = "notebook_request"


@dataclass(frozen=True)
class CompletionItem:
    """One thing the person may mention (or one slash command)."""

    kind: CompletionKind
    label: str
    """What is inserted after the `@` (a variable's name, `cell:ID`, a file's path)."""
    detail: str = ""
    """One line shown beside it: a variable's type and shape, a cell's first line."""


@dataclass(frozen=True)
class Completions:
    """The answer to `complete` (at most 50 items, best first)."""

    query: str
    items: tuple[CompletionItem, ...]
    type: Literal["completions"] = "completions"


@dataclass(frozen=True)
class SlashCommand:
    """A sidebar slash command: how it is typed and what it does. The kernel's `/help` and
    the front's completion show these words; `welcome` carries the kernel's table."""

    name: str
    """Typed after the slash, e.g. `rebuild`."""
    args: str
    """Its arguments as typed after the name (`""`: none), e.g. `NAME [NAME ...] [--yes]`."""
    description: str
    """What it does, in a few words."""
    front: bool = False
    """The front answers it itself; the others go to the kernel as a `command` message."""

    @property
    def usage(self) -> str:
        """The whole form: `/rebuild NAME [NAME ...] [--yes]`."""
        return f"/{self.name} {self.args}".rstrip()


@dataclass(frozen=True)
class CommandResult:
    """The answer to a `command`, shown in the chat as a small card.

    `text` is markdown, rendered sanitized like the model's text (never raw HTML).
    """

    name: str
    text: str
    ok: bool = True
    """False when the command could not do what was asked (the text says why)."""
    type: Literal["command_result"] = "command_result"


@dataclass(frozen=True)
class OriginStep:
    """One archived execution a variable depends on."""

    label: str
    """Where it ran: `"cell [2]"`, `"run_python (turn 3)"`."""
    first_line: str
    """Its code's first non-blank line, cut to 60 characters."""


@dataclass(frozen=True)
class Origin:
    """The answer to `where_from`: the execution that last set a variable, and its chain.

    Built from the archived executions (`%cowork provenance NAME` shows the same). Code is
    plain text: the front shows it as text, never as HTML.
    """

    name: str
    """The name asked about, as it was sent."""
    variable: str
    """The variable traced: `name`, or its first part when `name` is dotted."""
    found: bool
    """An archived execution sets it; when false, `why` says why not and the rest is empty."""
    setter: str = ""
    """Where it was last set (bound or changed in place): `"cell [7]"`."""
    when: str = ""
    """When that ran, e.g. `"2026-11-24 08:30:11 UTC"` (`"?"` when unknown)."""
    code: str = ""
    """The first lines (at most 6) of that execution's code."""
    more_lines: int = 0
    """How many more lines its code has."""
    steps: tuple[OriginStep, ...] = ()
    """What it depends on, oldest first, without the setter itself (at most 12)."""
    more_steps: int = 0
    """How many more executions it depends on than `steps` lists."""
    estimated_s: float = 0.0
    """The recorded durations of the whole chain (the setter too): a rebuild's estimate."""
    why: str = ""
    """When not found: why (e.g. `"no archived execution sets it"`)."""
    type: Literal["origin"] = "origin"


@dataclass(frozen=True)
class KeyMsg:
    """Whether requests have an API key, after `set_key`, `%cowork login` or
    `%cowork logout` (never the key itself). The key field shows while `has_key` is false
    or `problem` is set."""

    has_key: bool
    where: str = ""
    """Where the key in force is kept, in words (`""` when there is none)."""
    problem: str = ""
    """Why the key just sent was not saved (`""`: it was, or nothing was sent)."""
    type: Literal["key"] = "key"


@dataclass(frozen=True)
class ExamplesMsg:
    """Example prompts for an empty conversation, built from the names and types of the live
    namespace (the answer to `examples`). Plain text; a click puts one in the message box."""

    prompts: tuple[str, ...]
    type: Literal["examples"] = "examples"


@dataclass(frozen=True)
class OutsidePart:
    """One piece of an outside call's result: text, or an image (a figure)."""

    kind: Literal["text", "image"]
    text: str = ""
    """The text (a `text` part)."""
    data: str = ""
    """The image, base64-encoded (an `image` part)."""
    media_type: str = ""
    """The image's type, e.g. `image/png`."""


@added_in("1.1")
@dataclass(frozen=True)
class OutsideResult:
    """The result of an `outside_call`, to the link that sent it only: capped and redacted
    as the agent's own tool results are."""

    request_id: str
    is_error: bool
    content: tuple[OutsidePart, ...]
    type: Literal["outside_result"] = "outside_result"


@added_in("1.3")
@dataclass(frozen=True)
class Ping:
    """Is this page still there? (protocol 1.3; sent only to pages whose `hello` said 1.3 or
    later.) A browser tab that closes need not close its comm, so before an outside agent's
    call the kernel pings its pages: one that does not answer with `pong` within a few
    seconds is not asked to approve and does not hold the notebook until it speaks again."""

    ping_id: str
    type: Literal["ping"] = "ping"


@added_in("1.3")
@dataclass(frozen=True)
class PagesMsg:
    """What an outside agent's link hears in answer to its `hello` (protocol 1.3): the pages
    open on this notebook, checked just now, and whether the person is looking at it. The
    bridge attaches to the notebook on screen, then the one on screen last."""

    pages: int
    """How many pages with the Loom sidebar hold this notebook and answered just now."""
    on_screen: bool
    """Whether one of them shows this notebook now."""
    focused_ago: float | None = None
    """Seconds since a page last brought this notebook on screen (`null`: none did since
    Loom loaded in this kernel)."""
    type: Literal["pages"] = "pages"


Outbound: TypeAlias = (
    Welcome
    | History
    | TurnStartedMsg
    | TextMsg
    | ThinkingMsg
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
    | NotebookRequest
    | OptionsMsg
    | Completions
    | CommandResult
    | Origin
    | ApprovalModeMsg
    | TrustMsg
    | KeyMsg
    | ExamplesMsg
    | OutsideResult
    | Ping
    | PagesMsg
)

REPLIES: Mapping[type[Request], type[Outbound]] = {
    LoadMore: History,
    Sessions: SessionsMsg,
    Search: SearchResults,
    Complete: Completions,
    Command: CommandResult,
    WhereFrom: Origin,
    Examples: ExamplesMsg,
}
"""Each :data:`Request` and the message type that answers it (or an error `notice`); the
page's generated `REQUEST_REPLIES` is this table."""

_KERNEL_MINORS: dict[str, int] = {
    cls.type: int(message_since(cls).partition(".")[2]) for cls in get_args(Outbound)
}


def page_reads(kind: str, minor: int) -> bool:
    """Whether a page of this major version and minor version ``minor`` knows the kernel
    message type ``kind`` (one added in a later minor is not sent to it)."""
    return _KERNEL_MINORS.get(kind, 0) <= minor


# -- the codec --------------------------------------------------------------------

_INBOUND_FIELDS: dict[str, frozenset[str]] = {
    cls.type: frozenset(f.name for f in dataclasses.fields(cls)) for cls in get_args(Inbound)
}


def encode(
    message: Outbound,
    *,
    seq: int,
    kernel_session: str,
    turn: int | None,
    reply_to: str | None = None,
) -> dict[str, Any]:
    """The JSON object sent on the comm (``turn`` is overridden by the message's own);
    ``reply_to`` is None for a broadcast event, else the request id answered (``""``: none)."""
    body = dataclasses.asdict(message)
    envelope = {"seq": seq, "kernel_session": kernel_session, "turn": turn, "reply_to": reply_to}
    return {**envelope, **body}


def parse_inbound(data: object) -> Inbound:
    """The typed message in a comm's ``data``; :class:`ProtocolError` when malformed.

    Fields a message does not have are ignored, however deep; a ``hello``'s
    ``kernel_session`` that is not a string counts as none (it only asks for a replay).
    """
    if not isinstance(data, dict):
        raise ProtocolError("a message must be a JSON object with a 'type'")
    _check_size(data)
    kind = data.get("type")
    fields = _INBOUND_FIELDS.get(kind) if isinstance(kind, str) else None
    if fields is None:
        raise ProtocolError(f"unknown message type {kind!r}")
    own = {name: value for name, value in data.items() if name in fields}
    if kind == "hello" and not isinstance(own.get("kernel_session"), str):
        own.pop("kernel_session", None)
    message: Inbound = _validated(_adapters().inbound, own)
    return message


def decode(data: object) -> tuple[Envelope, Outbound]:
    """A kernel message back into its values (tests and Python clients of the comm)."""
    adapters = _adapters()
    return _validated(adapters.envelope, data), _validated(adapters.outbound, data)


def version_notice(front: str) -> str:
    """What a front speaking another major protocol version (``front``, its
    :attr:`Hello.version`) is told, and nothing else."""
    newer = "newer" if int(front.partition(".")[0]) > PROTOCOL_MAJOR else "older"
    return (
        f"This Loom sidebar speaks protocol {front}, {newer} than the kernel's "
        f"loom_jupyter (protocol {PROTOCOL_VERSION}). Install the same loom_jupyter version for "
        "JupyterLab and for this kernel's Python (pip install -U loom_jupyter in both), then "
        "restart the kernel and reload the page."
    )


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


@dataclass(frozen=True)
class _Adapters:
    inbound: TypeAdapter[Inbound]
    outbound: TypeAdapter[Outbound]
    envelope: TypeAdapter[Envelope]


@functools.cache
def _adapters() -> _Adapters:
    """pydantic validators of both directions, built on first use (pydantic loads ~50 ms)."""
    from typing import Annotated

    from pydantic import Field, TypeAdapter

    return _Adapters(
        TypeAdapter(Annotated[Inbound, Field(discriminator="type")]),
        TypeAdapter(Annotated[Outbound, Field(discriminator="type")]),
        TypeAdapter(Envelope),
    )


def _validated(adapter: TypeAdapter[Any], data: object) -> Any:
    """``data`` checked as JSON (strict: no "3" for 3, no true for 1) into its value."""
    from pydantic import ValidationError

    try:
        return adapter.validate_json(json.dumps(data), strict=True)
    except ValidationError as exc:
        raise ProtocolError(_problem(exc)) from None


def _problem(exc: ValidationError) -> str:
    """The first thing wrong, said the way the page's tables say it."""
    error = exc.errors(include_url=False)[0]
    kind, where = error["type"], [str(part) for part in error["loc"]]
    if kind == "union_tag_not_found" or (kind == "dict_type" and not where):
        return "a message must be a JSON object with a 'type'"
    if kind == "union_tag_invalid":
        return f"unknown message type {error['input'].get('type')!r}"
    if kind == "json_invalid":
        return f"the message cannot be read ({error['msg'].lower()})"
    name = ".".join(where[1:]) or "message"
    return f"'{name}': {error['msg'][0].lower()}{error['msg'][1:]}"
