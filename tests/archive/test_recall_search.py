"""Ordinary recall through ``Archive.search`` with the issue-5 ranking (synthetic data only)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from loom_jupyter.archive.search import COMMON_TERM
from loom_jupyter.messages import TurnDraft

if TYPE_CHECKING:
    from loom_jupyter.archive import Archive

FILLER = [
    "Let us look at the churn numbers for the last quarter first.",
    "The plot axis labels overlap, rotate them by forty five degrees.",
    "Customers in the north region renewed more often than expected.",
    "I will keep the notebook tidy and move helpers into a module.",
    "The median basket size grew slightly after the spring promotion.",
    "Please remember to pin the package versions in requirements.",
]


async def _add(archive: Archive, session: str, *texts: str) -> list[int]:
    return [
        await archive.append_turn(session, TurnDraft(role="user", content=text)) for text in texts
    ]


async def _top(archive: Archive, session: str, query: str, limit: int = 10) -> list[int]:
    return [hit.turn_number for hit in await archive.search(session, query, limit=limit)]


async def test_identifier_ranks_first_among_turns_sharing_its_parts(
    archive: Archive, session: str
) -> None:
    await _add(
        archive,
        session,
        "sales sales sales for 2024: sales in 2024 beat sales in 2023",
        "df sales report: the df has sales columns and 2024 rows",
        *FILLER,
    )
    (target,) = await _add(archive, session, "I stored the merged frame as df_sales_2024 for later")
    await _add(archive, session, *FILLER, "sales 2024 sales 2024 sales 2024")
    assert (await _top(archive, session, "df_sales_2024"))[0] == target
    assert (await _top(archive, session, "where is df_sales_2024 defined?"))[0] == target


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("ValueError", "ValueError: could not convert string to float: 'n/a'"),
        ("sales_2024.csv", "Saved the cleaned table to data/sales_2024.csv (1.2 MB)."),
        ("report_v2-final.xlsx", "The deck uses report_v2-final.xlsx as its source."),
        ('"gradient boosting"', "A gradient boosting model beat the baseline."),
    ],
)
async def test_exact_tokens_and_phrases_win(
    archive: Archive, session: str, query: str, expected: str
) -> None:
    await _add(
        archive,
        session,
        "Traceback (most recent call last): File cell 3; KeyError: 'date'",
        "Loaded sales_2023.csv and the 2024 sales notes; csv files are in data/",
        "The report is final; v2 of the xlsx export is pending.",
        "Boosting the learning rate helped; the gradient was noisy though.",
        *FILLER,
        expected,
        *FILLER,
    )
    hits = await archive.search(session, query, limit=5)
    assert hits[0].content == expected


@pytest.mark.parametrize(
    "query",
    [
        '"',
        '"merge unbalanced',
        "*",
        "merge*",
        "NEAR(merge sort)",
        "merge AND sort OR NOT",
        "(merge",
        "merge)",
        "^merge",
        "content:merge",
        "-merge",
        "merge - sort",
        "{merge sort}",
        "merge + sort",
        "merge's sort",
    ],
)
async def test_fts_syntax_in_queries_is_plain_text(
    archive: Archive, session: str, query: str
) -> None:
    (target,) = await _add(archive, session, "we merge sort the rows before plotting")
    await _add(archive, session, *FILLER)
    hits = await archive.search(session, query, limit=3)
    assert all(hit.session_id == session for hit in hits)
    if any(ch.isalpha() for ch in query):
        assert hits[0].turn_number == target


@pytest.mark.parametrize("query", ["", "   ", "\t\n", "!!! ??? ---", "...", "___", "😀🎉", '"" ()'])
async def test_queries_without_words_return_nothing(
    archive: Archive, session: str, query: str
) -> None:
    await _add(archive, session, "anything at all", *FILLER)
    assert await archive.search(session, query) == []


async def test_unicode_text_is_found(archive: Archive, session: str) -> None:
    await _add(archive, session, *FILLER)
    (cafe,) = await _add(archive, session, "Notes from the naïve café analysis in Zürich")
    (chinese,) = await _add(archive, session, "数据框 的 列 名")
    await _add(archive, session, *FILLER)
    assert (await _top(archive, session, "NAIVE CAFE"))[0] == cafe
    assert (await _top(archive, session, "zurich"))[0] == cafe
    assert (await _top(archive, session, "数据框"))[0] == chinese


async def test_equal_scores_go_to_the_newest_turn(archive: Archive, session: str) -> None:
    first = await _add(archive, session, "quarterly forecast ready", *FILLER)
    second = await _add(archive, session, "quarterly forecast ready", *FILLER)
    third = await _add(archive, session, "quarterly forecast ready", *FILLER)
    top = await _top(archive, session, "quarterly forecast", limit=3)
    assert top == [third[0], second[0], first[0]]


async def test_common_words_still_rank_with_rarer_ones(archive: Archive, session: str) -> None:
    # More than COMMON_TERM turns hold "report": it is scored by presence, not bm25.
    texts = [f"{FILLER[i % len(FILLER)]} Weekly report number {i}." for i in range(COMMON_TERM)]
    await _add(archive, session, *texts[:500])
    (both,) = await _add(archive, session, "The margin report shows thinner margin in May.")
    await _add(archive, session, *texts[500:])
    (rare,) = await _add(archive, session, "The margin dipped, nobody knows why.")
    await _add(archive, session, *FILLER)
    top = await _top(archive, session, "margin report")
    assert top[:2] == [both, rare]
    hits = await archive.search(session, "weekly report", limit=5)
    assert len(hits) == 5
    assert all("report" in hit.content for hit in hits)


async def test_matching_turns_outrank_unrelated_ones_in_a_tiny_archive(
    archive: Archive, session: str
) -> None:
    # FTS5 gives words found in half the rows no weight at all; the ranking must not.
    await _add(archive, session, "plot the revenue", "revenue by region plot, monthly", "ok")
    assert (await _top(archive, session, "monthly revenue plot"))[:2] == [2, 1]


async def test_reply_is_found_through_the_question_it_answers(
    archive: Archive, session: str
) -> None:
    await _add(archive, session, *FILLER)
    question, answer = await _add(
        archive,
        session,
        "Which smoothing window should the rolling average of daily signups use?",
        "Seven days; it hides the weekday dip.",
    )
    await _add(archive, session, *FILLER)
    top = await _top(archive, session, "rolling average window for daily signups", limit=3)
    assert top[0] == question
    assert answer in top


async def test_speaker_named_in_the_query_is_preferred(archive: Archive, session: str) -> None:
    await _add(
        archive,
        session,
        "Alice: I went hiking in the Alps last summer.",
        "Bob: Nice! I went hiking in Norway in June.",
        *[f"{name}: {text}" for name, text in zip(["Alice", "Bob"] * 3, FILLER, strict=True)],
    )
    hits = await archive.search(session, "Where did Bob go hiking?", limit=3)
    assert hits[0].content.startswith("Bob: Nice!")
    hits = await archive.search(session, "Where did Alice go hiking?", limit=3)
    assert hits[0].content.startswith("Alice: I went hiking")
    only_name = await archive.search(session, "Alice", limit=20)
    assert only_name
    assert all(hit.content.startswith("Alice:") for hit in only_name[:3])


async def test_a_capitalised_word_that_labels_no_turns_is_still_searched(
    archive: Archive, session: str
) -> None:
    await _add(archive, session, *FILLER, "We moved the office to Paris in May.", *FILLER)
    hits = await archive.search(session, "When did we move to Paris?", limit=3)
    assert hits[0].content == "We moved the office to Paris in May."


async def test_interleaved_and_forked_sessions_stay_apart(archive: Archive, notebook: str) -> None:
    left = await archive.create_session(notebook_path=notebook, model="m")
    right = await archive.create_session(notebook_path=notebook, model="m")
    for i, text in enumerate(FILLER):
        await archive.append_turn(left, TurnDraft(role="user", content=f"left {i}: {text}"))
        await archive.append_turn(right, TurnDraft(role="assistant", content=f"right {i}: {text}"))
    await archive.append_turn(
        left, TurnDraft(role="user", content="the shared keyword zebra, left side")
    )
    await archive.append_turn(
        right, TurnDraft(role="user", content="the shared keyword zebra, right side")
    )
    for session, side in ((left, "left"), (right, "right")):
        hits = await archive.search(session, "zebra")
        assert {hit.session_id for hit in hits} == {session}
        assert hits[0].turn_number == len(FILLER) + 1
        assert hits[0].content.endswith(f"{side} side")
    fork = await archive.fork_session(left, at_turn=3)
    await archive.append_turn(fork, TurnDraft(role="user", content="zebra again, in the fork"))
    hits = await archive.search(fork, "zebra")
    assert [(hit.session_id, hit.turn_number) for hit in hits[:1]] == [(fork, 4)]
    assert all(hit.session_id == fork for hit in hits)


async def test_all_sessions_widens_to_the_notebook_only(archive: Archive, notebook: str) -> None:
    first = await archive.create_session(notebook_path=notebook, model="m")
    second = await archive.create_session(notebook_path=notebook, model="m")
    other = await archive.create_session(notebook_path="/elsewhere/other.ipynb", model="m")
    for sid in (first, second, other):
        await _add(archive, sid, *FILLER[:3], "isolation forest anomalies", *FILLER[3:])
    narrow = await archive.search(first, "isolation forest")
    assert {hit.session_id for hit in narrow} == {first}
    wide = await archive.search(first, "isolation forest", all_sessions=True)
    assert {hit.session_id for hit in wide} == {first, second}
    assert {hit.session_id for hit in wide[:2]} == {first, second}
    assert all("isolation forest" in hit.content for hit in wide[:2])


async def test_limits_and_scores(archive: Archive, session: str) -> None:
    await _add(archive, session, *(f"cohort {i} retention table" for i in range(30)))
    assert await archive.search(session, "cohort retention", limit=0) == []
    hits = await archive.search(session, "cohort retention", limit=25)
    assert len(hits) == 25
    scores = [hit.score for hit in hits]
    assert scores == sorted(scores, reverse=True)
    assert all(score > 0 for score in scores)


async def test_empty_session_and_unknown_words(archive: Archive, session: str) -> None:
    assert await archive.search(session, "anything") == []
    await _add(archive, session, *FILLER)
    assert await archive.search(session, "xylophone quasar") == []
