"""The tool-use loop: model <-> tools, as a stream of typed events. Persists nothing.

One turn::

    request -> stream the model -> assistant message -> tools (approval first) -> results
            -> again while the stop reason is ``tool_use`` or ``pause_turn``

Besides the public events of :mod:`loom_jupyter.engine.events` (text, tool started,
approval needed, notices) the loop yields record events (:class:`ModelCallDone`,
:class:`ModelCallFailed`, :class:`ToolCallDone`, :class:`LoopEnded`,
:class:`LoopFailed`). The conversation archives each one before it asks for
the next event, and the next request is built only after that (``request_for``
reads the window the conversation has just extended), so nothing is ever
ahead of the archive. A tool's failure, an unknown tool or malformed input is
an ``is_error`` result and the loop goes on.

The model's text leaves the loop redacted, as it streams and in the finished message
(``tools/stream_redact.py``, security review R9), so every front, the ``partial`` row and
the archive get the same clean text. Thinking is redacted as it streams; the finished
message keeps it verbatim, since it goes back to the API signed.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeAlias

from typing_extensions import assert_never

from loom_jupyter.engine.events import (
    ApprovalNeeded,
    Notice,
    TextDelta,
    ThinkingDelta,
    ToolDraft,
    ToolStarted,
    TurnEndReason,
)
from loom_jupyter.engine.gate import GateEvent, ToolCallDone, ToolGate
from loom_jupyter.errors import LoomError, ModelAPIError, ModelError, StreamInterruptedError
from loom_jupyter.messages import (
    RedactedThinkingBlock,
    ServerBlock,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    sources_markdown,
)
from loom_jupyter.models import base as model_events
from loom_jupyter.tools.base import ToolOutput
from loom_jupyter.tools.stream_redact import StreamRedactor, answer_secrets, redact_blocks

if TYPE_CHECKING:
    from loom_jupyter.messages import Usage
    from loom_jupyter.models.base import Model, ModelRequest, StopReason
    from loom_jupyter.settings import Settings
    from loom_jupyter.tools.approval import ApprovalPolicy
    from loom_jupyter.tools.base import ToolContext
    from loom_jupyter.tools.registry import ToolRegistry

__all__ = [
    "AgentEvent",
    "AgentLoop",
    "LoopEnded",
    "LoopFailed",
    "ModelCallDone",
    "ModelCallFailed",
    "StepEvent",
    "ToolCallDone",
]

_CONTINUE: frozenset[str] = frozenset({"tool_use", "pause_turn"})


@dataclass(frozen=True)
class ModelCallDone:
    """A model request finished with a whole assistant message."""

    blocks: tuple[
        TextBlock | ToolUseBlock | ThinkingBlock | RedactedThinkingBlock | ServerBlock, ...
    ]
    stop_reason: StopReason
    usage: Usage
    model: str
    latency_ms: float
    kind: Literal["model_call_done"] = "model_call_done"


@dataclass(frozen=True)
class ModelCallFailed:
    """A model request failed; ``partial_text`` streamed before it did."""

    error: ModelError
    partial_text: str
    model: str
    latency_ms: float
    kind: Literal["model_call_failed"] = "model_call_failed"


@dataclass(frozen=True)
class LoopEnded:
    """The turn is over; ``message`` explains any reason but a normal end."""

    reason: TurnEndReason
    message: str = ""
    kind: Literal["loop_ended"] = "loop_ended"


@dataclass(frozen=True)
class LoopFailed:
    """The turn cannot go on (model failure, budget); ``error`` says what to do."""

    error: LoomError
    kind: Literal["loop_failed"] = "loop_failed"


StepEvent: TypeAlias = (
    TextDelta
    | ThinkingDelta
    | ToolDraft
    | ToolStarted
    | ApprovalNeeded
    | Notice
    | ModelCallDone
    | ModelCallFailed
    | ToolCallDone
)
"""The events of a turn's steps; the session archives or passes each on."""
AgentEvent: TypeAlias = StepEvent | LoopEnded | LoopFailed
"""Everything the loop yields: its steps, then exactly one end."""
RequestSource: TypeAlias = Callable[[], "ModelRequest | Awaitable[ModelRequest]"]
"""Builds each request (awaited when it reads something first: the kernel's facts)."""


