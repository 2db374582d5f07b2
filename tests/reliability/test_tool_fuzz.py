"""Every tool's input schema, fuzzed: odd or huge inputs give ``is_error`` results, never a stall.

For each tool of the default registry, :func:`.fuzz.tool_inputs` derives inputs
from its schema: not an object, missing required keys, extra keys, wrong types,
500-level nesting, out-of-range numbers, empty and 1 MB strings, path-like and
SQL/FTS-like strings. Each call goes through :meth:`ToolRegistry.run` (validate,
run, cap, redact) with a real archive, a real notebook folder and the in-process
kernel bridge. Calls run on their own event-loop thread and are awaited with a
generous bound, so a call that blocks even its loop is reported as a stall (a
bound on hanging, not a timing goal). Inputs that break the schema, and paths
that leave the notebook's folder, must be refused; the rest may succeed, with a
bounded result. Nothing may appear outside the notebook's folder.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest

from loom_jupyter.archive import Archive, archive_path_for
from loom_jupyter.messages import ToolUseBlock, TurnDraft
from loom_jupyter.settings import Settings
from loom_jupyter.tools.base import ToolContext, ToolOutput
from loom_jupyter.tools.local_kernel import LocalKernel
from loom_jupyter.tools.registry import default_registry

from .fuzz import STALL, ToolProbe, _tree, tool_inputs

if TYPE_CHECKING:
    from collections.abc import Coroutine, Iterator
    from pathlib import Path

REGISTRY = default_registry()
SLACK = 2_000  # characters a capped result may add (the cut marker, a summary line)


class LoopThread:
    """An event loop on its own thread: a call that blocks the loop cannot block the test."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()

    def run(self, coro: Coroutine[Any, Any, Any], timeout: float = STALL) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=STALL)


@dataclass
class Desk:
    """A notebook folder inside a watched sandbox, its archive and a tool context."""

    sandbox: Path
    folder: Path
    archive: Archive
    ctx: ToolContext


@pytest.fixture(scope="module")
def loop() -> Iterator[LoopThread]:
    thread = LoopThread()
    yield thread
    thread.stop()


@pytest.fixture
def desk(tmp_path: Path, loop: LoopThread) -> Iterator[Desk]:
    folder = tmp_path / "a" / "project"
    folder.mkdir(parents=True)
    (folder / "notes.txt").write_text("alpha\nokapi word\n" * 20)
    archive, sid = loop.run(_archive(folder))
    ctx = ToolContext(
        notebook_dir=folder,
        settings=Settings(),
        kernel=LocalKernel(),
        notebook_path=folder / "nb.ipynb",
        archive=archive,
        session_id=sid,
    )
    yield Desk(tmp_path, folder, archive, ctx)
    loop.run(archive.close())


async def _archive(folder: Path) -> tuple[Archive, str]:
    archive = await Archive.open(archive_path_for(folder / "nb.ipynb"))
    sid = await archive.create_session(notebook_path=str(folder / "nb.ipynb"), model="m")
    for text in ("remember the okapi", "Noted: okapi.", "what about NEAR(x"):
        role = "assistant" if text.startswith("Noted") else "user"
        await archive.append_turn(sid, TurnDraft(role=role, content=text))
    return archive, sid


def test_every_tool_gets_odd_inputs_for_each_property() -> None:
    counts = {spec.name: len(tool_inputs(spec.input_schema)) for spec in REGISTRY.specs()}
    assert set(counts) == set(REGISTRY.names())
    assert all(count >= 40 for count in counts.values()), counts
    assert sum(counts.values()) >= 1000


@pytest.mark.parametrize("name", REGISTRY.names())
def test_odd_inputs_give_error_results_never_a_stall(
    name: str, desk: Desk, loop: LoopThread
) -> None:
    spec = REGISTRY.get(name)
    assert spec is not None
    before = _tree(desk.sandbox, desk.folder)
    problems = []
    for number, probe in enumerate(tool_inputs(spec.spec.input_schema)):
        call = ToolUseBlock(f"toolu_fuzz_{number}", name, probe.input)
        try:
            output = loop.run(REGISTRY.run(call, desk.ctx))
        except TimeoutError:
            pytest.fail(f"{name} stalled on {probe.label} (no answer in {STALL:g} s)")
        problems += _problems(probe, output, desk.ctx.settings.tool_output_max_chars)
    assert problems == []
    assert sorted(_tree(desk.sandbox, desk.folder) - before) == []
    assert _integrity(desk.folder) == [("ok",)]


def _integrity(folder: Path) -> list[tuple[Any, ...]]:
    path = archive_path_for(folder / "nb.ipynb", create=False)
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        return db.execute("PRAGMA integrity_check").fetchall()


def _problems(probe: ToolProbe, output: ToolOutput, cap: int) -> list[str]:
    found = []
    if not isinstance(output, ToolOutput):
        found.append(f"{probe.label}: returned {type(output).__name__}")
        return found
    if (probe.invalid or probe.escapes) and not output.is_error:
        found.append(f"{probe.label}: accepted ({output.text_content[:120]!r})")
    if len(output.text_content) > cap + SLACK:
        found.append(f"{probe.label}: {len(output.text_content):,} characters (cap {cap:,})")
    return found
