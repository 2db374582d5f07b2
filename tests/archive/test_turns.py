"""Turns: append, read back verbatim, ranges, the recent window, tool calls."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import pytest

from loom_jupyter.errors import ArchiveError, TurnNotFoundError
from loom_jupyter.messages import TextBlock, ToolResultBlock, ToolUseBlock, TurnDraft

if TYPE_CHECKING:
    from loom_jupyter.archive import Archive


async def test_turns_round_trip_verbatim(archive: Archive, session: str) -> None:
    text = "Héllo 👋\n  keep   spacing\ttabs\x00and nul"
    use = ToolUseBlock("tu_1", "run_python", {"code": "print(1)", "n": [1, 2]})
    assert await archive.append_turn(session, TurnDraft(role="user", content=text)) == 1
    assert (
        await archive.append_turn(
            session,
            TurnDraft(
                role="assistant",
                content="Running.",
                blocks=(TextBlock("Running."), use),
                token_count=12,
                status="partial",
                kernel_session="k1",
                execution_count=7,
            ),
        )
        == 2
    )
    result = ToolResultBlock("tu_1", (TextBlock("1"),), is_error=True)
    assert (
        await archive.append_turn(
            session,
            TurnDraft(
                role="tool",
                content="1",
                blocks=(result,),
                tool_name="run_python",
                tool_call_id="tu_1",
                tool_input={"code": "print(1)"},
                is_error=True,
            ),
        )
        == 3
    )
    first, second, third = await archive.get_turns(session)
    assert first.content == text
    assert second.blocks == (TextBlock("Running."), use)
    assert (second.token_count, second.status, second.kernel_session, second.execution_count) == (
        12,
        "partial",
        "k1",
        7,
    )
    assert third.blocks == (result,)
    assert (third.tool_name, third.tool_call_id, third.is_error) == ("run_python", "tu_1", True)
    assert third.tool_input == {"code": "print(1)"}
    assert await archive.get_turn(session, 2) == second
    assert await archive.last_turn_number(session) == 3


async def test_missing_turn_and_bad_values(archive: Archive, session: str) -> None:
    with pytest.raises(TurnNotFoundError, match="no turn 4"):
        await archive.get_turn(session, 4)
    with pytest.raises(LookupError):
        await archive.get_turn(session, 1)
    with pytest.raises(ArchiveError, match="unknown turn role"):
        await archive.append_turn(session, TurnDraft(role="robot", content="x"))  # type: ignore[arg-type]
    with pytest.raises(ArchiveError, match="unknown turn status"):
        await archive.append_turn(session, TurnDraft(role="user", content="x", status="??"))  # type: ignore[arg-type]
    assert await archive.last_turn_number(session) == 0


async def test_ranges(archive: Archive, session: str) -> None:
    for i in range(1, 11):
        await archive.append_turn(session, TurnDraft(role="user", content=str(i)))
    assert [t.turn_number for t in await archive.get_turns(session, 3, 5)] == [3, 4, 5]
    assert [t.turn_number for t in await archive.get_turns(session, 9)] == [9, 10]
    assert [t.turn_number for t in await archive.get_turns(session, end=2)] == [1, 2]
    assert await archive.get_turns(session, 11, 20) == []


async def test_recent_window_fits_the_budget(archive: Archive, session: str) -> None:
    for i in range(1, 301):
        await archive.append_turn(session, TurnDraft(role="user", content=str(i), token_count=10))
    window = await archive.recent_turns(session, token_budget=1234)
    assert [t.turn_number for t in window] == list(range(178, 301))  # 123 turns x 10 tokens
    capped = await archive.recent_turns(session, token_budget=10_000, max_turns=5)
    assert [t.turn_number for t in capped] == [296, 297, 298, 299, 300]
    everything = await archive.recent_turns(session, token_budget=10**9)
    assert len(everything) == 300
    await archive.append_turn(session, TurnDraft(role="user", content="huge", token_count=5000))
    assert await archive.recent_turns(session, token_budget=1000) == []


async def test_recent_window_of_an_empty_session(archive: Archive, session: str) -> None:
    assert await archive.recent_turns(session, token_budget=1000) == []


async def test_tool_calls_newest_first(archive: Archive, session: str) -> None:
    await archive.append_turn(session, TurnDraft(role="user", content="go"))
    for i, name in enumerate(["run_python", "read_file", "run_python"]):
        await archive.append_turn(
            session,
            TurnDraft(
                role="tool",
                content=f"out {i}",
                tool_name=name,
                tool_call_id=f"tu_{i}",
                tool_input={"i": i},
            ),
        )
    calls = await archive.tool_calls(session)
    assert [(c.turn_number, c.tool_name) for c in calls] == [
        (4, "run_python"),
        (3, "read_file"),
        (2, "run_python"),
    ]
    only = await archive.tool_calls(session, tool_name="run_python", limit=1)
    assert [(c.turn_number, c.tool_input, c.content) for c in only] == [(4, {"i": 2}, "out 2")]


async def test_concurrent_appends_in_one_process_get_distinct_numbers(
    archive: Archive, session: str
) -> None:
    numbers = await asyncio.gather(
        *(archive.append_turn(session, TurnDraft(role="user", content=f"c{i}")) for i in range(50))
    )
    assert sorted(numbers) == list(range(1, 51))
    turns = await archive.get_turns(session)
    assert {t.content for t in turns} == {f"c{i}" for i in range(50)}
