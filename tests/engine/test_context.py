"""The context window: budget, tool pairs, cache-stable prefix, previews, images, refusal."""

from __future__ import annotations

import json
import random
from typing import TYPE_CHECKING

import pytest

from loom_jupyter.engine.context import ContextWindow, WindowConfig
from loom_jupyter.engine.prompts import SYSTEM_PROMPT
from loom_jupyter.engine.tokens import blocks_tokens, turn_tokens
from loom_jupyter.errors import ContextBudgetError
from loom_jupyter.messages import (
    ImageBlock,
    TextBlock,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
    Turn,
    block_to_api,
)
from loom_jupyter.models.base import ModelRequest
from loom_jupyter.models.estimate import IMAGE_TOKENS, estimate_request_tokens, estimate_tokens
from loom_jupyter.tools.registry import default_registry

from .checks import assert_valid_request

if TYPE_CHECKING:
    from collections.abc import Iterator


BUDGET = 12_000


class Transcript:
    """Builds archived-looking turns and feeds them to a window, requesting like the agent."""

    def __init__(self, window: ContextWindow, seed: int = 7) -> None:
        self.window = window
        self.rng = random.Random(seed)
        self.number = 0
        self.requests: list[ModelRequest] = []
        self.moves_at: list[int] = []

    def turn(self, role: str, content: str, blocks: tuple = (), **extra: object) -> Turn:
        self.number += 1
        turn = Turn(
            session_id="s",
            turn_number=self.number,
            role=role,  # type: ignore[arg-type]
            content=content,
            blocks=blocks,
            token_count=turn_tokens(content, blocks),
            **extra,  # type: ignore[arg-type]
        )
        self.window.append(turn)
        return turn

    def request(self) -> ModelRequest:
        request = self.window.build(model="m", state_text="<session_state>x</session_state>")
        self.requests.append(request)
        self.moves_at.append(self.window.moves)
        return request

    def exchange(self) -> None:
        words = " ".join(self.rng.choice(["plot", "sales", "region", "why"]) for _ in range(12))
        self.turn("user", f"Please look at {words}", (TextBlock(f"Please look at {words}"),))
        self.request()
        for step in range(self.rng.randint(0, 3)):
            calls = tuple(
                ToolUseBlock(f"t{self.number}_{i}", "run_python", {"code": "df.describe()"})
                for i in range(self.rng.randint(1, 2))
            )
            self.turn("assistant", "Checking.", (TextBlock("Checking."), *calls))
            for call in calls:
                self.tool_result(call, step)
            self.request()
        self.turn("assistant", "Here is the answer.", (TextBlock("Here is the answer."),))

    def tool_result(self, call: ToolUseBlock, step: int) -> None:
        size = self.rng.choice([200, 800, 3_000, 9_000])
        body = "".join(f"row {i}: {self.rng.random():.6f}\n" for i in range(size // 20))
        parts: tuple = (TextBlock(body),)
        if step == 2:
            parts = (*parts, ImageBlock("iVBORw0KGgo="))
        result = ToolResultBlock(call.id, parts)
        self.turn("tool", body, (result,), tool_name=call.name, tool_call_id=call.id)


def make_window(budget: int = BUDGET, **config: int) -> ContextWindow:
    tools = default_registry().specs()
    return ContextWindow(
        WindowConfig(budget_tokens=budget, **config), system=SYSTEM_PROMPT, tools=tools
    )


def wire(request: ModelRequest) -> list[str]:
    """Each message's wire JSON (what the prompt cache compares)."""
    return [json.dumps([block_to_api(b) for b in m.content]) for m in request.messages]


@pytest.fixture(scope="module")
def transcript() -> Transcript:
    transcript = Transcript(make_window())
    for _ in range(120):
        transcript.exchange()
    return transcript


def test_every_request_fits_and_never_splits_a_tool_pair(transcript: Transcript) -> None:
    assert len(transcript.requests) > 200
    assert transcript.window.moves >= 3  # the window really moved, many times
    for request in transcript.requests:
        assert_valid_request(request, budget=BUDGET)


def test_the_history_prefix_is_byte_identical_between_moves(transcript: Transcript) -> None:
    pairs = zip(transcript.requests, transcript.requests[1:], strict=False)
    stable = 0
    for (before, after), (m0, m1) in zip(
        pairs, zip(transcript.moves_at, transcript.moves_at[1:], strict=False), strict=False
    ):
        if m0 != m1 or before.history_breakpoint is None:
            continue
        cached = wire(before)[: before.history_breakpoint + 1]
        assert wire(after)[: len(cached)] == cached
        stable += 1
    assert stable > len(transcript.requests) * 0.8


def test_the_window_starts_on_a_user_turn_and_ephemeral_blocks_come_last(
    transcript: Transcript,
) -> None:
    for request in transcript.requests:
        final = request.messages[-1]
        assert isinstance(final.content[0], TextBlock)
        assert final.content[0].text.startswith("<session_state>")
        if request.history_breakpoint is not None:
            history = request.messages[: request.history_breakpoint + 1]
            assert all("<session_state>" not in m.text for m in history)
    assert transcript.window.turns[0].role == "user"


def results_by_call(request: ModelRequest) -> dict[str, ToolResultBlock]:
    return {
        b.tool_use_id: b
        for m in request.messages
        for b in m.content
        if isinstance(b, ToolResultBlock)
    }


def test_old_results_are_cut_stably_and_the_newest_never(transcript: Transcript) -> None:
    shown: dict[str, list[ToolResultBlock]] = {}
    for request in transcript.requests:
        for call_id, block in results_by_call(request).items():
            shown.setdefault(call_id, []).append(block)
        if len(request.messages) < 2:
            continue
        newest = request.messages[-2]  # the results the model has not seen yet
        for block in newest.content:
            if isinstance(block, ToolResultBlock):
                assert "cut from this old result" not in block.text
    cut = {k: v for k, v in shown.items() if any("from this old result" in b.text for b in v)}
    assert len(cut) > 20
    for blocks in cut.values():
        first = next(i for i, b in enumerate(blocks) if "from this old result" in b.text)
        assert set(blocks[first:]) == {blocks[first]}  # once cut, always cut the same way
        assert '"action": "range"' in blocks[first].text
        assert blocks_tokens((blocks[first],)) < blocks_tokens((blocks[0],))
    once, again = transcript.request(), transcript.request()
    assert wire(again) == wire(once)  # deterministic


def test_images_are_counted() -> None:
    image = ImageBlock("A" * 40)
    assert turn_tokens("", (TextBlock("a chart"), image)) >= IMAGE_TOKENS
    window = make_window(budget=IMAGE_TOKENS * 2)
    transcript = Transcript(window)
    transcript.turn("user", "look", (TextBlock("look"), image, image))
    with pytest.raises(ContextBudgetError):
        transcript.request()


def test_a_message_that_cannot_fit_is_refused_with_advice() -> None:
    transcript = Transcript(make_window(budget=5_000))
    transcript.turn("user", "x" * 40_000)
    with pytest.raises(ContextBudgetError, match="shorten it"):
        transcript.request()


STATE = "<session_state>x</session_state>"


def fixed_part(window: ContextWindow) -> tuple[int, int, int]:
    """The fixed part of every request, counted here independently of the window: the tool
    definitions, the system prompt, and the whole (with session state, hint reserve, framing)."""
    tools = estimate_request_tokens(
        ModelRequest(model="", system="", messages=(), tools=window.tools)
    )
    prompt = estimate_tokens(window.system)
    return tools, prompt, tools + prompt + estimate_tokens(STATE) + 200 + 4


def refusal(window: ContextWindow, text: str) -> str:
    blocks = (TextBlock(text),)
    window.append(
        Turn(
            session_id="s",
            turn_number=1,
            role="user",
            content=text,
            blocks=blocks,
            token_count=turn_tokens(text, blocks),
        )
    )
    with pytest.raises(ContextBudgetError) as caught:
        window.build(model="m", state_text=STATE)
    return str(caught.value)


def test_a_short_message_under_a_budget_the_fixed_part_exceeds_is_told_the_fixed_part() -> None:
    window = make_window(budget=3_000)
    tools, prompt, fixed = fixed_part(window)
    assert 3_000 < fixed < 6_000  # ~3.9k: 17 tools and the system prompt
    said = refusal(window, "please plot the sales by region and explain the drop")
    assert "Your message" not in said
    assert f"The fixed part of every request needs about {fixed:,} tokens on its own" in said
    assert "context budget of 3,000 tokens" in said
    assert f"{len(window.tools)} tool definitions ({tools:,})" in said
    assert f"the system prompt ({prompt:,})" in said
    assert "raise context_budget_tokens in loom.yaml (or LOOM_CONTEXT_BUDGET_TOKENS)" in said
    # Nothing to shrink here: no MCP tools, no project instructions.
    assert "mcp_servers" not in said
    assert "instructions" not in said


def test_the_fixed_part_names_the_mcp_tools_and_instructions_it_holds() -> None:
    mcp = ToolSpec("mcp__files__read", "Read a file. " * 60, {"type": "object"})
    instructions = "\n# AGENTS.md\n" + "Use polars, not pandas. " * 100
    window = ContextWindow(
        WindowConfig(budget_tokens=4_000),
        system=SYSTEM_PROMPT + instructions,
        tools=(*default_registry().specs(), mcp),
    )
    tools, _, fixed = fixed_part(window)
    mcp_tokens = estimate_request_tokens(
        ModelRequest(model="", system="", messages=(), tools=(mcp,))
    )
    said = refusal(window, "hi")
    assert f"about {fixed:,} tokens on its own" in said
    assert f"({tools:,}, {mcp_tokens:,} of it for 1 from MCP servers)" in said
    assert f"the system prompt ({estimate_tokens(SYSTEM_PROMPT):,})" in said
    assert f"project instructions ({estimate_tokens(instructions):,})" in said
    assert "use fewer mcp_servers in loom.yaml (%cowork mcp lists them)" in said
    assert "shorten the project instructions (%cowork instructions shows them" in said


def test_a_message_too_long_for_the_room_left_is_told_its_size_and_the_room() -> None:
    window = make_window(budget=5_000)
    _, _, fixed = fixed_part(window)
    text = "x" * 40_000
    said = refusal(window, text)
    message = estimate_tokens(text) + 4  # its block, framed as a message
    assert f"Your message alone is too long: about {message:,} tokens" in said
    assert f"with {5_000 - fixed:,} left for it after the fixed part of every request" in said
    assert f"({fixed:,} tokens:" in said
    assert "save the text to a file" in said
    assert "raise context_budget_tokens" not in said  # the message, not the budget, is the fix


def test_a_newest_message_too_long_after_earlier_turns_is_still_the_message() -> None:
    transcript = Transcript(make_window(budget=BUDGET))
    for _ in range(3):
        transcript.exchange()
    transcript.turn("user", "y" * 40_000, (TextBlock("y" * 40_000),))
    with pytest.raises(ContextBudgetError, match=r"Your message alone is too long: about 10,004"):
        transcript.request()


def test_an_exchange_that_outgrows_the_budget_is_refused_with_advice() -> None:
    transcript = Transcript(make_window(budget=6_000, keep_full_turns=2))
    transcript.turn("user", "go")
    for i in range(12):
        call = ToolUseBlock(f"c{i}", "run_python", {"code": "x"})
        transcript.turn("assistant", "", (call,))
        body = "y" * 1_500
        result = ToolResultBlock(call.id, (TextBlock(body),))
        transcript.turn("tool", body, (result,), tool_name="run_python", tool_call_id=call.id)
    with pytest.raises(ContextBudgetError, match="send a new message"):
        transcript.request()


def test_the_window_moves_in_blocks_down_to_about_two_thirds() -> None:
    window = make_window()
    transcript = Transcript(window)
    used: list[int] = []
    for _ in range(60):
        transcript.exchange()
        used.append(window.history_tokens)
    assert window.moves >= 2
    # Right after a move the history is well under the budget, not just under it.
    assert min(used[10:]) < BUDGET * 0.7


def dangling_turns() -> Iterator[Turn]:
    call = ToolUseBlock("c1", "run_python", {"code": "1"})
    yield Turn("s", 1, "user", "hi", (TextBlock("hi"),), token_count=5)
    yield Turn("s", 2, "assistant", "", (call,), token_count=9)
    yield Turn("s", 3, "user", "and now?", (TextBlock("and now?"),), token_count=5)


def test_a_call_without_a_result_is_closed_when_rendered() -> None:
    window = make_window()
    window.reset(list(dangling_turns()))
    request = window.build(model="m", state_text="state")
    assert_valid_request(request)
    assert "interrupted" in request.messages[2].text
