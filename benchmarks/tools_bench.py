"""Tool layer benchmark: conversation_recall latency by archive size, and the registry's own cost.

Run ``python benchmarks/tools_bench.py`` (about a minute: archives of 1k, 10k and
100k turns) or ``--quick`` (CI, a few seconds: 1k turns only). Each archive is one
long session filled with bulk inserts (the FTS triggers index every row); every
recall call goes through ``ToolRegistry.run`` exactly as the agent loop makes it
(schema check, tool, output cap, secret redaction).

Goals: range, tool_calls and summary flat in archive size; search costs little
beyond the archive's own ranked search (its row is printed for comparison); the
registry's own cost under 1 ms per call.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from loom_jupyter.archive import Archive
from loom_jupyter.messages import ToolSpec, ToolUseBlock
from loom_jupyter.settings import Settings
from loom_jupyter.tools.base import ToolAccess, ToolContext, ToolOutput, TypedTool
from loom_jupyter.tools.local_kernel import LocalKernel
from loom_jupyter.tools.registry import ToolRegistry, default_registry
from loom_jupyter.tools.schema import ToolInput, input_schema

NOTEBOOK = "/data/sales/analysis.ipynb"
_VOCABULARY = """
revenue quarter region churn model forecast dataframe column pivot merge plot axis customer segment
margin outlier median variance cohort retention invoice discount warehouse shipment supplier latency
pipeline notebook feature training validation
"""
WORDS = tuple(_VOCABULARY.split())
ACTIONS: dict[str, dict[str, Any]] = {
    "search (2 words)": {"action": "search", "query": "churn forecast"},
    "search (rare word)": {"action": "search", "query": "seaborn"},
    "range (20 turns)": {"action": "range"},  # start filled in per size: the middle
    "tool_calls run_python": {"action": "tool_calls", "tool_name": "run_python", "limit": 10},
    "summary": {"action": "summary"},
}

SEARCH_ALONE = "(archive.search alone, 2 words)"


def sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def turn_rows(sid: str, count: int, rng: random.Random) -> list[tuple[object, ...]]:
    """user, assistant (calls run_python), tool result, assistant: a realistic rhythm."""
    stamp = "2026-01-01T00:00:00.000000+00:00"
    rows: list[tuple[object, ...]] = []
    for number in range(1, count + 1):
        role = ("user", "assistant", "tool", "assistant")[(number - 1) % 4]
        text = sentence(rng, rng.randint(8, 60))
        if number == 3:
            text = "Constraint: never use seaborn for plots, matplotlib only."
        tool, args = (None, None)
        if role == "tool":
            tool, args = (
                "run_python",
                json.dumps({"code": f"df.groupby('region').sum()  # {number}"}),
            )
            text = "In [1]:\n[result]\n" + "\n".join(sentence(rng, 12) for _ in range(20))
        rows.append((sid, number, role, text, tool, args, len(text) // 4, stamp))
    return rows


def build(path: Path, turns: int) -> str:
    """A one-session archive of ``turns`` turns (schema created by Archive.open first)."""
    sid = uuid.uuid4().hex
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("BEGIN")
    db.execute(
        "INSERT INTO cowork_sessions (id, notebook_path, title, model, created_at, last_active_at,"
        " turn_count) VALUES (?, ?, '', 'claude-sonnet', ?, ?, 0)",
        (sid, NOTEBOOK, "2026-01-01T00:00:00+00:00", "2026-01-01T00:00:00+00:00"),
    )
    db.executemany(
        "INSERT INTO conversation_turns (session_id, turn_number, role, content, tool_name,"
        " tool_input, token_count, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        turn_rows(sid, turns, random.Random(turns)),
    )
    db.execute("INSERT INTO turns_fts (turns_fts) VALUES ('rebuild')")  # as the idle indexing
    db.execute("COMMIT")
    db.execute("PRAGMA optimize")
    db.close()
    return sid


@dataclass(frozen=True, kw_only=True)
class EchoInput(ToolInput):
    text: str


class Echo(TypedTool[EchoInput]):
    """A tool that returns a fixed large text, to time the registry around it."""

    input_type = EchoInput
    access: ClassVar[ToolAccess] = "read"
    spec: ClassVar[ToolSpec] = ToolSpec("echo", "Echo.", input_schema(EchoInput))

    async def run(self, args: EchoInput, ctx: ToolContext) -> ToolOutput:
        return ToolOutput.text(args.text * 5000)


async def timed(
    registry: ToolRegistry, call: ToolUseBlock, ctx: ToolContext, reps: int
) -> list[float]:
    samples: list[float] = []
    for _ in range(reps):
        started = time.perf_counter()
        out = await registry.run(call, ctx)
        samples.append((time.perf_counter() - started) * 1000)
        if out.is_error:
            raise SystemExit(f"{call.input} failed: {out.text_content}")
    return samples


def stat(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    return f"{statistics.median(samples):6.1f} / {p95:6.1f}"


async def bench_size(folder: Path, turns: int, reps: int) -> dict[str, str]:
    path = folder / f"{turns}.sqlite"
    async with Archive.open(path):
        pass
    sid = build(path, turns)
    registry = default_registry()
    async with Archive.open(path) as archive:

        async def summary() -> str:
            return "session:\n  turns: many"

        ctx = ToolContext(
            notebook_dir=folder,
            settings=Settings(),
            kernel=LocalKernel(),
            archive=archive,
            session_id=sid,
            session_summary=summary,
        )
        results: dict[str, str] = {}
        for label, args in ACTIONS.items():
            args = dict(args)
            if args["action"] == "range":
                args.update(start_turn=turns // 2, end_turn=turns // 2 + 19)
            call = ToolUseBlock("bench", "conversation_recall", args)
            await registry.run(call, ctx)  # warm the page cache
            results[label] = stat(await timed(registry, call, ctx, reps))
        results[SEARCH_ALONE] = stat(await _search_alone(archive, sid, reps))
    return results


async def _search_alone(archive: Archive, sid: str, reps: int) -> list[float]:
    """The archive's own search for the 2-word query: what recall builds on."""
    samples: list[float] = []
    for _ in range(reps):
        started = time.perf_counter()
        await archive.search(sid, ACTIONS["search (2 words)"]["query"], 10)
        samples.append((time.perf_counter() - started) * 1000)
    return samples


