"""The context window: a token-budgeted, cache-aware view of the archive.

Request layout (so the cacheable prefix stays byte-identical across turns)::

    tools + static system prompt            <- breakpoint, 1 h TTL (ModelRequest.cache_prefix)
      + project instructions                   (the same text while the files are unchanged)
    history: whole turns, oldest first      <- breakpoint on the last history message,
                                               5 min or 1 h by the session's rhythm
                                               (engine/cache_policy.py), plus one at the
                                               last request's breakpoint when more than
                                               LOOKBACK_BLOCKS blocks came since
    one final user message, never cached:  session state, recall hint, the new user message

The window keeps its turns in memory and only ever appends new turns or drops
old ones from the front, so a request costs the same whether the archive holds
a hundred turns or a hundred thousand. It moves in blocks: only when a request
would exceed the budget does it (1) cut older tool results to a head+tail
preview naming the archive turn, then (2) drop whole exchanges from the front
until about 65% of the budget is used. Between those moves the history is
rendered byte for byte the same, so the prompt cache keeps hitting.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias

from typing_extensions import assert_never

from loom_jupyter.engine.hints import RecallHint, recall_hint
from loom_jupyter.engine.history_cache import LOOKBACK_BLOCKS, HistoryCache, WindowLayout
from loom_jupyter.engine.overflow import Overflow
from loom_jupyter.engine.prefix import RequestPrefix
from loom_jupyter.engine.tokens import MESSAGE_OVERHEAD, blocks_tokens, text_tokens
from loom_jupyter.errors import ContextBudgetError
from loom_jupyter.messages import (
    ContentBlock,
    ImageBlock,
    Message,
    MessageRole,
    RedactedThinkingBlock,
    ServerBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
    Turn,
)
from loom_jupyter.models.base import ModelRequest
from loom_jupyter.models.catalog import context_budget

if TYPE_CHECKING:
    from loom_jupyter.engine.cache_policy import CacheRhythm
    from loom_jupyter.models.base import CacheTtl
    from loom_jupyter.models.catalog import ModelInfo
    from loom_jupyter.readers import TurnReader
    from loom_jupyter.settings import EffortLevel, Settings

__all__ = [
    "INTERRUPTED_RESULT",
    "LOOKBACK_BLOCKS",
    "ContextWindow",
    "WindowConfig",
    "load_window_turns",
]

INTERRUPTED_RESULT = (
    "interrupted: this tool call did not finish (the turn was interrupted or the process "
    "stopped), so it has no result; its effects, if any, are unknown. Check before relying on it."
)
_BlocksOf: TypeAlias = Callable[[Turn], tuple[ContentBlock, ...]]
_HINT_RESERVE = 200  # tokens kept free for a recall hint when the budget is checked


@dataclass(frozen=True, kw_only=True)
class WindowConfig:
    """How the window is sized and trimmed."""

    budget_tokens: int
    refill_ratio: float = 0.65
    keep_full_turns: int = 8
    preview_min_tokens: int = 400
    preview_head_chars: int = 1_000
    preview_tail_chars: int = 500

    @classmethod
    def from_settings(cls, settings: Settings, model: ModelInfo | None = None) -> WindowConfig:
        """The budget is ``context_budget_tokens`` minus ``output_reserve_tokens``; with the
        model's limits known, its context window instead, unless loom.yaml (or ``LOOM_*``,
        or a keyword) sets ``context_budget_tokens``."""
        return cls(budget_tokens=context_budget(settings, model))


class ContextWindow:
    """The turns in view, and the requests built from them."""

    def __init__(
        self,
        config: WindowConfig,
        *,
        system: str,
        tools: Sequence[ToolSpec] = (),
        clock: Callable[[], float] = time.time,
        rhythm: CacheRhythm | None = None,
    ) -> None:
        self.config = config
        self.prefix = RequestPrefix(system, tuple(tools))
        self.cache = HistoryCache(rhythm, clock)
        self._turns: list[Turn] = []
        self._cost: dict[int, int] = {}
        self._rendered: dict[int, tuple[ContentBlock, ...]] = {}
        self._total = 0
        self.cut_through = 0
        self.moves = 0
        self.last_hint: RecallHint | None = None

    # -- contents ---------------------------------------------------------

    @property
    def turns(self) -> tuple[Turn, ...]:
        """The turns in view, oldest first."""
        return tuple(self._turns)

    @property
    def first_turn(self) -> int:
        """The turn number the window starts at (0 when empty)."""
        return self._turns[0].turn_number if self._turns else 0

    @property
    def complete(self) -> bool:
        """Whether the window holds the whole conversation (nothing only in the archive)."""
        return self.first_turn <= 1

    @property
    def history_tokens(self) -> int:
        """Estimated tokens of the turns in view, as rendered."""
        return self._total

    @property
    def system(self) -> str:
        """The system prompt of the next request."""
        return self.prefix.system

    @property
    def tools(self) -> tuple[ToolSpec, ...]:
        """The tool definitions of the next request."""
        return self.prefix.tools

    @property
    def rhythm(self) -> CacheRhythm:
        """The session's pauses, which the history's cache TTL is chosen from."""
        return self.cache.rhythm

    @property
    def history_ttl(self) -> CacheTtl:
        """The TTL of the history's breakpoint in this turn's requests."""
        return self.cache.ttl

    def reset(self, turns: Sequence[Turn], pauses: Sequence[float] = ()) -> None:
        """Replace the contents (on resume); the window starts at the first user turn given.

        ``pauses`` are the notebook's recent pauses between an answer and the next
        message (:meth:`Archive.recent_pauses`), oldest first: the rhythm the
        history's cache TTL starts from.
        """
        self._turns, self._cost, self._rendered, self._total = [], {}, {}, 0
        self.cut_through = 0
        self.cache.restart(pauses)
        start = next((i for i, t in enumerate(turns) if t.role == "user"), len(turns))
        for turn in turns[start:]:
            self.append(turn)

    def append(self, turn: Turn) -> None:
        """Add a newly archived turn at the end."""
        self._turns.append(turn)
        self._account(turn)

    def set_system(self, system: str) -> bool:
        """Use another system prompt from the next request on (the static prompt plus the
        project instructions); returns whether it changed. Unchanged text keeps the
        cached prefix byte for byte; a change starts a new one."""
        if system == self.system:
            return False
        self._set_prefix(RequestPrefix(system, self.tools))
        return True

    def set_tools(self, tools: Sequence[ToolSpec]) -> None:
        """Use other tool definitions from the next request on (MCP servers came or went):
        the cached prefix starts again."""
        self._set_prefix(RequestPrefix(self.system, tuple(tools)))

    def _set_prefix(self, prefix: RequestPrefix) -> None:
        self.prefix = prefix
        self.cache.prefix_changed()

    def dangling_tool_calls(self) -> list[ToolUseBlock]:
        """Tool calls of the last assistant turn that have no result turn after it."""
        for index in range(len(self._turns) - 1, -1, -1):
            turn = self._turns[index]
            if turn.role == "assistant":
                answered = {t.tool_call_id for t in self._turns[index + 1 :] if t.role == "tool"}
                calls = [b for b in turn.blocks if isinstance(b, ToolUseBlock)]
                return [b for b in calls if b.id not in answered]
            if turn.role == "user":
                return []
        return []

    # -- requests ---------------------------------------------------------

    def build(
        self,
        *,
        model: str,
        state_text: str,
        max_tokens: int = 8192,
        thinking: bool = False,
        effort: EffortLevel | None = None,
    ) -> ModelRequest:
        """The next request; moves the window first if it would not fit.

        With ``thinking`` the archived thinking blocks go back with their messages (the
        API needs them, signature and all, before the ``tool_use`` of the tool loop in
        progress); without it the wire leaves them out.

        Raises :class:`ContextBudgetError` when even the smallest window does not fit.
        """
        state_block = TextBlock(state_text)
        fixed = self.prefix.tokens + text_tokens(state_text) + _HINT_RESERVE + MESSAGE_OVERHEAD
        if fixed + self._total > self.config.budget_tokens:
            self._move(fixed)
        tail = self._turns[-1] if self._turns and self._turns[-1].role == "user" else None
        history = self._turns[:-1] if tail is not None else self._turns
        final: list[ContentBlock] = [state_block]
        self.last_hint = None
        if tail is not None:
            self.last_hint = recall_hint(tail.content, window_complete=self.complete)
            if self.last_hint is not None:
                final.append(TextBlock(self.last_hint.text(first_turn_in_view=self.first_turn)))
            final.extend(self._blocks(tail))
        self.cache.requested(tail.turn_number if tail is not None else None, self._total)
        messages = _render(history, self._blocks)
        paused = _paused_answer(history, messages) if tail is None else None
        if paused is not None:
            # A paused answer (stop reason pause_turn: a server tool still working) is
            # continued by sending it back exactly as it came, as the last message, with
            # the per-turn tail before it as in the request that paused.
            messages = messages[:-1]
        breakpoint_index = len(messages) - 1 if messages else None
        return ModelRequest(
            model=model,
            system=self.system,
            messages=(*messages, Message("user", tuple(final)), *_one(paused)),
            tools=self.tools,
            max_tokens=max_tokens,
            cache_prefix=True,
            history_breakpoint=breakpoint_index,
            extra_breakpoints=self.cache.lookback(
                messages, WindowLayout(self.first_turn, self.cut_through)
            ),
            prefix_ttl="1h",
            history_ttl=self.cache.ttl,
            thinking=thinking,
            effort=effort,
        )

    # -- moving the window ------------------------------------------------

    def _move(self, fixed: int) -> None:
        self.moves += 1
        keep = self.config.keep_full_turns
        if len(self._turns) > keep:
            self._cut_through(self._turns[-keep - 1].turn_number)
        self._drop_exchanges(fixed, int(self.config.budget_tokens * self.config.refill_ratio))
        if fixed + self._total > self.config.budget_tokens:
            # Last resort within one long exchange: shorten every result the model has
            # already seen, keeping only the newest step's results whole.
            calls = [t.turn_number for t in self._turns if t.role == "assistant"]
            self._cut_through(max(calls, default=0))
        if fixed + self._total > self.config.budget_tokens:
            raise ContextBudgetError(self._overflow(fixed).explain())

    def _drop_exchanges(self, fixed: int, target: int) -> None:
        """Drop whole exchanges from the front (never the newest) until ``target`` is met."""
        current = max((i for i, t in enumerate(self._turns) if t.role == "user"), default=0)
        while fixed + self._total > target and current > 0:
            step = next(i for i in range(1, current + 1) if self._turns[i].role == "user")
            for turn in self._turns[:step]:
                self._forget(turn)
            del self._turns[:step]
            current -= step

    def _cut_through(self, turn_number: int) -> None:
        """Show tool results up to ``turn_number`` as previews from now on (never undone)."""
        if turn_number <= self.cut_through:
            return
        old, self.cut_through = self.cut_through, turn_number
        for turn in self._turns:
            if turn.role == "tool" and old < turn.turn_number <= turn_number:
                self._forget(turn)
                self._account(turn)

    def _overflow(self, fixed: int) -> Overflow:
        """What does not fit after the window moved as far as it can."""
        return Overflow(
            budget=self.config.budget_tokens,
            fixed=fixed,
            history=self._total,
            newest_message=self._newest_message_tokens(),
            only_turn=len(self._turns) == 1,
            prefix=self.prefix,
        )

    def _newest_message_tokens(self) -> int:
        """Tokens of the newest person's message in view (0 when there is none)."""
        for turn in reversed(self._turns):
            if turn.role == "user":
                return self._cost.get(turn.turn_number, 0)
        return 0

    # -- per-turn rendering (cached, deterministic) ------------------------

    def _account(self, turn: Turn) -> None:
        blocks = self._render_turn(turn)
        self._rendered[turn.turn_number] = blocks
        cost = blocks_tokens(blocks) + MESSAGE_OVERHEAD if blocks else 0
        self._cost[turn.turn_number] = cost
        self._total += cost

    def _forget(self, turn: Turn) -> None:
        self._total -= self._cost.pop(turn.turn_number, 0)
        self._rendered.pop(turn.turn_number, None)

    def _blocks(self, turn: Turn) -> tuple[ContentBlock, ...]:
        return self._rendered[turn.turn_number]

    def _render_turn(self, turn: Turn) -> tuple[ContentBlock, ...]:
        match turn.role:
            case "user" | "system":  # system notes (a crash, notebook activity) read as user text
                return _user_blocks(turn)
            case "assistant":
                return _assistant_blocks(turn)
            case "tool":
                result = _result_block(turn)
                if (
                    turn.turn_number <= self.cut_through
                    and turn.token_count > self.config.preview_min_tokens
                ):
                    result = self._preview(result, turn.turn_number)
                return (result,)
            case _:
                assert_never(turn.role)

    def _preview(self, result: ToolResultBlock, turn_number: int) -> ToolResultBlock:
        text = result.text
        head, tail = self.config.preview_head_chars, self.config.preview_tail_chars
        images = sum(isinstance(b, ImageBlock) for b in result.content)
        if len(text) <= head + tail and not images:
            return result
        fetch = json.dumps({"action": "range", "start_turn": turn_number, "end_turn": turn_number})
        cut = max(len(text) - head - tail, 0)
        note = f"{images} image(s) and " if images else ""
        marker = (
            f"\n[... {note}{cut:,} characters cut from this old result; the full text is "
            f"archive turn {turn_number}: conversation_recall {fetch} ...]\n"
        )
        preview = text[:head] + marker + (text[-tail:] if cut else "")
        return ToolResultBlock(result.tool_use_id, (TextBlock(preview),), result.is_error)


