"""ScriptedModel: a Model that answers from a script, for tests (yours and ours).

Give it the replies in order, or a function of the request; it streams them
as the real adapter would (text in several deltas, tool input as JSON pieces,
usage, then one ``MessageDone``) and records every request it received::

    from loom_jupyter.models.scripted import ScriptedModel, text, tool_call

    model = ScriptedModel([
        tool_call("run_python", {"code": "df.shape"}),   # first request
        text("The frame has 3 rows."),                   # second request
    ])
    # ... run your agent or tool loop with `model` ...
    assert model.requests[1].messages[-1].content[0].type == "tool_result"

Building replies:

- ``text("...")`` — one text block, ``end_turn``. A plain ``str`` in the
  script means the same.
- ``tool_call(name, input, id=...)`` — one tool call, ``tool_use``.
- ``reply("Let me look.", tool_call("read_file", {"path": "a.csv"}), ...)`` —
  several blocks in one message; ``stop_reason=`` and ``usage=`` override the
  defaults (``tool_use`` when a tool is called, else ``end_turn``; usage
  from :mod:`loom_jupyter.models.estimate`).
- ``fail(OverloadedError("..."), after_deltas=2)`` — stream two text deltas,
  then raise (a mid-stream failure); ``after_deltas=0`` fails at once.
- ``stall(after_deltas=1)`` — stream, then wait until cancelled (for testing
  interrupts).
- ``with_retry(text("..."), "overloaded (529)")`` — the reply, preceded by a
  :class:`~loom_jupyter.models.base.RetryNotice` (for testing how a front
  shows retries).

A function script is called with each :class:`ModelRequest` and returns a
reply (or an awaitable of one)::

    model = ScriptedModel(lambda request: text(f"you said {request.messages[-1].text}"))

When a list script runs out, the next request raises
:class:`ScriptExhaustedError` naming how many replies were used.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import re
from collections import deque
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, TypeAlias

from loom_jupyter.errors import ModelError
from loom_jupyter.messages import (
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    Usage,
)
from loom_jupyter.models.base import (
    MessageDone,
    ModelEvent,
    ModelRequest,
    RetryNotice,
    StopReason,
    TextChunk,
    ThinkingChunk,
    ToolInputDelta,
    ToolUseReady,
    ToolUseStarted,
    UsageUpdate,
)
from loom_jupyter.models.estimate import estimate_blocks_tokens, estimate_request_tokens

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable, Iterable

__all__ = [
    "Raise",
    "ReplyLike",
    "ScriptExhaustedError",
    "ScriptedModel",
    "ScriptedReply",
    "Stall",
    "fail",
    "reply",
    "stall",
    "text",
    "tool_call",
    "with_retry",
]

_PARTIAL_TEXT = "This answer starts streaming and then breaks off part way through."


@dataclass(frozen=True)
class Raise:
    """Raise ``error`` after streaming ``after_deltas`` text deltas."""

    error: ModelError
    after_deltas: int = 0


@dataclass(frozen=True)
class Stall:
    """Stop after ``after_deltas`` text deltas and wait until cancelled."""

    after_deltas: int = 0


_Block: TypeAlias = "TextBlock | ToolUseBlock | ThinkingBlock | RedactedThinkingBlock"


@dataclass(frozen=True, kw_only=True)
class ScriptedReply:
    """One scripted assistant message (or failure). Build with the helpers."""

    blocks: tuple[_Block, ...] = ()
    stop_reason: StopReason | None = None
    usage: Usage | None = None
    fault: Raise | Stall | None = None
    notices: tuple[RetryNotice, ...] = ()

    @property
    def resolved_stop_reason(self) -> StopReason:
        """The given stop reason, else ``tool_use`` if a tool is called, else ``end_turn``."""
        if self.stop_reason is not None:
            return self.stop_reason
        calls = any(isinstance(b, ToolUseBlock) for b in self.blocks)
        return "tool_use" if calls else "end_turn"


ReplyLike: TypeAlias = "ScriptedReply | str"
ScriptFunction: TypeAlias = "Callable[[ModelRequest], ReplyLike | Awaitable[ReplyLike]]"


class ScriptExhaustedError(ModelError):
    """A ScriptedModel was asked for more replies than its script holds."""


def text(
    content: str, *, stop_reason: StopReason | None = None, usage: Usage | None = None
) -> ScriptedReply:
    """A reply holding one text block."""
    return ScriptedReply(blocks=(TextBlock(content),), stop_reason=stop_reason, usage=usage)


def tool_call(name: str, input: dict[str, object] | None = None, *, id: str = "") -> ScriptedReply:
    """A reply calling tool ``name``; without ``id`` one like ``toolu_scripted_1`` is assigned."""
    return ScriptedReply(blocks=(ToolUseBlock(id, name, dict(input or {})),))


def reply(
    *parts: str | _Block | ScriptedReply,
    stop_reason: StopReason | None = None,
    usage: Usage | None = None,
) -> ScriptedReply:
    """A reply made of several blocks, in order (strings become text blocks)."""
    blocks: list[_Block] = []
    for part in parts:
        if isinstance(part, str):
            blocks.append(TextBlock(part))
        elif isinstance(part, ScriptedReply):
            blocks.extend(part.blocks)
        else:
            blocks.append(part)
    return ScriptedReply(blocks=tuple(blocks), stop_reason=stop_reason, usage=usage)


def fail(
    error: ModelError, *, after_deltas: int = 0, partial_text: str = _PARTIAL_TEXT
) -> ScriptedReply:
    """A reply that streams ``after_deltas`` deltas of ``partial_text``, then raises ``error``."""
    return ScriptedReply(blocks=(TextBlock(partial_text),), fault=Raise(error, after_deltas))


def with_retry(
    scripted: ReplyLike, reason: str = "overloaded (529)", *, times: int = 1
) -> ScriptedReply:
    """``scripted``, preceded by ``times`` retry notices (as the Anthropic adapter sends them)."""
    base = _as_reply(scripted)
    notices = tuple(RetryNotice(n, times, 0.0, reason) for n in range(1, times + 1))
    return replace(base, notices=base.notices + notices)


def stall(*, after_deltas: int = 0, partial_text: str = _PARTIAL_TEXT) -> ScriptedReply:
    """A reply that streams ``after_deltas`` deltas, then waits until the stream is cancelled."""
    return ScriptedReply(blocks=(TextBlock(partial_text),), fault=Stall(after_deltas))


@dataclass
class ScriptedModel:
    """A :class:`~loom_jupyter.models.base.Model` answering from ``script``.

    ``script`` is a list of replies (used in order) or a function of the
    request. ``requests`` holds every request received, in order.
    ``delay_seconds`` pauses before each streamed event (to watch streaming
    or interrupt it in a test).
    """

    script: Iterable[ReplyLike] | ScriptFunction = field(repr=False)
    model_name: str = "scripted"
    delay_seconds: float = 0.0
    requests: list[ModelRequest] = field(default_factory=list, repr=False)
    _queue: deque[ReplyLike] = field(default_factory=deque, init=False, repr=False)
    _function: ScriptFunction | None = field(default=None, init=False, repr=False)
    _tool_ids: int = field(default=0, init=False, repr=False)

    def __post_init__(self) -> None:
        if callable(self.script):
            self._function = self.script
        else:
            self._queue.extend(self.script)

    @property
    def name(self) -> str:
        """The model id (``"scripted"`` unless given)."""
        return self.model_name

    @property
    def remaining(self) -> int | None:
        """Replies left in a list script; ``None`` for a function script."""
        return None if self._function is not None else len(self._queue)

    def add(self, *replies: ReplyLike) -> None:
        """Append replies to a list script."""
        self._queue.extend(replies)

    async def count_tokens(self, request: ModelRequest) -> int:
        """The offline estimate of :func:`estimate_request_tokens`."""
        return estimate_request_tokens(request)

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Stream the next scripted reply to ``request``."""
        self.requests.append(request)
        scripted = self._with_tool_ids(await self._next_reply(request))
        input_tokens = estimate_request_tokens(request)
        for notice in scripted.notices:
            yield await self._paced(notice)
        yield await self._paced(UsageUpdate(Usage(input_tokens=input_tokens)))
        if scripted.fault is not None:
            async for event in self._faulty(scripted, scripted.fault):
                yield event
            return
        for block in scripted.blocks:
            for event in _block_events(block):
                yield await self._paced(event)
        usage = scripted.usage or Usage(input_tokens, estimate_blocks_tokens(scripted.blocks))
        yield await self._paced(UsageUpdate(usage))
        done = MessageDone(scripted.blocks, scripted.resolved_stop_reason, usage, self.model_name)
        yield await self._paced(done)

    async def _next_reply(self, request: ModelRequest) -> ScriptedReply:
        if self._function is not None:
            produced = self._function(request)
            value = await produced if inspect.isawaitable(produced) else produced
            return _as_reply(value)
        if not self._queue:
            raise ScriptExhaustedError(self._exhausted_message(request))
        return _as_reply(self._queue.popleft())

    def _exhausted_message(self, request: ModelRequest) -> str:
        used = len(self.requests) - 1
        last = request.messages[-1].text[:80] if request.messages else ""
        return (
            f"ScriptedModel ran out of replies: its script held {used} and this is request "
            f"{used + 1} (last message: {last!r}). "
            "Add replies to the script or with model.add(...)."
        )

    def _with_tool_ids(self, scripted: ScriptedReply) -> ScriptedReply:
        blocks: list[_Block] = []
        for block in scripted.blocks:
            if isinstance(block, ToolUseBlock) and not block.id:
                self._tool_ids += 1
                block = replace(block, id=f"toolu_scripted_{self._tool_ids}")
            blocks.append(block)
        return replace(scripted, blocks=tuple(blocks))

    async def _faulty(
        self, scripted: ScriptedReply, fault: Raise | Stall
    ) -> AsyncIterator[ModelEvent]:
        pieces = [
            p for b in scripted.blocks if isinstance(b, TextBlock) for p in _text_pieces(b.text)
        ]
        for piece in pieces[: fault.after_deltas]:
            yield await self._paced(TextChunk(piece))
        if isinstance(fault, Raise):
            raise fault.error
        await asyncio.Event().wait()  # until cancelled

    async def _paced(self, event: ModelEvent) -> ModelEvent:
        # Always yield to the loop, so a consumer can cancel between events.
        await asyncio.sleep(self.delay_seconds)
        return event


def _as_reply(value: ReplyLike) -> ScriptedReply:
    return text(value) if isinstance(value, str) else value


def _block_events(block: _Block) -> list[ModelEvent]:
    if isinstance(block, TextBlock):
        return [TextChunk(piece) for piece in _text_pieces(block.text)]
    if isinstance(block, ThinkingBlock):
        return [ThinkingChunk(piece) for piece in _text_pieces(block.thinking)]
    if isinstance(block, RedactedThinkingBlock):
        return [ThinkingChunk("", redacted=True)]
    events: list[ModelEvent] = [ToolUseStarted(block.id, block.name)]
    events.extend(ToolInputDelta(block.id, p) for p in _json_pieces(dict(block.input)))
    events.append(ToolUseReady(block))
    return events


def _text_pieces(content: str) -> list[str]:
    """One piece per word, with its trailing whitespace (leading whitespace kept too)."""
    return re.findall(r"\s*\S+\s*|\s+", content)


def _json_pieces(value: dict[str, object]) -> list[str]:
    encoded = json.dumps(value, ensure_ascii=False)
    size = max(1, -(-len(encoded) // 3))
    return [encoded[i : i + size] for i in range(0, len(encoded), size)]
