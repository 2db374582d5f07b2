"""A new session's history cache TTL starts from the notebook's rhythm in its archive."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from loom_jupyter.archive import Archive, archive_path_for
from loom_jupyter.archive import turns as turns_module
from loom_jupyter.messages import TurnDraft
from loom_jupyter.models.scripted import ScriptedModel, text

from .conftest import OpenSession, collect

if TYPE_CHECKING:
    from pathlib import Path


async def _earlier_session(
    archive: Archive, monkeypatch: pytest.MonkeyPatch, pause_minutes: int
) -> None:
    """A closed session of this notebook: 12 exchanges, ``pause_minutes`` apart."""
    sid = await archive.create_session(notebook_path="/earlier.ipynb", model="m")
    with monkeypatch.context() as patch:
        for number in range(12):
            start = number * (pause_minutes + 1)
            for offset, role in [(0, "user"), (1, "assistant")]:
                hours, minutes = divmod(start + offset, 60)
                stamp = f"2026-01-0{1 + hours // 24}T{hours % 24:02d}:{minutes:02d}:00+00:00"
                patch.setattr(turns_module, "utc_now", lambda stamp=stamp: stamp)
                draft = TurnDraft(role=role, content=f"{role} {number}")  # type: ignore[arg-type]
                await archive.append_turn(sid, draft)
    await archive.close_session(sid)


@pytest.mark.parametrize(("pause_minutes", "ttl"), [(25, "1h"), (2, "5m")])
async def test_the_first_request_follows_the_notebooks_earlier_pauses(
    open_session: OpenSession,
    archive: Archive,
    monkeypatch: pytest.MonkeyPatch,
    pause_minutes: int,
    ttl: str,
) -> None:
    await _earlier_session(archive, monkeypatch, pause_minutes)
    model = ScriptedModel([text("Hello again.")])
    session = await open_session(model)
    await collect(session, "Where were we?")
    assert session.session_id is not None
    assert model.requests[0].history_ttl == ttl


@pytest.mark.parametrize(("pause_minutes", "ttl"), [(25, "1h"), (2, "5m")])
async def test_a_new_notebook_starts_from_the_notebooks_beside_it(
    open_session: OpenSession,
    notebook: Path,
    monkeypatch: pytest.MonkeyPatch,
    pause_minutes: int,
    ttl: str,
) -> None:
    async with Archive.open(archive_path_for(notebook.with_name("sibling.ipynb"))) as sibling:
        await _earlier_session(sibling, monkeypatch, pause_minutes)
    model = ScriptedModel([text("Hello.")])
    session = await open_session(model)  # this notebook's own archive is empty
    await collect(session, "A first question here")
    assert model.requests[0].history_ttl == ttl
