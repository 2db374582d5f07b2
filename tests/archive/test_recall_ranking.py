"""The pure ranking pieces: query analysis, FTS5 strings, idf, coordination, context, speakers."""

from __future__ import annotations

import math
import sqlite3

import pytest

from loom_jupyter.archive.ranking import (
    CONTEXT_KERNEL,
    MAX_QUERY_TERMS,
    coordination,
    estimated_frequency,
    fts_row_count,
    fts_string,
    idf_correction,
    lucene_idf,
    match_expression,
    own_scores,
    plan_query,
    shortlist,
    spoken_by,
    spread_context,
)


def test_plan_drops_stopwords_unless_nothing_else() -> None:
    plan = plan_query("When did Priya go to the pottery class?")
    assert plan.words == ("priya", "go", "pottery", "class")
    assert plan.proper == ("priya",)
    assert plan_query("the of and").words == ("the", "of", "and")


def test_plan_turns_identifiers_and_quotes_into_phrases() -> None:
    plan = plan_query('open df_sales_2024 from sales_2024.csv, then "exact words here"')
    assert ("df", "sales", "2024") in plan.phrases
    assert ("sales", "2024", "csv") in plan.phrases
    assert ("exact", "words", "here") in plan.phrases
    assert "df" in plan.words
    assert "sales" in plan.words
    assert plan_query("it's").phrases == ()  # an apostrophe does not glue words


def test_plan_is_bounded() -> None:
    plan = plan_query(" ".join(f"w{i}_x{i}" for i in range(100)))
    assert len(plan.terms()) <= MAX_QUERY_TERMS


def test_terms_are_always_valid_fts5() -> None:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(c, tokenize='porter unicode61')")
    db.execute("INSERT INTO t VALUES ('some text')")
    nasty = ['"', "a\"b'c", "NEAR(x y)", "x AND y", "^x:y", "{a b}", "x*", "(", "\x00", "数据"]
    for text in nasty:
        expression = match_expression(plan_query(text))
        if expression is not None:
            db.execute("SELECT * FROM t WHERE t MATCH ?", [expression]).fetchall()
    assert match_expression(plan_query("!!!")) is None
    assert fts_string("df sales") == '"df sales"'


def _varint(value: int) -> bytes:
    """SQLite's varint (the encoding FTS5 uses) of a value below 2**56."""
    groups = [value & 0x7F]
    value >>= 7
    while value:
        groups.append((value & 0x7F) | 0x80)
        value >>= 7
    return bytes(reversed(groups))


@pytest.mark.parametrize("count", [0, 1, 127, 128, 2760, 16383, 16384, 10**6, 2**40])
def test_row_count_is_read_from_the_averages_record(count: int) -> None:
    assert fts_row_count(_varint(count) + _varint(12345)) == count


def test_row_count_matches_a_real_fts5_table() -> None:
    db = sqlite3.connect(":memory:", isolation_level=None)
    db.execute("CREATE VIRTUAL TABLE t USING fts5(c)")
    db.executemany("INSERT INTO t VALUES (?)", [(f"row {i}",) for i in range(300)])
    (block,) = db.execute("SELECT block FROM t_data WHERE id = 1").fetchone()
    assert fts_row_count(block) == 300


def test_idf_correction_gives_lucene_idf() -> None:
    rows = 1000
    for matching in (1, 10, 100, 400, 499, 500, 900, 1000):
        odds = (rows - matching + 0.5) / (matching + 0.5)
        fts = max(math.log(odds), 1e-6) if odds > 1 else 1e-6
        assert fts * idf_correction(rows, matching) == pytest.approx(math.log1p(odds))
        assert fts * idf_correction(rows, matching) > 0
    assert idf_correction(rows, 1) == pytest.approx(1.0, abs=0.01)  # rare words: unchanged


def test_lucene_idf_stays_positive_and_falls_with_frequency() -> None:
    values = [lucene_idf(1000, matching) for matching in (1, 10, 100, 500, 999, 1000)]
    assert values == sorted(values, reverse=True)
    assert all(value > 0 for value in values)
    assert lucene_idf(1000, 10) == pytest.approx(math.log1p(990.5 / 10.5))


def test_frequency_is_estimated_from_the_newest_matches() -> None:
    # 1000 matches among the newest 4000 ids of 100,000: a quarter of all rows.
    assert estimated_frequency(1000, 96_001, 100_000) == 25_000
    # The matches cover every id: the count is exact.
    assert estimated_frequency(1000, 1, 1000) == 1000
    assert estimated_frequency(1000, 98_001, 100_000) == 50_000


def test_coordination_is_the_root_of_the_matched_share() -> None:
    assert coordination(4, 4) == 1.0
    assert coordination(1, 4) == pytest.approx(0.5)


def test_own_scores_scale_by_the_root_of_the_matched_share() -> None:
    a, b = ("s", 1), ("s", 2)
    scores = own_scores([(a, 1.0), (a, 1.0), (b, 2.0)], terms=4, keep=10)
    assert scores[a] == pytest.approx(2.0 * math.sqrt(2 / 4))
    assert scores[b] == pytest.approx(2.0 * math.sqrt(1 / 4))
    assert list(own_scores([(a, 1.0), (b, 2.0)], terms=1, keep=1)) == [b]


def test_context_spreads_within_each_session() -> None:
    spread = spread_context({("s", 5): 8.0, ("t", 1): 4.0}, {"s": 6, "t": 10})
    assert spread[("s", 5)] == 8.0
    assert spread[("s", 6)] == 8.0 * CONTEXT_KERNEL[1]
    assert spread[("s", 4)] == 8.0 * CONTEXT_KERNEL[-1]
    assert spread[("s", 2)] == 8.0 * CONTEXT_KERNEL[-3]
    assert ("s", 7) not in spread  # past the session's last turn
    assert ("t", 0) not in spread
    assert spread[("t", 4)] == 4.0 * CONTEXT_KERNEL[3]
    assert CONTEXT_KERNEL[1] > CONTEXT_KERNEL[-1]  # what a turn answers counts more


def test_shortlist_keeps_what_a_boost_could_lift() -> None:
    scores = {("s", n): float(n) for n in range(1, 21)}
    assert shortlist(scores, 3, 0.0) == [("s", 20), ("s", 19), ("s", 18)]
    lifted = shortlist(scores, 3, 0.3)
    assert lifted[:3] == [("s", 20), ("s", 19), ("s", 18)]
    assert ("s", 14) in lifted  # 14 * 1.3 > 18
    assert ("s", 13) not in lifted
    ties = {("s", 1): 1.0, ("s", 2): 1.0, ("s", 3): 1.0}
    assert shortlist(ties, 2, 0.0)[0] == ("s", 3)


def test_spoken_by_reads_the_label_at_the_start() -> None:
    assert spoken_by("Priya: hi there", frozenset({"priya"}))
    assert not spoken_by("Omar: hi Priya: x", frozenset({"priya"}))
    assert not spoken_by("Priya hi", frozenset({"priya"}))
    assert not spoken_by("Priya: hi", frozenset())