async def load_window_turns(archive: TurnReader, session_id: str, budget_tokens: int) -> list[Turn]:
    """The newest turns of a session that fit ``budget_tokens``, starting on a user turn.

    Reads backwards from the end of the session only as far as needed; when the
    newest exchange alone is larger than the budget it is returned whole (the
    window then shortens its old tool results).
    """
    turns = await archive.recent_turns(session_id, token_budget=budget_tokens)
    last = await archive.last_turn_number(session_id)
    if not turns and last:
        turns = await archive.get_turns(session_id, start=last, end=last)
    while turns and not any(t.role == "user" for t in turns) and turns[0].turn_number > 1:
        first = turns[0].turn_number
        older = await archive.get_turns(session_id, start=max(1, first - 50), end=first - 1)
        turns = [*older, *turns]
    return turns


# -- turns -> API messages -------------------------------------------------


def _render(turns: Sequence[Turn], blocks_of: _BlocksOf) -> list[Message]:
    """Turns as API messages: consecutive tool turns (and same-role turns) share a message.

    A tool call whose result is missing gets an ``interrupted`` result, and a
    result whose call is not in view is left out, so the messages are always valid.
    """
    messages: list[tuple[MessageRole, list[ContentBlock]]] = []
    pending: list[str] = []
    for turn in turns:
        blocks = blocks_of(turn)
        if turn.role == "tool":
            if not blocks or not isinstance(blocks[0], ToolResultBlock):
                continue
            if blocks[0].tool_use_id not in pending:
                continue
            pending.remove(blocks[0].tool_use_id)
            _add(messages, "user", blocks)
            continue
        _close_calls(messages, pending)
        if not blocks:
            continue
        role: MessageRole = "assistant" if turn.role == "assistant" else "user"
        _add(messages, role, blocks)
        pending = [b.id for b in blocks if isinstance(b, ToolUseBlock)]
    _close_calls(messages, pending)
    return [Message(role, tuple(content)) for role, content in messages]


