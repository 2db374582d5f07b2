"""Engine benchmarks: per-turn overhead vs archive size, and prompt-cache prefix stability.

1. **Per-turn overhead.** A session is prefilled (bulk insert, FTS triggers on)
   with N archived turns, resumed through ``CoworkSession.open``, and then runs
   turns of "user message -> run_python -> answer" against a ScriptedModel.
   Overhead = the turn's wall time minus the time spent inside the model's
   stream (everything the engine does: archive writes, window, state, tools).
   The window budget is the same for every N and full in every case, so only
   the archive's size differs. Goal: median at 100k / median at 100 <= 1.2.

2. **Prefix stability.** A 200-turn scripted analysis session with realistic
   tool output (tables printed by run_python, files read) runs through
   ``CoworkSession``. For each request after the first, the share of its
   tokens that lie in a prefix byte-identical to the previous request's, up to
   the previous request's last cache breakpoint that still matches (tools +
   system, or the end of the history). Averaged over requests. The same turns
   replayed through a naive sliding window (drop the oldest exchange whenever
   over budget, no previews) give the comparison. Goal: >= 90%.

    python benchmarks/engine_bench.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import random
import sqlite3
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loom_jupyter.archive import Archive, archive_path_for
from loom_jupyter.engine.context import ContextWindow, WindowConfig
from loom_jupyter.engine.prompts import SYSTEM_PROMPT
from loom_jupyter.engine.tokens import turn_tokens
from loom_jupyter.messages import TextBlock, ToolResultBlock, ToolUseBlock, blocks_to_json
from loom_jupyter.models.scripted import ScriptedModel, ScriptedReply, text, tool_call
from loom_jupyter.models.wire import request_params
from loom_jupyter.session.conversation import CoworkSession
from loom_jupyter.settings import Settings
from loom_jupyter.tools.local_kernel import LocalKernel
from loom_jupyter.tools.registry import default_registry

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from loom_jupyter.models.base import ModelEvent, ModelRequest

STAMP = "2026-01-01T00:00:00.000000+00:00"


# -- shared -------------------------------------------------------------------


@dataclass
class TimedModel:
    """Wraps a model and adds up the time spent inside its stream (the model's own time)."""

    inner: ScriptedModel
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    on_request: Any = None
    requests: list[ModelRequest] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.inner.name

    async def count_tokens(self, request: ModelRequest) -> int:
        return await self.inner.count_tokens(request)

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        if self.on_request is not None:
            self.on_request(request)
        self.requests.append(request)
        events = self.inner.stream(request)
        while True:
            started, cpu = time.perf_counter(), time.process_time()
            try:
                event = await events.__anext__()
            except StopAsyncIteration:
                return
            finally:
                self.seconds += time.perf_counter() - started
                self.cpu_seconds += time.process_time() - cpu
            yield event


def table(title: str, header: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    print(f"\n{title}")
    print("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
    print("  ".join("-" * w for w in widths))
    for row in rows:
        print("  ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)))


def notebook_in(folder: Path) -> Path:
    path = folder / "bench.ipynb"
    path.write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
    return path


# -- 1. per-turn overhead -----------------------------------------------------------------------


def archived_rows(session_id: str, count: int, rng: random.Random) -> list[tuple[Any, ...]]:
    """``count`` turns shaped like a real session: user, assistant+call, result, answer."""
    rows: list[tuple[Any, ...]] = []
    for number in range(1, count + 1):
        phase = (number - 1) % 4
        if phase == 0:
            content = f"Step {number}: summarise revenue for region {rng.randint(1, 9)} by week."
            blocks: tuple[Any, ...] = (TextBlock(content),)
            rows.append(_row(session_id, number, "user", content, blocks))
        elif phase == 1:
            call = ToolUseBlock(f"toolu_{number}", "run_python", {"code": "summary(df)"})
            blocks = (TextBlock("Let me compute that."), call)
            rows.append(_row(session_id, number, "assistant", "Let me compute that.", blocks))
        elif phase == 2:
            body = "\n".join(f"week {i:3d}  {rng.random() * 1e5:12.2f}" for i in range(90))
            blocks = (ToolResultBlock(f"toolu_{number - 1}", (TextBlock(body),)),)
            rows.append(_row(session_id, number, "tool", body, blocks, tool="run_python"))
        else:
            content = "Revenue rose in most weeks; the dip in week 12 follows the holiday."
            rows.append(_row(session_id, number, "assistant", content, (TextBlock(content),)))
    return rows


def _row(
    sid: str, number: int, role: str, content: str, blocks: tuple[Any, ...], tool: str | None = None
) -> tuple[Any, ...]:
    call_id = blocks[0].tool_use_id if role == "tool" else None
    tool_input = '{"code": "summary(df)"}' if role == "tool" else None
    tokens = turn_tokens(content, blocks)
    return (sid, number, role, content, blocks_to_json(blocks), tool, call_id, tool_input, tokens,
            STAMP)  # fmt: skip


async def prefill(notebook: Path, turns: int) -> str:
    """An archive with one session of ``turns`` turns (bulk insert, then indexed at once)."""
    path = archive_path_for(notebook)
    async with Archive.open(path) as archive:
        sid = await archive.create_session(notebook_path=str(notebook), model="scripted")
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("BEGIN")
    db.executemany(
        "INSERT INTO conversation_turns (session_id, turn_number, role, content, blocks,"
        " tool_name, tool_call_id, tool_input, token_count, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        archived_rows(sid, turns, random.Random(turns)),
    )
    db.execute("UPDATE cowork_sessions SET turn_count = ? WHERE id = ?", (turns, sid))
    db.execute("INSERT INTO turns_fts (turns_fts) VALUES ('rebuild')")
    db.execute("COMMIT")
    db.execute("PRAGMA optimize")
    db.close()
    return sid


def analyst_turn(request: ModelRequest) -> ScriptedReply:
    last = request.messages[-1].content
    if any(isinstance(b, TextBlock) and b.text.startswith("Step") for b in last):
        code = "rows = [f'week {i}: {i * 7919 % 1000}' for i in range(40)]\nprint('\\n'.join(rows))"
        return tool_call("run_python", {"code": code})
    return text("Revenue rose in most weeks; the dip in week 12 follows the holiday.")


@dataclass
class Subject:
    """One archive size under test: its open session and the samples taken."""

    turns: int
    session: CoworkSession
    model: TimedModel
    prefill_s: float
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)

    async def turn(self, index: int, *, keep: bool) -> None:
        """One turn; the engine's share of its wall and CPU time is kept if ``keep``."""
        self.model.seconds = self.model.cpu_seconds = 0.0
        wall, cpu = time.perf_counter(), time.process_time()
        async for _ in self.session.send(f"Step {index}: summarise region {index % 7}."):
            pass
        if keep:
            self.wall.append(time.perf_counter() - wall - self.model.seconds)
            self.cpu.append(time.process_time() - cpu - self.model.cpu_seconds)


async def open_subject(folder: Path, turns: int, budget: int) -> tuple[Subject, Archive]:
    (folder / str(turns)).mkdir()
    notebook = notebook_in(folder / str(turns))
    built = time.perf_counter()
    await prefill(notebook, turns)
    prefill_s = time.perf_counter() - built
    archive = await Archive.open(archive_path_for(notebook))
    model = TimedModel(ScriptedModel(analyst_turn))
    session = await CoworkSession.open(
        archive, notebook_path=notebook, model=model, kernel=LocalKernel(),
        settings=Settings(approval="auto", context_budget_tokens=budget),
        tools=default_registry(),
    )  # fmt: skip
    return Subject(turns, session, model, prefill_s), archive


async def bench_overhead(sizes: list[int], measured: int) -> None:
    budget = 24_000
    with tempfile.TemporaryDirectory() as folder:
        opened = [await open_subject(Path(folder), n, budget) for n in sizes]
        subjects = [subject for subject, _ in opened]
        # Rounds interleave the sizes, so drifting load on a shared machine hits all alike.
        for index in range(measured + 3):
            for subject in subjects:
                await subject.turn(subject.turns + index, keep=index >= 3)
        for subject, archive in opened:
            await subject.session.close()
            await archive.close()
    base = subjects[0]
    rows = [
        [
            f"{s.turns:,}",
            f"{s.session.window.history_tokens:,}",
            f"{_ms(statistics.median(s.wall))}",
            f"{_ms(statistics.median(s.cpu))}",
            f"{_ms(_p90(s.cpu))}",
            f"{statistics.median(s.cpu) / statistics.median(base.cpu):.2f}",
            f"{statistics.median(s.wall) / statistics.median(base.wall):.2f}",
            f"{s.prefill_s:.1f}",
        ]
        for s in subjects
    ]
    table(
        f"Per-turn engine overhead (model time excluded; median of {measured} interleaved turns;"
        f" budget {budget:,} tokens)",
        ["archived turns", "window tokens", "wall ms", "cpu ms", "cpu p90 ms", "ratio (cpu)",
         "ratio (wall)", "prefill s"],
        rows,
    )  # fmt: skip
    last = subjects[-1]
    ratio = statistics.median(last.cpu) / statistics.median(base.cpu)
    print(f"goal: {last.turns:,}/{base.turns:,} ratio <= 1.2 -> {ratio:.2f} (cpu)")


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f}"


def _p90(values: list[float]) -> float:
    return sorted(values)[max(0, int(len(values) * 0.9) - 1)]


# -- 2. prefix stability ------------------------------------------------------------------------


DATA_FILES = {
    "sales.csv": "\n".join(
        f"2026-{1 + i % 12:02d}-{1 + i % 28:02d},region_{i % 7},{i * 37 % 1000},{i * 13 % 97}"
        for i in range(400)
    ),
    "notes.md": "\n".join(f"- observation {i}: revenue pattern {i % 5}" for i in range(150)),
}


def session_script(rng: random.Random) -> Any:
    """A scripted analyst: 1-3 tool steps per message, outputs of realistic, varying size."""

    def answer(request: ModelRequest) -> ScriptedReply:
        final = request.messages[-1].content
        fresh = any(isinstance(b, TextBlock) and b.text.startswith("Task") for b in final)
        steps = answer.steps  # type: ignore[attr-defined]
        if fresh:
            answer.steps = rng.randint(1, 3)  # type: ignore[attr-defined]
        elif steps == 0:
            return text("Summary: " + " ".join(rng.choice(WORDS) for _ in range(60)))
        answer.steps -= 1  # type: ignore[attr-defined]
        return rng.choice(TOOL_STEPS)(rng)

    answer.steps = 0  # type: ignore[attr-defined]
    return answer


def _table_step(rng: random.Random) -> ScriptedReply:
    rows = rng.choice([20, 60, 150, 400])
    code = (
        f"for i in range({rows}):\n"
        "    print(f'{i:4d}  region_{i % 7:<3d} {i * 7919 % 100000:>8d} {i * 0.37:10.3f}')"
    )
    return tool_call("run_python", {"code": code})


def _read_step(rng: random.Random) -> ScriptedReply:
    return tool_call("read_file", {"path": rng.choice(sorted(DATA_FILES))})


def _inspect_step(rng: random.Random) -> ScriptedReply:
    return tool_call("inspect_variables", {})


TOOL_STEPS = (_table_step, _table_step, _read_step, _inspect_step)
WORDS = [
    "revenue",
    "region",
    "weekly",
    "trend",
    "dip",
    "holiday",
    "growth",
    "median",
    "outlier",
    "forecast",
]


def flat_blocks(request: ModelRequest) -> tuple[list[str], list[int]]:
    """The request's blocks in wire order (JSON, cache marks removed) and the breakpoint indices."""
    params = request_params(request)
    blocks = [*params.get("tools", []), *params.get("system", [])]
    blocks += [b for m in params["messages"] for b in m["content"]]
    marks = [i for i, b in enumerate(blocks) if "cache_control" in b]
    plain = [json.dumps({k: v for k, v in b.items() if k != "cache_control"}) for b in blocks]
    return plain, marks


def cached_shares(requests: list[ModelRequest]) -> list[float]:
    """Per request (after the first): share of tokens in a prefix the previous one cached."""
    shares = []
    for before, after in itertools.pairwise(requests):
        old, marks = flat_blocks(before)
        new, _ = flat_blocks(after)
        total = sum(len(b) for b in new)
        hit = 0
        for mark in reversed(marks):
            if new[: mark + 1] == old[: mark + 1]:
                hit = sum(len(b) for b in new[: mark + 1])
                break
        shares.append(hit / total)
    return shares


def naive_requests(
    turns: list[Any], points: list[tuple[int, str]], budget: int, tools: Any
) -> list[ModelRequest]:
    """The same turns through a sliding window: drop the oldest exchange when over, no previews."""
    naive = ContextWindow(
        WindowConfig(budget_tokens=budget, refill_ratio=1.0, keep_full_turns=10**9),
        system=SYSTEM_PROMPT,
        tools=tools,
    )
    requests, fed = [], 0
    for last_turn, state in points:
        while fed < last_turn:
            naive.append(turns[fed])
            fed += 1
        requests.append(naive.build(model="scripted", state_text=state))
    return requests


async def stability_for(turn_target: int, context_budget: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as folder:
        notebook = notebook_in(Path(folder))
        for name, body in DATA_FILES.items():
            (Path(folder) / name).write_text(body)
        async with Archive.open(archive_path_for(notebook)) as archive:
            model = TimedModel(ScriptedModel(session_script(random.Random(11))))
            settings = Settings(approval="auto", context_budget_tokens=context_budget)
            session = await CoworkSession.open(
                archive, notebook_path=notebook, settings=settings, model=model,
                kernel=LocalKernel(), tools=default_registry(),
            )  # fmt: skip
            points: list[tuple[int, str]] = []
            model.on_request = lambda r: points.append(
                (session.window.turns[-1].turn_number, r.messages[-1].content[0].text)  # type: ignore[union-attr]
            )
            task = 0
            while (session.info.turn_count if session.info else 0) < turn_target:
                task += 1
                async for _ in session.send(f"Task {task}: look at the sales by region again."):
                    pass
            assert session.session_id is not None
            turns = await archive.get_turns(session.session_id)
            moves = session.window.moves
            await session.close()
    budget = WindowConfig.from_settings(settings).budget_tokens
    naive = naive_requests(turns, points, budget, default_registry().specs())
    return {
        "turns": len(turns),
        "requests": len(model.requests),
        "engine": statistics.mean(cached_shares(model.requests)) * 100,
        "naive": statistics.mean(cached_shares(naive)) * 100,
        "moves": moves,
    }


async def bench_stability(cases: list[tuple[int, int]]) -> None:
    rows = []
    for turn_target, budget in cases:
        r = await stability_for(turn_target, budget)
        rows.append(
            [
                f"{budget:,}",
                f"{r['turns']:.0f}",
                f"{r['requests']:.0f}",
                f"{r['moves']:.0f}",
                f"{r['engine']:.1f}%",
                f"{r['naive']:.1f}%",
            ]
        )
    table(
        "Prompt-cache prefix stability (scripted analysis session, realistic tool output)",
        ["context budget", "turns", "requests", "window moves", "engine window", "naive sliding"],
        rows,
    )
    print("goal: engine window >= 90%")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (CI, a few seconds)")
    args = parser.parse_args()
    if args.quick:
        asyncio.run(bench_overhead([100, 1_000, 5_000], measured=6))
        asyncio.run(bench_stability([(120, 40_000)]))
    else:
        asyncio.run(bench_overhead([100, 10_000, 100_000], measured=30))
        cases = [(200, 30_000), (200, 60_000), (200, 120_000), (600, 120_000)]
        asyncio.run(bench_stability(cases))


if __name__ == "__main__":
    main()
