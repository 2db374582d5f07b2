"""Prompt caching by the session's rhythm: the cost model, TTL choice, lookback breakpoints."""

from __future__ import annotations

from typing import TYPE_CHECKING

from loom_jupyter.engine.cache_policy import MAX_GAPS, CacheRhythm, expected_turn_cost
from loom_jupyter.engine.context import LOOKBACK_BLOCKS, ContextWindow, WindowConfig
from loom_jupyter.engine.tokens import turn_tokens
from loom_jupyter.messages import TextBlock, ToolResultBlock, ToolUseBlock, Turn
from loom_jupyter.models.wire import request_params
from loom_jupyter.testing.fake_script import cache_control_problem

from .checks import assert_valid_request

if TYPE_CHECKING:
    from loom_jupyter.messages import ContentBlock
    from loom_jupyter.models.base import ModelRequest

MINUTE = 60.0


class Clock:
    """Seconds that move only when a test says so."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


class Session:
    """Turns fed to a window the way the session does, with a clock between turns."""

    def __init__(self) -> None:
        self.clock = Clock()
        self.window = ContextWindow(
            WindowConfig(budget_tokens=200_000), system="static system", clock=self.clock
        )
        self.number = 0

    def add(
        self, role: str, text: str, blocks: tuple[ContentBlock, ...] = (), **extra: object
    ) -> None:
        self.number += 1
        blocks = blocks or (TextBlock(text),)
        self.window.append(
            Turn(
                "s",
                self.number,
                role,  # type: ignore[arg-type]
                text,
                blocks,
                token_count=turn_tokens(text, blocks),
                **extra,  # type: ignore[arg-type]
            )
        )

    def exchange(
        self, after_minutes: float, *, calls: int = 0, size: int = 4000
    ) -> list[ModelRequest]:
        """The person writes after a pause; the model runs ``calls`` tools at once, then answers."""
        self.clock.now += after_minutes * MINUTE
        self.add("user", "look at the data " * 10)
        requests = [self.window.build(model="m", state_text="<state/>")]
        if calls:
            uses = tuple(
                ToolUseBlock(f"c{self.number}_{i}", "run_python", {}) for i in range(calls)
            )
            self.add("assistant", "checking", (TextBlock("checking"), *uses))
            for use in uses:
                result = ToolResultBlock(use.id, (TextBlock("x" * size),))
                self.add("tool", "x" * size, (result,), tool_name="run_python", tool_call_id=use.id)
            self.clock.now += 5
            requests.append(self.window.build(model="m", state_text="<state/>"))
        self.add("assistant", "done " * 50)
        for request in requests:
            assert_valid_request(request)
            assert cache_control_problem(request_params(request)) is None
        return requests


def test_the_cost_model_prices_writes_reads_and_expiry() -> None:
    assert expected_turn_cost("5m", history=1000, new=100, expired=0.0) == 1.25 * 100 + 0.1 * 1100
    assert expected_turn_cost("1h", history=1000, new=100, expired=1.0) == 2.0 * 100 + 2.0 * 1100


def test_an_unknown_rhythm_leans_to_the_hour() -> None:
    # A wrong 5 minutes loses the history; a wrong hour only the premium on one turn.
    assert CacheRhythm().choose(50_000) == "1h"


def test_without_a_prior_nothing_seen_means_nothing_expires() -> None:
    assert CacheRhythm(prior_weight=0.0).expired_share("5m") == 0.0
    assert CacheRhythm(prior_weight=0.0).choose(50_000) == "5m"


def test_long_pauses_with_a_long_history_choose_the_hour() -> None:
    rhythm = CacheRhythm()
    for _ in range(3):
        rhythm = rhythm.observe(20 * MINUTE, 3000)
    assert rhythm.expired_share("5m") > 0.9
    assert rhythm.expired_share("1h") == 0.0
    assert rhythm.choose(40_000) == "1h"


def test_quick_follow_ups_keep_five_minutes() -> None:
    rhythm = CacheRhythm()
    for _ in range(20):
        rhythm = rhythm.observe(1.5 * MINUTE, 3000)
    assert rhythm.choose(40_000) == "5m"


def test_a_few_long_pauses_among_quick_ones_choose_the_hour() -> None:
    rhythm = CacheRhythm()
    for _ in range(6):
        rhythm = rhythm.observe(MINUTE, 3000)
    for _ in range(3):
        rhythm = rhythm.observe(25 * MINUTE, 3000)
    assert rhythm.choose(40_000) == "1h"


def test_the_prefix_takes_the_hour_and_the_history_follows_the_rhythm() -> None:
    session = Session()
    first = session.exchange(0)[0]
    assert first.prefix_ttl == "1h"
    for _ in range(3):
        later = session.exchange(20, calls=1, size=2000)
    assert later[0].history_ttl == "1h"
    assert later[-1].history_ttl == "1h"  # the whole turn keeps its TTL
    assert request_params(later[0])["system"][0]["cache_control"]["ttl"] == "1h"
    brisk = Session()
    for _ in range(15):
        quick = brisk.exchange(1, calls=1, size=200)
    assert quick[0].history_ttl == "5m"
    assert request_params(quick[0])["system"][0]["cache_control"]["ttl"] == "1h"


def test_a_retried_request_does_not_count_as_a_gap() -> None:
    session = Session()
    session.exchange(0)
    session.exchange(30)
    gaps = session.window.rhythm.gaps
    session.window.build(model="m", state_text="<state/>")  # the same turn again
    assert session.window.rhythm.gaps == gaps


def test_a_wide_tool_round_marks_the_last_breakpoint_again() -> None:
    session = Session()
    session.exchange(0)
    before, after = session.exchange(1, calls=LOOKBACK_BLOCKS, size=50)
    assert before.history_breakpoint is not None
    assert after.extra_breakpoints == (before.history_breakpoint,)
    wire = request_params(after)
    marks = [b for m in wire["messages"] for b in m["content"] if "cache_control" in b]
    assert len(marks) == 2


def test_a_narrow_tool_round_needs_no_extra_breakpoint() -> None:
    session = Session()
    session.exchange(0)
    _, after = session.exchange(1, calls=2, size=50)
    assert after.extra_breakpoints == ()


def test_the_notebooks_pauses_seed_the_rhythm_of_a_new_session() -> None:
    slow = Session()
    slow.window.reset([], pauses=[20 * MINUTE] * 6)
    assert slow.window.rhythm.gaps == (20 * MINUTE,) * 6
    assert slow.exchange(0)[0].history_ttl == "1h"
    brisk = Session()
    brisk.window.reset([], pauses=[2 * MINUTE] * 30)
    assert brisk.exchange(0)[0].history_ttl == "5m"  # no 1-hour premium to learn the rhythm


def test_a_reset_keeps_at_most_the_remembered_pauses() -> None:
    window = ContextWindow(WindowConfig(budget_tokens=10_000), system="s")
    window.reset([], pauses=[float(n) for n in range(100)])
    assert window.rhythm.gaps == tuple(float(n) for n in range(100 - MAX_GAPS, 100))


def test_the_choice_is_explained_from_the_pauses() -> None:
    assert CacheRhythm().describe("1h") == (
        "Prompt cache: the conversation is kept for an hour "
        "(no pause between turns seen yet in this notebook)."
    )
    rhythm = CacheRhythm(gaps=(60.0, 1200.0, 90.0))
    assert rhythm.describe("5m") == (
        "Prompt cache: the conversation is kept for 5 minutes: 1 of the last 3 pauses "
        "between turns in this notebook were over 5 minutes."
    )