@dataclass(kw_only=True)
class AgentLoop:
    """Runs one turn of the tool-use loop against ``model`` and ``registry``."""

    model: Model
    registry: ToolRegistry
    policy: ApprovalPolicy
    settings: Settings

    async def run(
        self, request_for: RequestSource, ctx: ToolContext
    ) -> AsyncGenerator[AgentEvent, None]:
        """Yield the turn's events; ``request_for`` builds each request from the current window."""
        for _ in range(self.settings.max_iterations):
            try:
                built = request_for()
                request = await built if inspect.isawaitable(built) else built
            except LoomError as error:
                yield LoopFailed(error)
                return
            done: ModelCallDone | None = None
            async for event in self._call_model(request):
                if isinstance(event, ModelCallDone):
                    done = event
                yield event
            if done is None:
                return
            calls = [b for b in done.blocks if isinstance(b, ToolUseBlock)]
            if done.stop_reason not in _CONTINUE:
                for call in calls:
                    yield ToolCallDone(call, ToolOutput.error(_NOT_RUN.format(done.stop_reason)))
                yield LoopEnded(
                    _end_reason(done.stop_reason), _stop_message(done, request.max_tokens)
                )
                return
            for index, call in enumerate(calls):
                halt = ""
                async for tool_event in self._run_tool(call, ctx):
                    if isinstance(tool_event, ToolCallDone):
                        halt = tool_event.halt
                    yield tool_event
                if halt:
                    for rest in calls[index + 1 :]:
                        yield ToolCallDone(rest, ToolOutput.error(_HALTED))
                    yield LoopEnded("protected_change", halt)
                    return
        yield LoopEnded("iteration_limit", _iteration_message(self.settings.max_iterations))

    # -- the model ----------------------------------------------------------

    async def _call_model(self, request: ModelRequest) -> AsyncIterator[AgentEvent]:
        """Stream one request. Retrying is the model layer's job; its notices are relayed.

        The answer and the thinking reach fronts and the archive redacted (security review
        R9): one :class:`StreamRedactor` each holds back a tail that may begin a secret, and
        is flushed where a block ends (another block starts, or the message is done)."""
        secrets = answer_secrets(self.settings)
        shown = _Shown(secrets)
        drafting: dict[str, str] = {}  # tool call id -> name, while its input streams
        started = time.monotonic()
        try:
            stream = self.model.stream(request)
            try:
                async for event in stream:
                    match event:
                        case model_events.TextChunk():
                            for delta in shown.text(event.text):
                                yield delta
                        case model_events.ThinkingChunk():
                            for delta in shown.thought(event.text, redacted=event.redacted):
                                yield delta
                        case model_events.RetryNotice():
                            yield Notice(_retry_line(event), "warning")
                        case model_events.MessageDone():
                            # cited web pages, as a compact list after the text
                            for delta in shown.end(sources_markdown(event.content)):
                                yield delta
                            yield _done(event, request, _ms(started), secrets)
                            return
                        case model_events.ToolUseStarted():
                            for delta in shown.end():
                                yield delta
                            drafting[event.id] = event.name
                        case model_events.ToolInputDelta():
                            name = drafting.get(event.id, "")
                            yield ToolDraft(event.id, name, event.partial_json)
                        case model_events.ToolUseReady() | model_events.UsageUpdate():
                            pass  # the finished message carries the calls and the usage
                        case _:
                            assert_never(event)
            finally:
                await _close(stream)  # releases the connection, also when cancelled
            raise StreamInterruptedError(
                "The model's answer stream ended without finishing; send the message again."
            )
        except ModelError as error:
            for delta in shown.end():
                yield delta
            yield ModelCallFailed(error, shown.answer, request.model, _ms(started))
            yield LoopFailed(error)
        except Exception as exc:  # a model client's bug must end the turn cleanly, not escape
            failure = ModelAPIError(
                f"The model client failed unexpectedly ({type(exc).__name__}: {exc}). "
                "The conversation so far is archived; send the message again."
            )
            for delta in shown.end():
                yield delta
            yield ModelCallFailed(failure, shown.answer, request.model, _ms(started))
            yield LoopFailed(failure)

    # -- tools ----------------------------------------------------------------

    async def _run_tool(self, call: ToolUseBlock, ctx: ToolContext) -> AsyncIterator[GateEvent]:
        async for event in ToolGate(registry=self.registry, policy=self.policy).run(call, ctx):
            yield event


