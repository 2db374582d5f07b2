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
``5 min until a long pause`` is the adaptive rule without its prior: the only
kind of rule that ties ``5 min`` on quick follow-ups, shown to price what that
costs where the hour is better. Cost is input-side dollars per turn at $3 per
million input tokens (output tokens are the same in every column).

Two tables: a notebook's first session (nothing to learn the rhythm from but
its own pauses) and a returning notebook, whose archive (or a neighbour's, for
a new notebook) holds an earlier session of the same rhythm (another seed); the
new session starts from those pauses as ``CoworkSession`` does. Goal: adaptive
no worse than the better fixed TTL on every rhythm.

A third table (issue 42, DESIGN §15): the cached-prefix share (input tokens read from the
cache over all input tokens) of a 20-turn session, adaptive TTL, with five skills
installed (the system prompt holds :func:`~loom_jupyter.skills.skills_block` of five
realistic skills, as ``RequestAssembly.system`` puts it) and of the same session without
skills. Goal: within 2 points on every rhythm. ``--skills N`` installs N skills (0: no
such table); ``--skills-only`` prints only that table.

    python benchmarks/cache_cost.py [--quick] [--turns N] [--seeds N] [--skills N] [--skills-only]
"""

from __future__ import annotations

import argparse
import random
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from loom_jupyter.engine.cache_policy import READ_PRICE, TTL_SECONDS, WRITE_PRICE, CacheRhythm
from loom_jupyter.engine.context import ContextWindow, WindowConfig
from loom_jupyter.engine.prompts import SYSTEM_PROMPT
from loom_jupyter.engine.tokens import turn_tokens
from loom_jupyter.messages import TextBlock, ToolResultBlock, ToolUseBlock, Turn
from loom_jupyter.models.estimate import estimate_blocks_tokens, estimate_tokens
from loom_jupyter.skills import Skill, skills_block
from loom_jupyter.tools.registry import default_registry

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

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


def replay(
    gaps: list[float],
    seed: int,
    *,
    earlier: Sequence[float] = (),
    rhythm: CacheRhythm | None = None,
    system: str = SYSTEM_PROMPT,
) -> list[tuple[float, ModelRequest]]:
    """The requests of a session whose turns follow ``gaps`` (minutes between turns).

    ``earlier`` are the pauses of the notebook's earlier session (minutes), as the
    archive gives them to a new session; ``rhythm`` replaces the window's rule;
    ``system`` is the system prompt (the static one, by default).
    """
    clock = Clock()
    window = ContextWindow(
        WindowConfig(budget_tokens=2_000_000),
        system=system,
        tools=default_registry().specs(),
        clock=clock,
        rhythm=rhythm,
    )
    window.reset([], pauses=[gap * MINUTE for gap in earlier])
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
    read_tokens: int = 0
    """Input tokens read from the cache, over every request priced."""
    input_tokens: int = 0
    """All input tokens (read, written and plain), over every request priced."""

    def price(self, now: float, marks: list[tuple[int, CacheTtl]], total: int) -> float:
        """Token-price units of one request, updating the entries it reads and writes."""
        self.entries = {p: e for p, e in self.entries.items() if e[0] >= now}
        cost, covered = 0.0, 0
        for position, ttl in marks:
            live = max((p for p in self.entries if covered <= p <= position), default=None)
            if live is not None and live > covered:
                cost += READ_PRICE * (live - covered)
                self.read_tokens += live - covered
                covered = live
                kept = self.entries[live][1]
                self.entries[live] = (now + TTL_SECONDS[kept], kept)  # a read restarts it
            cost += WRITE_PRICE[ttl] * (position - covered)
            self.entries[position] = (now + TTL_SECONDS[ttl], ttl)
            covered = position
        self.input_tokens += total
        return cost + (total - covered)


def cost_per_turn(requests: list[tuple[float, ModelRequest]], policy: Policy, turns: int) -> float:
    cache = Cache()
    units = sum(cache.price(now, *breakpoints(request, policy)) for now, request in requests)
    return units * DOLLARS_PER_TOKEN / turns


# -- skills in the system prompt (issue 42) ----------------------------------------

SKILLS: tuple[tuple[str, str], ...] = (
    (
        "plot-style",
        "Our team's matplotlib look: the palette, fonts, figure sizes and how to label axes "
        "and units. Use for any chart meant for a report or a slide.",
    ),
    (
        "clean-sales",
        "How we clean the monthly sales extract: the region codes, returns as negative "
        "units, the currency columns and the rows to drop.",
    ),
    (
        "warehouse-sql",
        "How to query the analytics warehouse: schemas, the read-only role, partitioned "
        "tables and the date filters every query needs.",
    ),
    (
        "experiment-readout",
        "How to write up an A/B test: the metrics, the confidence intervals we report and "
        "the readout template.",
    ),
    (
        "forecast-checks",
        "The checks a demand forecast passes before it is shared: backtests, holiday "
        "effects, and the error table we publish.",
    ),
)


def skills_system(count: int) -> str:
    """The system prompt with ``count`` skills installed, as ``RequestAssembly.system``
    puts it (no project instructions); past the five above, numbered copies."""
    skills = []
    for index in range(count):
        name, description = SKILLS[index % len(SKILLS)]
        name = name if index < len(SKILLS) else f"{name}-{index}"
        folder = Path(f"/home/analyst/.config/loom/skills/{name}")
        skills.append(Skill(name, description, "user", folder))
    block = skills_block(skills)
    return SYSTEM_PROMPT + (f"\n\n# Skills\n{block}\n" if block else "")


def cached_share(requests: list[tuple[float, ModelRequest]]) -> float:
    """The share (%) of the session's input tokens read from the cache (adaptive TTL)."""
    cache = Cache()
    for now, request in requests:
        cache.price(now, *breakpoints(request, "adaptive"))
    return 100.0 * cache.read_tokens / cache.input_tokens


