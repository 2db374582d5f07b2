"""conversation_recall against a real SQLite archive: every action, context, merging, budget."""

from __future__ import annotations

import dataclasses
import re
from typing import TYPE_CHECKING, Any

import pytest

from loom_jupyter.archive import Archive
from loom_jupyter.messages import TextBlock, ToolResultBlock, ToolUseBlock, TurnDraft

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

    from loom_jupyter.tools.base import ToolContext

    from .conftest import Caller

NOTEBOOK = "/work/sales.ipynb"


@pytest.fixture
async def archive(tmp_path: Path) -> AsyncIterator[Archive]:
    path = tmp_path / ".loom" / "sales.ipynb.sqlite"
    path.parent.mkdir()
    async with Archive.open(path) as opened:
        yield opened


@pytest.fixture
async def session(archive: Archive) -> str:
    return await archive.create_session(notebook_path=NOTEBOOK, model="claude-test")


@pytest.fixture
def recall(call: Caller, archive: Archive, session: str) -> Caller:
    call.ctx = dataclasses.replace(call.ctx, archive=archive, session_id=session)
    return call


async def say(archive: Archive, sid: str, role: str, text: str) -> int:
    return await archive.append_turn(sid, TurnDraft(role=role, content=text))  # type: ignore[arg-type]


async def tool_exchange(
    archive: Archive,
    sid: str,
    name: str,
    args: dict[str, Any],
    result: str,
    *,
    is_error: bool = False,
) -> int:
    """An assistant turn calling ``name``, then its result turn; returns the result's number."""
    use = ToolUseBlock(f"toolu_{name}_{len(result)}", name, args)
    await archive.append_turn(
        sid,
        TurnDraft(
            role="assistant", content="Let me check.", blocks=(TextBlock("Let me check."), use)
        ),
    )
    block = ToolResultBlock(use.id, (TextBlock(result),), is_error)
    return await archive.append_turn(
        sid,
        TurnDraft(
            role="tool",
            content=result,
            blocks=(block,),
            tool_name=name,
            tool_call_id=use.id,
            tool_input=args,
            is_error=is_error,
        ),
    )


async def filler(archive: Archive, sid: str, count: int) -> None:
    for i in range(count):
        role = "user" if i % 2 == 0 else "assistant"
        await say(archive, sid, role, f"ordinary chatter number {i} about quarterly numbers")


def turn_numbers(text: str) -> list[int]:
    return [int(n) for n in re.findall(r"\[(?:Session \w+ )?Turn (\d+)\]", text)]


async def test_search_returns_hits_with_one_turn_of_context(
    archive: Archive, session: str, recall: Caller
) -> None:
    await filler(archive, session, 8)
    hit = await say(archive, session, "user", "Constraint: never use seaborn, matplotlib only.")
    await filler(archive, session, 8)
    out = await recall("conversation_recall", action="search", query="seaborn")
    assert not out.is_error
    text = out.text_content
    numbers = turn_numbers(text)
    assert {hit - 1, hit, hit + 1} <= set(numbers)
    assert numbers == sorted(set(numbers))  # one merged window, in order, no repeats
    assert f"[Turn {hit}] (match) user: Constraint: never use seaborn" in text
    assert f"[Turn {hit - 1}] assistant: ordinary chatter" in text
    assert text.count("] (match)") == 1


async def test_overlapping_hit_windows_are_merged(
    archive: Archive, session: str, recall: Caller
) -> None:
    await filler(archive, session, 4)
    first = await say(archive, session, "user", "The churn model uses gradient boosting.")
    await say(archive, session, "assistant", "Noted: churn model with gradient boosting.")
    await filler(archive, session, 6)
    far = await say(archive, session, "user", "Retrain the churn model monthly.")
    await filler(archive, session, 2)
    out = await recall("conversation_recall", action="search", query="churn model")
    numbers = turn_numbers(out.text_content)
    assert len(numbers) == len(set(numbers))  # no turn shown twice
    assert {first - 1, first, first + 1, first + 2, far - 1, far, far + 1} <= set(numbers)
    marked = re.findall(r"\[Turn (\d+)\] \(match\)", out.text_content)
    assert sorted(int(n) for n in marked) == [first, first + 1, far]