async def bench_registry(folder: Path, reps: int) -> str:
    registry = ToolRegistry([Echo()])
    ctx = ToolContext(notebook_dir=folder, settings=Settings(), kernel=LocalKernel())
    call = ToolUseBlock("bench", "echo", {"text": "0123456789"})
    with_registry = await timed(registry, call, ctx, reps)
    bare: list[float] = []
    args = EchoInput(text="0123456789")
    for _ in range(reps):
        started = time.perf_counter()
        await Echo().run(args, ctx)
        bare.append((time.perf_counter() - started) * 1000)
    overhead = statistics.median(with_registry) - statistics.median(bare)
    return f"{overhead:.3f} ms (input checked; 50,000-char output capped to 30,000 and redacted)"


async def main(quick: bool) -> None:
    sizes = [1_000] if quick else [1_000, 10_000, 100_000]
    reps = 10 if quick else 30
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        columns = {}
        for turns in sizes:
            started = time.perf_counter()
            columns[turns] = await bench_size(folder, turns, reps)
            print(f"built and measured {turns:,} turns in {time.perf_counter() - started:.1f} s")
        registry = await bench_registry(folder, reps * 10)
    header = (
        "| recall action (median / p95 ms) | " + " | ".join(f"{t:,} turns" for t in sizes) + " |"
    )
    print()
    print(header)
    print("|" + "---|" * (len(sizes) + 1))
    for label in (*ACTIONS, SEARCH_ALONE):
        print(f"| {label} | " + " | ".join(columns[t][label] for t in sizes) + " |")
    print()
    print(f"Registry overhead per call (schema check + cap + redaction): {registry}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1k turns only, a few seconds (CI)")
    asyncio.run(main(parser.parse_args().quick))
