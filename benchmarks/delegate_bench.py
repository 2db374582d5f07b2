"""Delegation benchmark: parallel speed-up, plan + verify overhead, prompt-cache staggering.

Run ``python benchmarks/delegate_bench.py`` (about half a minute) or ``--quick``
(CI: a quarter of the latency). Everything is real but the model: a session
on a real archive, the orchestrator, the anthropic SDK against the fake
Messages API on 127.0.0.1. Four independent subtasks each take one model call
of ``LATENCY`` seconds (the fake paces its SSE events); planning and judging
answer at once.

The fake's responder simulates prompt caching the way the API behaves: a
prefix (tools + system) written by one request can be read by another only
once the first response has started (its ``message_start`` is out). So
sub-agents that start together all pay for a cache write, and staggered ones
(the first request's first token before the others go) read the first one's.

Goals: the delegation's wall time at least 3x faster than the serial sum of
the subtask calls; plan + verify tokens a modest share of the work; a higher
cache-read share of subtask input with staggering than without.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import math
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import anthropic

from loom_jupyter.archive import Archive, archive_path_for
from loom_jupyter.models.anthropic import AnthropicModel
from loom_jupyter.orchestrator import DelegateOptions, TaskUpdate, attach
from loom_jupyter.session.conversation import CoworkSession
from loom_jupyter.settings import Settings
from loom_jupyter.testing import FakeAnthropic
from loom_jupyter.tools.local_kernel import LocalKernel

PARTS = ("north", "south", "east", "west")
GOAL = "Profile the four regional sales tables: rows, columns and missing values for each"
_EVENTS = 8  # SSE events of a short text answer: start, block start, 3 deltas, stop, delta, stop


def _tokens(value: Any) -> int:
    return math.ceil(len(json.dumps(value, ensure_ascii=False)) / 4)


def _texts(message: dict[str, Any]) -> str:
    content = message["content"]
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content if b.get("type") == "text")


class Responder:
    """Planner, sub-agents (``latency`` each), judge and a direct worker, with cache timing."""

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.lock = threading.Lock()
        self.readable_at: dict[str, float] = {}  # prefix hash -> when a reader may hit it
        self.subtask_usage: list[dict[str, int]] = []

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        choice = (body.get("tool_choice") or {}).get("name")
        if choice == "submit_plan":
            return self._answer(body, [_tool("submit_plan", {"subtasks": _plan()})], 0.0)
        if choice == "submit_verdict":
            verdict = {"verdict": "pass", "feedback": "rows, columns and gaps reported"}
            return self._answer(body, [_tool("submit_verdict", verdict)], 0.0)
        if _subtask(body["messages"][0]):
            answer = self._answer(
                body, ["Profiled: 1,204 rows, 9 columns, 0.4% missing."], self.latency
            )
            with self.lock:
                self.subtask_usage.append(answer["usage"])
            return answer
        return self._direct(body)

    def _direct(self, body: dict[str, Any]) -> dict[str, Any]:
        """The same work done in one conversation turn: four tool calls, then the report."""
        if not any(m["role"] == "assistant" for m in body["messages"]):
            calls = [
                _tool("run_python", {"code": f"profile_{p} = '1,204 rows'"}, f"toolu_{p}")
                for p in PARTS
            ]
            return self._answer(body, calls, self.latency)
        report = " ".join(f"{p}: 1,204 rows, 9 columns, 0.4% missing." for p in PARTS)
        return self._answer(body, [report], self.latency)

    def _answer(self, body: dict[str, Any], content: list[Any], latency: float) -> dict[str, Any]:
        usage = self._usage(body, content, latency)
        return {"content": content, "usage": usage, "delay": latency / _EVENTS}

    def _usage(self, body: dict[str, Any], content: list[Any], latency: float) -> dict[str, int]:
        prefix = [body.get("tools") or [], body.get("system") or []]
        key = hashlib.sha256(json.dumps(prefix, sort_keys=True).encode()).hexdigest()
        cached, total = _tokens(prefix), _tokens([*prefix, body["messages"]])
        now = time.monotonic()
        with self.lock:
            ready = self.readable_at.get(key)
            hit = ready is not None and ready <= now
            if ready is None:  # readable once this response's message_start is out
                self.readable_at[key] = now + latency / _EVENTS
        return {
            "input_tokens": total - cached,
            "output_tokens": _tokens(content),
            "cache_creation_input_tokens": 0 if hit else cached,
            "cache_read_input_tokens": cached if hit else 0,
        }


def _subtask(message: dict[str, Any]) -> bool:
    """A sub-agent's first message starts with its description (after the sub-agent note)."""
    content = message["content"]
    blocks = [content] if isinstance(content, str) else [b.get("text", "") for b in content]
    return any(text.startswith("Profile the ") for text in blocks)


