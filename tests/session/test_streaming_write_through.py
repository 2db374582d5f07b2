"""While an answer streams, the text shown so far is already in the archive (a ``partial`` row),
and the finished message replaces that row in place: nothing is lost if the kernel dies."""

from __future__ import annotations

from typing import TYPE_CHECKING

from loom_jupyter.engine.events import TextDelta, TurnDone
from loom_jupyter.models.scripted import ScriptedModel, text

if TYPE_CHECKING:
    from loom_jupyter.archive import Archive

    from .conftest import OpenSession

ANSWER = "one two three four five six seven eight"


async def assistant_rows(archive: Archive, sid: str) -> list[tuple[int, str, str]]:
    return [
        (t.turn_number, t.status, t.content)
        for t in await archive.get_turns(sid)
        if t.role == "assistant"
    ]


async def test_each_delta_is_archived_before_it_is_shown_and_the_row_is_finished_in_place(
    open_session: OpenSession, archive: Archive
) -> None:
    session = await open_session(ScriptedModel([text(ANSWER)]), partial_save_seconds=0.0)
    seen, during = "", []
    async for event in session.send("count to eight"):
        if isinstance(event, TextDelta):
            seen += event.text
            assert session.session_id is not None
            during.append((seen, await assistant_rows(archive, session.session_id)))
        if isinstance(event, TurnDone):
            assert event.text == ANSWER
    assert len(during) == len(ANSWER.split())
    for shown, rows in during:
        assert rows == [(2, "partial", shown)]  # the row holds exactly what was shown
    assert session.session_id is not None
    assert await assistant_rows(archive, session.session_id) == [(2, "complete", ANSWER)]
    hits = await archive.search(session.session_id, "seven")
    assert [h.turn_number for h in hits][:1] == [2]  # FTS follows the rewrites


async def test_the_first_words_are_kept_at_once_and_later_ones_at_the_save_interval(
    open_session: OpenSession, archive: Archive
) -> None:
    session = await open_session(ScriptedModel([text(ANSWER)]), partial_save_seconds=3600.0)
    kept = []
    async for event in session.send("count"):
        if isinstance(event, TextDelta):
            assert session.session_id is not None
            kept.append(await assistant_rows(archive, session.session_id))
    assert kept[0] == [(2, "partial", "one ")]
    assert kept[-1] == [(2, "partial", "one ")]  # the next save is an hour away...
    assert session.session_id is not None
    assert await assistant_rows(archive, session.session_id) == [(2, "complete", ANSWER)]


async def test_an_interrupt_mid_stream_finishes_the_same_row_as_interrupted(
    open_session: OpenSession, archive: Archive
) -> None:
    session = await open_session(ScriptedModel([text(ANSWER)]), partial_save_seconds=3600.0)
    shown = ""
    async for event in session.send("count"):
        if isinstance(event, TextDelta):
            shown += event.text
            if len(shown.split()) == 3:
                session.interrupt()
    assert session.session_id is not None
    rows = await assistant_rows(archive, session.session_id)
    assert len(rows) == 1
    number, status, content = rows[0]
    assert (number, status) == (2, "interrupted")
    assert content.startswith(shown)  # everything shown, whatever the save interval
