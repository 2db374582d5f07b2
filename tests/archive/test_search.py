"""Search: the safe query builder, bm25 ranking, scoping to one session or the notebook."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from loom_jupyter.messages import TurnDraft

if TYPE_CHECKING:
    from loom_jupyter.archive import Archive

NASTY_QUERIES = [
    '"',
    '""',
    '"unbalanced quote',
    "*",
    "prefix*",
    "NEAR",
    "NEAR(a b)",
    "NEAR(a b, 2)",
    "a AND b",
    "OR",
    "AND OR NOT",
    "NOT merge",
    "(",
    ")",
    "((dataframe",
    "col:value",
    "content:merge",
    "^start",
    "merge-sort",
    "-",
    "--",
    "+",
    "{a b}",
    "[x]",
    "a'b",
    "'",
    "\\",
    ";DROP TABLE conversation_turns;--",
    "",
    "   ",
    "!!!???",
    "...",
    "___",
    "😀",
    "naïve café",
    "数据框",
    "x" * 5000,
    " ".join(f"w{i}" for i in range(200)),
    "\x00null",
    "tab\tnew\nline",
]


async def _filled(archive: Archive, session: str) -> None:
    texts = [
        "Load the sales data into a dataframe",
        "Merge-sort the rows by date; NEAR the end keep NOT NULL values",
        'He said "quoted words" (in parentheses) col:value',
        "naïve café 数据框 analysis",
        "prefix matching is not a thing here",
    ]
    for text in texts:
        await archive.append_turn(session, TurnDraft(role="user", content=text))


@pytest.mark.parametrize("query", NASTY_QUERIES)
async def test_any_text_is_a_safe_query(archive: Archive, session: str, query: str) -> None:
    await _filled(archive, session)
    hits = await archive.search(session, query, limit=5)
    assert all(hit.session_id == session for hit in hits)


@pytest.mark.parametrize(
    ("query", "expected_turn"),
    [
        ("merge-sort", 2),
        ("NEAR", 2),
        ('"quoted words"', 3),
        ("col:value", 3),
        ("(in parentheses", 3),
        ("NAIVE cafe", 4),
        ("数据框", 4),
        ("dataframes", 1),  # porter stemming
        ("prefix*", 5),
    ],
)
async def test_special_text_finds_the_turn(
    archive: Archive, session: str, query: str, expected_turn: int
) -> None:
    await _filled(archive, session)
    hits = await archive.search(session, query, limit=5)
    assert hits
    assert hits[0].turn_number == expected_turn


async def test_words_only_punctuation_and_stopwords(archive: Archive, session: str) -> None:
    await archive.append_turn(session, TurnDraft(role="user", content="the cat sat on the mat"))
    await archive.append_turn(session, TurnDraft(role="user", content="dogs bark"))
    assert await archive.search(session, "!!! ??? ---") == []
    # Hits may include a matching turn's neighbours (context) after it.
    assert (await archive.search(session, "the"))[0].turn_number == 1
    assert (await archive.search(session, "the dog"))[0].turn_number == 2


async def test_ranking_prefers_more_matching_words(archive: Archive, session: str) -> None:
    await archive.append_turn(session, TurnDraft(role="user", content="plot the revenue"))
    await archive.append_turn(
        session, TurnDraft(role="assistant", content="revenue by region plot, monthly")
    )
    await archive.append_turn(session, TurnDraft(role="user", content="something unrelated"))
    hits = await archive.search(session, "monthly revenue plot", limit=10)
    assert [h.turn_number for h in hits][:2] == [2, 1]
    assert hits[0].score > hits[1].score
    assert hits[0].role == "assistant"
    assert hits[0].content == "revenue by region plot, monthly"


async def test_ties_go_to_the_newest_turn(archive: Archive, session: str) -> None:
    for _ in range(3):
        await archive.append_turn(session, TurnDraft(role="user", content="same words again"))
    hits = await archive.search(session, "same words", limit=10)
    assert [h.turn_number for h in hits] == [3, 2, 1]


async def test_search_is_scoped_to_the_session_or_the_notebook(
    archive: Archive, notebook: str
) -> None:
    first = await archive.create_session(notebook_path=notebook, model="m")
    second = await archive.create_session(notebook_path=notebook, model="m")
    other = await archive.create_session(notebook_path="/elsewhere.ipynb", model="m")
    for sid in (first, second, other):
        await archive.append_turn(sid, TurnDraft(role="user", content="gradient boosting"))
    assert {h.session_id for h in await archive.search(first, "boosting")} == {first}
    wide = await archive.search(first, "boosting", all_sessions=True)
    assert {h.session_id for h in wide} == {first, second}


async def test_limit_and_tool_turns(archive: Archive, session: str) -> None:
    for i in range(12):
        await archive.append_turn(
            session,
            TurnDraft(
                role="tool", content=f"result {i}", tool_name="run_python", tool_call_id=f"t{i}"
            ),
        )
    hits = await archive.search(session, "run_python", limit=4)
    assert len(hits) == 4
    assert hits[0].tool_name == "run_python"
    assert await archive.search(session, "result", limit=0) == []