class _Shown:
    """What fronts and the archive get of one model call's text and thinking: redacted as it
    streams, and the answer shown so far (a failed call's partial answer)."""

    def __init__(self, secrets: tuple[str, ...]) -> None:
        self._answer, self._thinking = StreamRedactor(secrets), StreamRedactor(secrets)
        self._pieces: list[str] = []

    @property
    def answer(self) -> str:
        return "".join(self._pieces)

    def text(self, piece: str) -> Iterator[TextDelta | ThinkingDelta]:
        yield from self._thought_ended()
        yield from self._said(self._answer.feed(piece))

    def thought(self, piece: str, *, redacted: bool) -> Iterator[TextDelta | ThinkingDelta]:
        yield from self._said(self._answer.flush())
        shown = self._thinking.feed(piece)
        if shown or redacted:
            yield ThinkingDelta(shown, redacted)

    def end(self, tail: str = "") -> Iterator[TextDelta | ThinkingDelta]:
        """A block ended (a tool call or the message's end); ``tail`` follows the text."""
        yield from self._thought_ended()
        yield from self._said(self._answer.feed(tail) + self._answer.flush())

    def _thought_ended(self) -> Iterator[ThinkingDelta]:
        rest = self._thinking.flush()
        if rest:
            yield ThinkingDelta(rest)

    def _said(self, shown: str) -> Iterator[TextDelta]:
        if shown:
            self._pieces.append(shown)
            yield TextDelta(shown)


_HALTED = (
    "Not run: the turn stopped before this call, because an earlier call changed files Loom "
    "protects (see its result)."
)
_NOT_RUN = (
    "Not run: the answer stopped ({}) before this tool call was complete, so its input may be "
    "cut off. Call it again if it is still needed."
)


def _done(
    event: model_events.MessageDone, request: ModelRequest, ms: float, secrets: tuple[str, ...]
) -> ModelCallDone:
    blocks = redact_blocks(event.content, secrets)  # as it was shown
    return ModelCallDone(blocks, event.stop_reason, event.usage, event.model or request.model, ms)


_END_REASONS: dict[StopReason, TurnEndReason] = {
    "end_turn": "end_turn",
    "stop_sequence": "stop_sequence",
    "max_tokens": "max_tokens",
    "refusal": "refusal",
    "model_context_window_exceeded": "model_context_window_exceeded",
}


def _end_reason(stop: StopReason) -> TurnEndReason:
    return _END_REASONS.get(stop, "end_turn")


async def _close(stream: AsyncIterator[model_events.ModelEvent]) -> None:
    close = getattr(stream, "aclose", None)
    if close is not None:
        await close()


def _stop_message(done: ModelCallDone, max_tokens: int) -> str:
    if done.stop_reason == "max_tokens":
        return (
            f"The answer hit the output limit (max_tokens={max_tokens:,}: max_output_tokens, "
            "or the model's own limit) and was cut off. Ask me to continue, or raise "
            "max_output_tokens in loom.yaml."
        )
    if done.stop_reason == "refusal":
        return "The model declined to answer this request. Rephrase it, or ask something else."
    if done.stop_reason == "model_context_window_exceeded":
        return (
            "The model's context window filled up while answering; the answer so far is "
            "archived. Send a new message to continue, or lower context_budget_tokens in loom.yaml."
        )
    return ""


def _iteration_message(limit: int) -> str:
    return (
        f"Stopped after {limit} model calls in one turn (max_iterations={limit}), to end a "
        "possibly runaway loop. Everything so far is archived: send a message to continue, or "
        "raise max_iterations in loom.yaml."
    )


def _retry_line(notice: model_events.RetryNotice) -> str:
    return (
        f"{notice.reason} Retrying in {notice.wait_seconds:.1f} s "
        f"(attempt {notice.attempt} of {notice.max_attempts})."
    )


def _ms(started: float) -> float:
    return (time.monotonic() - started) * 1000.0