def skills_table(count: int, turns: int, seeds: int) -> float:
    """Print the cached-prefix share with ``count`` skills and without, per rhythm; return
    the largest difference in points."""
    with_skills = skills_system(count)
    extra = estimate_tokens(with_skills) - estimate_tokens(SYSTEM_PROMPT)
    print(
        f"\nCached-prefix share of input tokens, adaptive TTL: {turns} turns, {seeds} sessions "
        f"each;\n{count} skills installed add {extra:,} tokens to the system prompt\n"
    )
    print(f"{'rhythm':<30}{'no skills':>12}{f'{count} skills':>12}{'difference':>14}")
    worst = 0.0
    for name, make in RHYTHMS.items():
        without = present = 0.0
        for seed in range(seeds):
            gaps = make(random.Random(seed), turns - 1)
            without += cached_share(replay(gaps, seed)) / seeds
            present += cached_share(replay(gaps, seed, system=with_skills)) / seeds
        worst = max(worst, abs(present - without))
        print(f"{name:<30}{without:>11.2f}%{present:>11.2f}%{present - without:>+11.2f} pt")
    verdict = "met" if worst <= 2.0 else "NOT met"
    print(f"\nlargest difference: {worst:.2f} points (goal <= 2: {verdict})")
    return worst


Column = Literal[
    "all 5 min", "5 min", "1 h", "adaptive", "5 min until a long pause", "returning adaptive"
]
FIRST_SESSION: tuple[Column, ...] = (
    "all 5 min",
    "5 min",
    "1 h",
    "adaptive",
    "5 min until a long pause",
)