def _close_calls(
    messages: list[tuple[MessageRole, list[ContentBlock]]], pending: list[str]
) -> None:
    for call_id in pending:
        _add(messages, "user", (ToolResultBlock(call_id, (TextBlock(INTERRUPTED_RESULT),), True),))
    pending.clear()


def _add(
    messages: list[tuple[MessageRole, list[ContentBlock]]],
    role: MessageRole,
    blocks: Sequence[ContentBlock],
) -> None:
    if messages and messages[-1][0] == role:
        messages[-1][1].extend(blocks)
    else:
        messages.append((role, list(blocks)))


def _user_blocks(turn: Turn) -> tuple[ContentBlock, ...]:
    blocks = tuple(
        b for b in turn.blocks if isinstance(b, TextBlock | ImageBlock) and _non_empty(b)
    )
    if blocks:
        return blocks
    return (TextBlock(turn.content),) if turn.content.strip() else ()


def _assistant_blocks(turn: Turn) -> tuple[ContentBlock, ...]:
    answer = [b for b in turn.blocks if isinstance(b, _ANSWER) and _non_empty(b)]
    if answer and turn.status == "complete":
        # Thinking goes back verbatim where it came, before the text and tool_use it led to
        # (a message of thinking alone, cut off while thinking, has nothing to lead).
        return tuple(b for b in turn.blocks if _thinking(b) or b in answer)
    blocks: list[ContentBlock] = list(answer)
    if not blocks and turn.content.strip():
        blocks = [TextBlock(turn.content)]
    if turn.status != "complete" and blocks:
        blocks.append(TextBlock(f"[this answer was {turn.status}: it stopped here]"))
    return tuple(blocks)


_ANSWER = (TextBlock, ToolUseBlock, ServerBlock)  # server tool blocks go back verbatim


def _thinking(block: ContentBlock) -> bool:
    return isinstance(block, ThinkingBlock | RedactedThinkingBlock)


def _paused_answer(history: Sequence[Turn], messages: Sequence[Message]) -> Message | None:
    """The last message, when the window ends on a complete assistant turn that calls no
    tool: an answer paused mid-turn (``pause_turn``), which the next request continues."""
    if not history or not messages or messages[-1].role != "assistant":
        return None
    last = history[-1]
    if last.role != "assistant" or last.status != "complete":
        return None
    if any(isinstance(b, ToolUseBlock) for b in messages[-1].content):
        return None
    return messages[-1]


def _one(message: Message | None) -> tuple[Message, ...]:
    return () if message is None else (message,)


def _result_block(turn: Turn) -> ToolResultBlock:
    for block in turn.blocks:
        if isinstance(block, ToolResultBlock):
            return block
    content = (TextBlock(turn.content or "(no output)"),)
    return ToolResultBlock(turn.tool_call_id or "", content, turn.is_error)


def _non_empty(block: ContentBlock) -> bool:
    return not isinstance(block, TextBlock) or bool(block.text.strip())