def _tool(name: str, data: dict[str, Any], tool_id: str | None = None) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_use", "name": name, "input": data}
    if tool_id:
        block["id"] = tool_id
    return block


def _plan() -> list[dict[str, Any]]:
    return [
        {
            "id": part,
            "description": f"Profile the {part} table: rows, columns, missing values",
            "depends_on": [],
            "acceptance": "the three numbers are reported",
            "check": None,
        }
        for part in PARTS
    ]


async def _session(folder: Path, fake: FakeAnthropic, **settings: Any) -> tuple[CoworkSession, Any]:
    notebook = folder / "bench.ipynb"
    archive = await Archive.open(archive_path_for(notebook))
    client = anthropic.AsyncAnthropic(api_key="sk-ant-bench-0000", base_url=fake.base_url)
    values = {"approval": "auto", **settings}
    session = await CoworkSession.open(
        archive,
        notebook_path=notebook,
        settings=Settings(**values),
        model=AnthropicModel(Settings(**values), client=client),
        kernel=LocalKernel(),
    )
    return session, (archive, client)


async def _close(session: CoworkSession, handles: Any) -> None:
    archive, client = handles
    await session.close()
    await client.close()
    await archive.close()


async def _ledger(archive: Archive, session_id: str) -> tuple[int, float]:
    calls = await archive.model_calls(session_id)
    tokens = sum(
        c.input_tokens + c.output_tokens + c.cache_creation_tokens + c.cache_read_tokens
        for c in calls
    )
    return tokens, sum(c.latency_ms for c in calls) / 1000.0


async def delegated(latency: float, *, stagger: bool, verify: bool = True) -> dict[str, float]:
    """One delegation of the four parts; wall time, serial sum, tokens by phase, cache share."""
    responder = Responder(latency)
    with tempfile.TemporaryDirectory() as tmp, FakeAnthropic(responder=responder) as fake:
        session, handles = await _session(Path(tmp), fake, delegate_stagger=stagger)
        orchestrator = attach(session)
        marks: dict[str, float] = {}
        orchestrator.subscribe(lambda update: _mark(marks, update))
        started = time.perf_counter()
        outcome = await orchestrator.start(GOAL, options=DelegateOptions(verify=verify))
        wall = time.perf_counter() - started
        assert outcome.status == "passed", outcome.digest
        archive = handles[0]
        overhead, _ = await _ledger(archive, str(session.session_id))  # plan + judge calls
        work, serial = 0, 0.0
        for row in await archive.list_subtasks(outcome.task_id):
            tokens, seconds = await _ledger(archive, str(row.child_session_id))
            work, serial = work + tokens, serial + seconds
        await _close(session, handles)
    usage = responder.subtask_usage
    read = sum(u["cache_read_input_tokens"] for u in usage)
    total = sum(
        u["input_tokens"] + u["cache_read_input_tokens"] + u["cache_creation_input_tokens"]
        for u in usage
    )
    return {
        "wall": wall,
        "serial": serial,
        "overhead": overhead,
        "work": work,
        "cache_read": read / total,
        "planning": marks["planned"] - started,
        "running": marks.get("verifying", marks["finished"]) - marks["planned"],
        "verifying": marks["task_done"] - marks.get("verifying", marks["finished"]),
    }


