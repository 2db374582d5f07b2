"""Prompt-cache cost per turn for notebook rhythms: 5 min, 1 h and adaptive history TTL.

Each rhythm is a sequence of pauses between turns (1-30 minutes, as notebook work
goes: quick follow-ups, reading a plot, running cells, a coffee). A session of
turns (a question, 0-3 tool steps with table-sized results, an answer) is fed
through the real :class:`ContextWindow` with a clock that follows the rhythm;
every request it builds is priced by a prompt-cache simulator:

* each breakpoint's prefix reads the longest live cache entry at or before it
  (0.1x) and writes the rest (1.25x for a 5-minute entry, 2x for an hour);
  tokens after the last breakpoint are plain input (1x);
* an entry lives its TTL from its last write or read.

Columns: ``5 min`` and ``1 h`` fix the history's TTL, ``adaptive`` lets the
window choose it from the rhythm (``engine/cache_policy.py``); all three keep
tools + system at 1 h. ``all 5 min`` is the old layout (every breakpoint 5 min).
Cost is input-side dollars per turn at $3 per million input tokens (output
tokens are the same in every column). Goal: adaptive no worse than the better
fixed TTL on every rhythm.

    python benchmarks/cache_cost.py [--quick] [--turns N]
"""

from __future__ import annotations

import argparse
import random
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from loom_jupyter.engine.cache_policy import READ_PRICE, TTL_SECONDS, WRITE_PRICE
from loom_jupyter.engine.context import ContextWindow, WindowConfig
from loom_jupyter.engine.prompts import SYSTEM_PROMPT
from loom_jupyter.engine.tokens import turn_tokens
from loom_jupyter.messages import TextBlock, ToolResultBlock, ToolUseBlock, Turn
from loom_jupyter.models.estimate import estimate_blocks_tokens, estimate_tokens
from loom_jupyter.tools.registry import default_registry

if TYPE_CHECKING:
    from collections.abc import Callable

    from loom_jupyter.messages import ContentBlock, TurnRole
    from loom_jupyter.models.base import CacheTtl, ModelRequest

Policy = Literal["all 5 min", "5 min", "1 h", "adaptive"]
POLICIES: tuple[Policy, ...] = ("all 5 min", "5 min", "1 h", "adaptive")
DOLLARS_PER_TOKEN = 3.0 / 1_000_000
MINUTE = 60.0


def _uniform(rng: random.Random, low: float, high: float, n: int) -> list[float]:
    return [rng.uniform(low, high) for _ in range(n)]


def _bursts(rng: random.Random, n: int) -> list[float]:
    return [rng.uniform(20, 30) if i % 6 == 5 else rng.uniform(1, 3) for i in range(n)]


def _slowing(rng: random.Random, n: int) -> list[float]:
    return [1 + 29 * i / max(n - 1, 1) + rng.uniform(-0.5, 0.5) for i in range(n)]


def _mostly_quick(rng: random.Random, n: int) -> list[float]:
    return [rng.uniform(8, 15) if rng.random() < 0.15 else rng.uniform(1, 4) for _ in range(n)]


RHYTHMS: dict[str, Callable[[random.Random, int], list[float]]] = {
    "quick follow-ups 1-4 min": lambda rng, n: _uniform(rng, 1, 4, n),
    "mostly quick, some 8-15": _mostly_quick,
    "reading plots 6-15 min": lambda rng, n: _uniform(rng, 6, 15, n),
    "long thinking 15-30 min": lambda rng, n: _uniform(rng, 15, 30, n),
    "mixed 1-30 min": lambda rng, n: _uniform(rng, 1, 30, n),
    "bursts of 1-3, breaks 20-30": _bursts,
    "slowing down 1 -> 30 min": _slowing,
}


# -- the session replayed -------------------------------------------------------


@dataclass
class Clock:
    now: float = 0.0

    def __call__(self) -> float:
        return self.now


@dataclass
class Replay:
    """Feeds a scripted session to a window and collects its requests with their times."""

    window: ContextWindow
    clock: Clock
    requests: list[tuple[float, ModelRequest]] = field(default_factory=list)
    number: int = 0

    def add(self, role: TurnRole, blocks: tuple[ContentBlock, ...], **extra: object) -> None:
        self.number += 1
        text = "\n".join(b.text for b in blocks if isinstance(b, TextBlock | ToolResultBlock))
        turn = Turn("s", self.number, role, text, blocks, token_count=turn_tokens(text, blocks))
        self.window.append(replace(turn, **extra))  # type: ignore[arg-type]

    def request(self) -> None:
        self.requests.append((self.clock.now, self.window.build(model="m", state_text="<s/>")))
        self.clock.now += 20.0  # the answer streams

    def turn(self, rng: random.Random, index: int) -> None:
        self.add("user", (TextBlock(f"Question {index}: " + "why is revenue " * 30),))
        self.request()
        for step in range(rng.choice((0, 1, 1, 2, 3))):
            call = ToolUseBlock(f"c{index}_{step}", "run_python", {"code": "df.describe()"})
            self.add("assistant", (TextBlock("Let me check."), call))
            table = "region  units  revenue\n" + "north   120    4500.25\n" * rng.randint(20, 120)
            result = ToolResultBlock(call.id, (TextBlock(table),))
            self.add("tool", (result,), tool_name="run_python", tool_call_id=call.id)
            self.request()
        self.add("assistant", (TextBlock("Here is what the data says. " * 40),))