async def test_search_without_matches_or_query(
    recall: Caller, archive: Archive, session: str
) -> None:
    await filler(archive, session, 3)
    none = await recall("conversation_recall", action="search", query="xylophone")
    assert not none.is_error
    assert none.text_content == "No matches for 'xylophone' in this conversation."
    empty = await recall("conversation_recall", action="search")
    assert empty.is_error
    assert "needs a `query`" in empty.text_content


async def test_search_all_sessions_tags_other_sessions(
    archive: Archive, session: str, recall: Caller
) -> None:
    other = await archive.create_session(notebook_path=NOTEBOOK, model="claude-test")
    await filler(archive, other, 2)
    await say(archive, other, "user", "The warehouse password rotates every Friday.")
    await filler(archive, session, 2)
    local = await recall("conversation_recall", action="search", query="warehouse rotates")
    assert "No matches" in local.text_content
    wide = await recall(
        "conversation_recall", action="search", query="warehouse rotates", all_sessions=True
    )
    assert f"[Session {other[:8]} Turn 3] (match) user: The warehouse password" in wide.text_content


async def test_range_shows_turns_verbatim_with_tool_calls_inline(
    archive: Archive, session: str, recall: Caller
) -> None:
    await say(archive, session, "user", "Load sales.csv please.")
    result = await tool_exchange(
        archive,
        session,
        "run_python",
        {"code": "df = pd.read_csv('sales.csv')"},
        "In [1]:\n(no output)",
    )
    await say(archive, session, "assistant", "Loaded: 1,200 rows.")
    out = await recall("conversation_recall", action="range", start_turn=1, end_turn=result + 1)
    text = out.text_content
    assert text.startswith(f"Turns 1-{result + 1}:")
    assert "[Turn 1] user: Load sales.csv please." in text
    assert (
        '[Turn 2] assistant: Let me check.\n  -> called run_python({"code": "df = pd.read_csv'
        in text
    )
    assert "[Turn 3] tool result of run_python: In [1]:\n(no output)" in text
    assert "[Turn 4] assistant: Loaded: 1,200 rows." in text


async def test_range_bounds_are_checked(archive: Archive, session: str, recall: Caller) -> None:
    await filler(archive, session, 5)
    neither = await recall("conversation_recall", action="range")
    assert neither.is_error
    assert "has 5 turns" in neither.text_content
    past = await recall("conversation_recall", action="range", start_turn=9)
    assert past.is_error
    assert "past the end" in past.text_content
    backwards = await recall("conversation_recall", action="range", start_turn=4, end_turn=2)
    assert backwards.is_error
    only_end = await recall("conversation_recall", action="range", end_turn=3)
    assert turn_numbers(only_end.text_content) == [1, 2, 3]
    clamped = await recall("conversation_recall", action="range", start_turn=4, end_turn=99)
    assert turn_numbers(clamped.text_content) == [4, 5]


async def test_tool_calls_by_name_newest_first(
    archive: Archive, session: str, recall: Caller
) -> None:
    await tool_exchange(archive, session, "shell", {"command": "ls"}, "a.csv\nb.csv")
    first = await tool_exchange(
        archive, session, "run_python", {"code": "1/0"}, "ZeroDivisionError", is_error=True
    )
    second = await tool_exchange(archive, session, "run_python", {"code": "2 + 2"}, "[result]\n4")
    out = await recall("conversation_recall", action="tool_calls", tool_name="run_python")
    text = out.text_content
    assert text.startswith("2 most recent run_python calls, newest first:")
    assert turn_numbers(text) == [second, first]
    expected = (
        f'[Turn {first}] run_python (error): input={{"code": "1/0"}}\nresult: ZeroDivisionError'
    )
    assert expected in text
    assert "shell" not in text
    every = await recall("conversation_recall", action="tool_calls", limit=5)
    assert len(turn_numbers(every.text_content)) == 3
    none = await recall("conversation_recall", action="tool_calls", tool_name="edit_file")
    assert none.text_content == "No past edit_file calls in this conversation."