def rhythm_costs(
    make: Callable[[random.Random, int], list[float]], turns: int, seeds: int
) -> dict[Column, float]:
    """Mean cost per turn of every column over ``seeds`` sessions of one rhythm."""
    totals: dict[Column, float] = {}
    for seed in range(seeds):
        gaps = make(random.Random(seed), turns - 1)
        earlier = make(random.Random(seed + 1000), turns - 1)  # the same person, another day
        requests = replay(gaps, seed)
        runs: dict[Column, float] = {p: cost_per_turn(requests, p, turns) for p in POLICIES}
        eager = replay(gaps, seed, rhythm=CacheRhythm(prior_weight=0.0))
        runs["5 min until a long pause"] = cost_per_turn(eager, "adaptive", turns)
        returning = replay(gaps, seed, earlier=earlier)
        runs["returning adaptive"] = cost_per_turn(returning, "adaptive", turns)
        for column, cost in runs.items():
            totals[column] = totals.get(column, 0.0) + cost / seeds
    return totals


def print_table(
    title: str,
    columns: tuple[Column, ...],
    adaptive: Column,
    results: dict[str, dict[Column, float]],
) -> float:
    """One table: a row per rhythm; returns the adaptive column's worst change vs the best fixed."""
    print(f"\n{title}\n")
    heads = "".join(f"{c.replace('returning ', ''):>{_width(c)}}" for c in columns)
    print(f"{'rhythm':<30}{heads}{'best fixed':>12}{'adaptive vs best':>18}")
    worst = -100.0
    for name, costs in results.items():
        best = min(costs["5 min"], costs["1 h"])
        change = (costs[adaptive] - best) / best * 100
        worst = max(worst, change)
        cells = "".join(f"{costs[c]:>{_width(c)}.4f}" for c in columns)
        print(f"{name:<30}{cells}{best:>12.4f}{change:>+17.2f}%")
    return worst


def _width(column: Column) -> int:
    return max(11, len(column.replace("returning ", "")) + 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer turns and seeds")
    parser.add_argument("--turns", type=int, default=40, help="turns per session (default 40)")
    parser.add_argument("--seeds", type=int, default=10, help="sessions per rhythm (default 10)")
    parser.add_argument(
        "--skills", type=int, default=5, help="skills installed in the share table (default 5)"
    )
    parser.add_argument(
        "--skills-only", action="store_true", help="only the skills table (20 turns)"
    )
    args = parser.parse_args()
    turns, seeds = (12, 2) if args.quick else (args.turns, args.seeds)
    if args.skills_only:
        skills_table(args.skills, 20, seeds)
        return
    results = {name: rhythm_costs(make, turns, seeds) for name, make in RHYTHMS.items()}
    print(f"\nPrompt-cache cost per turn ($, input side; {turns} turns, {seeds} sessions each)")
    first = print_table(
        "A notebook's first session: only its own pauses to learn from",
        FIRST_SESSION,
        "adaptive",
        results,
    )
    returning = print_table(
        "A returning notebook (or a new one beside notebooks with history): an earlier"
        " session of the same rhythm",
        ("5 min", "1 h", "returning adaptive"),
        "returning adaptive",
        results,
    )
    eager = max(
        (c["5 min until a long pause"] - c["1 h"]) / c["1 h"] * 100
        for name, c in results.items()
        if c["1 h"] < c["5 min"]
    )
    print(
        f"\nfirst session, adaptive vs the better fixed TTL, worst rhythm: {first:+.2f}%"
        f"\n  (a rule must pick 5 min at every turn of a quick start to tie '5 min' on quick"
        f"\n  follow-ups; '5 min until a long pause' is that rule, and it pays up to {eager:+.2f}%"
        f"\n  where the hour is better: no rule that sees only this session can tie both)"
    )
    verdict = "met" if returning <= 0.0 else "NOT met"
    if args.quick:
        verdict = "not judged: a --quick session is too short and too few to decide"
    print(
        f"returning notebook, adaptive vs the better fixed TTL, worst rhythm: {returning:+.2f}%"
        f" (goal <= 0: {verdict})"
    )
    if args.skills > 0:
        skills_table(args.skills, 20, seeds)


if __name__ == "__main__":
    main()