def replay(gaps: list[float], seed: int) -> list[tuple[float, ModelRequest]]:
    """The requests of a session whose turns follow ``gaps`` (minutes between turns)."""
    clock = Clock()
    window = ContextWindow(
        WindowConfig(budget_tokens=2_000_000),
        system=SYSTEM_PROMPT,
        tools=default_registry().specs(),
        clock=clock,
    )
    session = Replay(window, clock)
    rng = random.Random(seed)
    session.turn(rng, 0)
    for index, gap in enumerate(gaps, start=1):
        clock.now += gap * MINUTE
        session.turn(rng, index)
    return session.requests


# -- the cache simulator ----------------------------------------------------------


def breakpoints(request: ModelRequest, policy: Policy) -> tuple[list[tuple[int, CacheTtl]], int]:
    """(tokens up to each breakpoint, its TTL) in order, and the request's total tokens."""
    prefix = estimate_tokens(request.system) + sum(
        estimate_tokens(t.name + t.description + str(t.input_schema)) for t in request.tools
    )
    fixed: dict[Policy, CacheTtl] = {"all 5 min": "5m", "5 min": "5m", "1 h": "1h"}
    history_ttl = fixed.get(policy, request.history_ttl)
    marks: list[tuple[int, CacheTtl]] = [(prefix, "5m" if policy == "all 5 min" else "1h")]
    marked = {*request.extra_breakpoints}
    if request.history_breakpoint is not None:
        marked.add(request.history_breakpoint)
    position = prefix
    for index, message in enumerate(request.messages):
        position += 4 + estimate_blocks_tokens(message.content)
        if index in marked:
            marks.append((position, history_ttl))
    return marks, position


@dataclass
class Cache:
    """Live entries: prefix length in tokens -> (expiry time, TTL)."""

    entries: dict[int, tuple[float, CacheTtl]] = field(default_factory=dict)

    def price(self, now: float, marks: list[tuple[int, CacheTtl]], total: int) -> float:
        """Token-price units of one request, updating the entries it reads and writes."""
        self.entries = {p: e for p, e in self.entries.items() if e[0] >= now}
        cost, covered = 0.0, 0
        for position, ttl in marks:
            live = max((p for p in self.entries if covered <= p <= position), default=None)
            if live is not None and live > covered:
                cost += READ_PRICE * (live - covered)
                covered = live
                kept = self.entries[live][1]
                self.entries[live] = (now + TTL_SECONDS[kept], kept)  # a read restarts it
            cost += WRITE_PRICE[ttl] * (position - covered)
            self.entries[position] = (now + TTL_SECONDS[ttl], ttl)
            covered = position
        return cost + (total - covered)


def cost_per_turn(requests: list[tuple[float, ModelRequest]], policy: Policy, turns: int) -> float:
    cache = Cache()
    units = sum(cache.price(now, *breakpoints(request, policy)) for now, request in requests)
    return units * DOLLARS_PER_TOKEN / turns


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer turns and seeds")
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args()
    turns, seeds = (12, 2) if args.quick else (args.turns, args.seeds)
    print(f"\nPrompt-cache cost per turn ($, input side; {turns} turns, {seeds} sessions each)\n")
    names = "".join(f"{p:>11}" for p in POLICIES)
    print(f"{'rhythm':<30}{names}  {'best fixed':>11}  {'adaptive vs best':>16}")
    worst = -1.0
    for name, make in RHYTHMS.items():
        totals = dict.fromkeys(POLICIES, 0.0)
        for seed in range(seeds):
            gaps = make(random.Random(seed), turns - 1)
            requests = replay(gaps, seed)
            for policy in POLICIES:
                totals[policy] += cost_per_turn(requests, policy, turns) / seeds
        best = min(totals["5 min"], totals["1 h"])
        change = (totals["adaptive"] - best) / best * 100
        worst = max(worst, change)
        cells = "".join(f"{totals[p]:>11.4f}" for p in POLICIES)
        print(f"{name:<30}{cells}  {best:>11.4f}  {change:>+15.2f}%")
    verdict = "met" if worst <= 0.0 else "NOT met"
    print(f"\nadaptive vs the better fixed TTL, worst rhythm: {worst:+.2f}% (goal <= 0: {verdict})")


if __name__ == "__main__":
    main()
