"""Search text of any length costs what its first words cost, and the result says so."""

from __future__ import annotations

from typing import TYPE_CHECKING

from loom_jupyter.archive.ranking import all_words, plan_query
from loom_jupyter.archive.readable import search_for_people
from loom_jupyter.messages import TurnDraft
from loom_jupyter.query import MAX_QUERY_CHARS, MAX_QUERY_WORDS, clip_query
from loom_jupyter.session.search_view import render_matches

if TYPE_CHECKING:
    from loom_jupyter.archive import Archive

TOPICS = ["revenue", "churn", "threshold", "holdout", "region", "quarter", "seaborn", "merge"]


def _megabyte_query() -> str:
    words = [TOPICS[i % len(TOPICS)] + str(i % 7) for i in range(200_000)]
    return " ".join(words)[:1_048_576]


def test_a_short_query_is_kept_whole() -> None:
    clipped = clip_query("churn threshold for the holdout set")
    assert clipped.text == "churn threshold for the holdout set"
    assert clipped.note == ""


def test_a_megabyte_query_is_its_first_64_words() -> None:
    query = _megabyte_query()
    clipped = clip_query(query)
    assert len(clipped.text.split()) == MAX_QUERY_WORDS
    assert query.startswith(clipped.text)
    assert clipped.note == f"searched the first {MAX_QUERY_WORDS} words"


def test_exactly_64_words_is_not_cut() -> None:
    query = " ".join(f"w{i}" for i in range(MAX_QUERY_WORDS)) + " ?!"
    assert clip_query(query).note == ""


def test_one_huge_word_is_cut_to_the_character_cap() -> None:
    clipped = clip_query("a" * 1_000_000)
    assert clipped.text == "a" * MAX_QUERY_CHARS
    assert clipped.note == f"searched the first {MAX_QUERY_CHARS:,} characters"


def test_the_plan_of_a_long_query_is_the_plan_of_its_first_words() -> None:
    query = _megabyte_query()
    head = clip_query(query).text
    assert plan_query(query) == plan_query(head)
    assert all_words(query) == all_words(head)
    dotted = ".".join(["sales"] * 300_000)  # one giant identifier: a phrase of at most 64 words
    assert all(len(phrase) <= MAX_QUERY_WORDS for phrase in plan_query(dotted).phrases)


async def _notebook(archive: Archive, session: str) -> None:
    for i in range(40):
        topic = TOPICS[i % len(TOPICS)]
        text = f"turn {i}: we looked at {topic}{i % 7} and {TOPICS[(i * 3) % len(TOPICS)]}"
        await archive.append_turn(session, TurnDraft(role="user", content=text))


async def test_a_megabyte_query_finds_what_its_first_words_find(
    archive: Archive, session: str
) -> None:
    await _notebook(archive, session)
    query = _megabyte_query()
    head = clip_query(query).text
    hits = await archive.search(session, query, limit=10)
    assert hits
    assert hits == await archive.search(session, head, limit=10)
    people = await search_for_people(archive, query, session_id=session)
    assert [m.turn.turn_number for m in people] == [
        m.turn.turn_number for m in await search_for_people(archive, head, session_id=session)
    ]
    text = render_matches(people, query, where="this session")
    assert f"(The query is long: searched the first {MAX_QUERY_WORDS} words of it.)" in text
    assert len(text) < 20_000  # the heading quotes the start of the query, not a megabyte


async def test_before_turn_leaves_out_the_question_being_asked(
    archive: Archive, session: str
) -> None:
    await _notebook(archive, session)
    asked = await archive.append_turn(
        session, TurnDraft(role="user", content="what was the seaborn3 decision?")
    )
    everything = await archive.search(session, "seaborn3 decision", limit=10)
    assert everything[0].turn_number == asked
    earlier = await archive.search(session, "seaborn3 decision", limit=10, before_turn=asked)
    assert earlier
    assert all(hit.turn_number < asked for hit in earlier)
