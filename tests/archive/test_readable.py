"""Search for people: only turns that say it, phrase before scattered words, context under hits."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from loom_jupyter.archive.readable import match_expressions, search_for_people
from loom_jupyter.messages import TurnDraft

if TYPE_CHECKING:
    from loom_jupyter.archive import Archive

TURNS = [
    ("user", "Load the monthly table and show me revenue by region."),
    ("assistant", "Loaded it: twelve months, four regions."),
    ("user", "Which units did the east region sell?"),
    ("assistant", "Mostly small units; east sold 120 of them, the most of any month."),
    ("user", "And which region sold the most units overall?"),
    ("assistant", "North sold the most units overall: 4,210."),
    ("user", "Plot it."),
    ("assistant", "Here is the bar chart."),
    ("user", "What was total revenue in March?"),
    ("assistant", "March revenue was 81,300."),
    ("user", "Thanks, save the chart."),
    ("assistant", "Saved to chart.png."),
]


async def fill(archive: Archive, session: str) -> None:
    for role, text in TURNS:
        await archive.append_turn(session, TurnDraft(role=role, content=text))  # type: ignore[arg-type]


async def test_only_turns_that_say_it_come_back_with_neighbours_as_context(
    archive: Archive, session: str
) -> None:
    await fill(archive, session)
    matches = await search_for_people(archive, "revenue", session_id=session)
    assert sorted(m.turn.turn_number for m in matches) == [1, 9, 10]
    by_turn = {m.turn.turn_number: m for m in matches}
    assert by_turn[1].before is None
    assert by_turn[1].after is not None
    assert by_turn[1].after.turn_number == 2
    assert by_turn[9].before is not None
    assert by_turn[9].before.turn_number == 8


async def test_the_exact_phrase_ranks_before_scattered_words(
    archive: Archive, session: str
) -> None:
    await fill(archive, session)
    matches = await search_for_people(archive, "most units", session_id=session)
    kinds = [(m.turn.turn_number, m.kind) for m in matches]
    assert {n for n, kind in kinds if kind == "phrase"} == {5, 6}
    assert [kind for _, kind in kinds[:2]] == ["phrase", "phrase"]
    assert (4, "all_words") in kinds
    assert (3, "some_words") in kinds
    assert kinds.index((4, "all_words")) < kinds.index((3, "some_words"))


async def test_a_one_word_querys_hits_are_exact(archive: Archive, session: str) -> None:
    await fill(archive, session)
    matches = await search_for_people(archive, "REVENUE", session_id=session)
    assert matches
    assert {m.kind for m in matches} == {"phrase"}


async def test_limit_and_other_sessions(archive: Archive, session: str, notebook: str) -> None:
    await fill(archive, session)
    other = await archive.create_session(notebook_path=notebook, model="m")
    await archive.append_turn(other, TurnDraft(role="user", content="revenue again"))
    assert len(await search_for_people(archive, "revenue", session_id=session, limit=2)) == 2
    everywhere = await search_for_people(archive, "revenue")
    assert {m.session_id for m in everywhere} == {session, other}


async def test_user_text_never_becomes_fts_syntax(archive: Archive, session: str) -> None:
    await fill(archive, session)
    assert await search_for_people(archive, 'NEAR("x" AND (* OR', session_id=session) == []
    assert await search_for_people(archive, "  ", session_id=session) == []
    for _, expression in match_expressions('a "b" c* NOT d'):
        assert "*" not in expression


async def test_a_match_as_json_for_the_sidebar(archive: Archive, session: str) -> None:
    await fill(archive, session)
    match = (await search_for_people(archive, "chart.png", session_id=session))[0]
    data = json.loads(json.dumps(match.to_json()))
    assert data["kind"] == "phrase"
    assert data["match"]["turn_number"] == 12
    assert data["before"]["content"] == "Thanks, save the chart."
    assert data["after"] is None