def _mark(marks: dict[str, float], update: TaskUpdate) -> None:
    """When planning ended, the last sub-agent run ended, and the task ended."""
    now = time.perf_counter()
    if update.change == "planned" and update.snapshot.subtasks:
        marks["planned"] = now
    elif update.change in ("verifying", "finished", "task_done"):
        marks[update.change] = now  # the latest of each


async def median_run(latency: float, runs: int, **options: Any) -> dict[str, float]:
    """The run with the median wall time of ``runs`` (the machine may be shared)."""
    results = [await delegated(latency, **options) for _ in range(runs)]
    return sorted(results, key=lambda r: r["wall"])[len(results) // 2]


async def direct(latency: float) -> dict[str, float]:
    """The same four parts done in one ordinary turn (tool calls, then a report)."""
    responder = Responder(latency)
    with tempfile.TemporaryDirectory() as tmp, FakeAnthropic(responder=responder) as fake:
        session, handles = await _session(Path(tmp), fake)
        started = time.perf_counter()
        events = [e async for e in session.send(GOAL)]
        wall = time.perf_counter() - started
        assert events[-1].kind == "turn_done", events[-1]
        tokens, _ = await _ledger(handles[0], str(session.session_id))
        await _close(session, handles)
    return {"wall": wall, "tokens": tokens}


async def main(quick: bool) -> None:
    latency, runs = (0.25, 1) if quick else (1.0, 3)
    staggered = await median_run(latency, runs, stagger=True)
    together = await median_run(latency, runs, stagger=False)
    unverified = await median_run(latency, runs, stagger=True, verify=False)
    alone = await direct(latency)
    speedup = staggered["serial"] / staggered["wall"]
    print(
        f"Delegation of {len(PARTS)} independent subtasks, {latency:g} s model latency each"
        f" (median of {runs} run{'s' if runs > 1 else ''})"
    )
    print(f"{'measure':<52} {'value':>12}")
    print("-" * 65)
    rows = [
        ("serial sum of the subtask model calls (s)", f"{staggered['serial']:.2f}"),
        ("delegation wall time, plan + run + verify (s)", f"{staggered['wall']:.2f}"),
        ("  planning (s)", f"{staggered['planning']:.2f}"),
        ("  sub-agents, until the last one answered (s)", f"{staggered['running']:.2f}"),
        ("  verifying the last one and reporting (s)", f"{staggered['verifying']:.2f}"),
        ("speed-up vs serial (goal >= 3x)", f"{speedup:.1f}x"),
        ("delegation wall time, --no-verify (s)", f"{unverified['wall']:.2f}"),
        ("sub-agent tokens", f"{staggered['work']:,}"),
        ("plan + verify tokens", f"{staggered['overhead']:,}"),
        (
            "plan + verify overhead vs sub-agent work",
            f"{staggered['overhead'] / staggered['work']:.0%}",
        ),
        ("doing the work directly in one turn: tokens", f"{alone['tokens']:,}"),
        (
            "delegation tokens vs direct",
            f"{(staggered['work'] + staggered['overhead']) / alone['tokens']:.2f}x",
        ),
        ("direct turn wall time (s)", f"{alone['wall']:.2f}"),
        ("cache-read share of subtask input, staggered", f"{staggered['cache_read']:.0%}"),
        ("cache-read share of subtask input, all at once", f"{together['cache_read']:.0%}"),
        ("wall time without staggering (s)", f"{together['wall']:.2f}"),
    ]
    for name, value in rows:
        print(f"{name:<52} {value:>12}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a quarter of the latency (CI)")
    asyncio.run(main(parser.parse_args().quick))
