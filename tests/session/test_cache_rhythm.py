"""A new session's history cache TTL starts from the notebook's rhythm in its archive."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from loom_jupyter.archive import Archive, archive_path_for
from loom_jupyter.archive.clock import ManualClock
from loom_jupyter.messages import TurnDraft
from loom_jupyter.models.scripted import ScriptedModel, text

from .conftest import OpenSession, collect

if TYPE_CHECKING:
    from pathlib import Path


async def _earlier_session(path: Path, pause_minutes: int) -> None:
    """A closed session of the archive at ``path``, written a month ago through its own
    connection on a manual clock: 12 exchanges, ``pause_minutes`` apart."""
    clock = ManualClock("2026-01-01T10:00:00.000000+00:00")
    async with Archive.open(path, clock=clock) as archive:
        sid = await archive.create_session(notebook_path="/earlier.ipynb", model="m")
        for number in range(12):
            for role in ("user", "assistant"):
                draft = TurnDraft(role=role, content=f"{role} {number}")  # type: ignore[arg-type]
                await archive.append_turn(sid, draft)
                clock.advance(60 if role == "user" else pause_minutes * 60)
        await archive.close_session(sid)


@pytest.mark.parametrize(("pause_minutes", "ttl"), [(25, "1h"), (2, "5m")])
async def test_the_first_request_follows_the_notebooks_earlier_pauses(
    open_session: OpenSession,
    archive: Archive,
    pause_minutes: int,
    ttl: str,
) -> None:
    await _earlier_session(archive.path, pause_minutes)
    model = ScriptedModel([text("Hello again.")])
    session = await open_session(model)
    await collect(session, "Where were we?")
    assert session.session_id is not None
    assert model.requests[0].history_ttl == ttl


@pytest.mark.parametrize(("pause_minutes", "ttl"), [(25, "1h"), (2, "5m")])
async def test_a_new_notebook_starts_from_the_notebooks_beside_it(
    open_session: OpenSession,
    notebook: Path,
    pause_minutes: int,
    ttl: str,
) -> None:
    await _earlier_session(archive_path_for(notebook.with_name("sibling.ipynb")), pause_minutes)
    model = ScriptedModel([text("Hello.")])
    session = await open_session(model)  # this notebook's own archive is empty
    await collect(session, "A first question here")
    assert model.requests[0].history_ttl == ttl