async def test_summary_has_session_state_and_stats(
    archive: Archive, session: str, recall: Caller
) -> None:
    await filler(archive, session, 4)

    async def state() -> str:
        return "session:\n  turns: 4\nkey_decisions:\n  - turn 1: never use seaborn"

    recall.ctx = dataclasses.replace(recall.ctx, session_summary=state)
    out = await recall("conversation_recall", action="summary")
    text = out.text_content
    assert text.startswith("session:\n  turns: 4")
    assert "never use seaborn" in text
    assert "turns archived: 4" in text
    assert "model requests: 0" in text


async def test_budget_cuts_tool_results_before_messages(
    archive: Archive, session: str, recall: Caller
) -> None:
    recall.ctx = _budgeted(recall.ctx, tokens=600)  # 2,400 characters
    question = "Why is the Q3 revenue lower than Q2? " * 10
    await say(archive, session, "user", question.strip())
    big = await tool_exchange(archive, session, "run_python", {"code": "df"}, "row data " * 2000)
    await say(archive, session, "assistant", "Because of the returns in August.")
    out = await recall("conversation_recall", action="range", start_turn=1, end_turn=big + 1)
    text = out.text_content
    assert len(text) <= 2400
    assert question.strip() in text  # user text kept whole
    assert "Because of the returns in August." in text
    assert f"[Turn {big}] tool result of run_python: row data" in text
    assert f"chars cut; full text: action=range, start_turn={big}, end_turn={big}]" in text
    assert "1 tool result(s) shortened" in text
    assert "message(s) shortened" not in text


async def test_budget_then_shortens_messages_and_drops_turns_saying_how_to_continue(
    archive: Archive, session: str, recall: Caller
) -> None:
    recall.ctx = _budgeted(recall.ctx, tokens=400)  # 1,600 characters
    for i in range(1, 11):
        await say(archive, session, "user", f"message {i}: " + "long words " * 150)
    out = await recall("conversation_recall", action="range", start_turn=1, end_turn=10)
    text = out.text_content
    assert len(text) <= 1600
    shown = turn_numbers(text)
    assert shown[0] == 1
    assert shown == list(range(1, len(shown) + 1))
    assert len(shown) < 10
    assert "message(s) shortened" in text
    assert f"continue with start_turn={len(shown) + 1}" in text


async def test_search_budget_drops_lowest_ranked_groups(
    archive: Archive, session: str, recall: Caller
) -> None:
    recall.ctx = _budgeted(recall.ctx, tokens=350)
    for _ in range(6):
        await say(archive, session, "user", "budget keyword " + "padding " * 120)
        await filler(archive, session, 9)
    out = await recall("conversation_recall", action="search", query="keyword")
    assert len(out.text_content) <= 1400
    assert "lower-ranked hit group(s) not shown" in out.text_content


async def test_without_an_archive_recall_says_so(call: Caller) -> None:
    out = await call("conversation_recall", action="search", query="anything")
    assert out.is_error
    assert "no conversation archive" in out.text_content
    summary = await call("conversation_recall", action="summary")
    assert summary.is_error


async def test_an_unknown_action_is_refused_by_the_schema(recall: Caller) -> None:
    out = await recall("conversation_recall", action="forget")
    assert out.is_error
    assert "action must be one of 'search', 'range', 'tool_calls', 'summary'" in out.text_content


def _budgeted(ctx: ToolContext, *, tokens: int) -> ToolContext:
    return dataclasses.replace(ctx, settings=ctx.settings.replace(recall_output_tokens=tokens))


async def test_tool_calls_preview_long_results(
    archive: Archive, session: str, recall: Caller
) -> None:
    long = "\n".join(f"row {i}" for i in range(2000))
    number = await tool_exchange(archive, session, "shell", {"command": "seq 2000"}, long)
    out = await recall("conversation_recall", action="tool_calls", tool_name="shell")
    text = out.text_content
    assert "result: row 0\nrow 1\n" in text
    assert "row 1999" in text
    assert "row 1000\n" not in text
    assert f"full text: action=range, start_turn={number}, end_turn={number}]" in text
    assert len(text) < 2500
