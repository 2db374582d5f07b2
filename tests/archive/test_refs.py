"""Session references as people type them (shared by the CLI and %cowork resume)."""

from __future__ import annotations

import pytest

from loom_jupyter.archive import SessionInfo
from loom_jupyter.archive.refs import AmbiguousSessionError, resolve_session_ref
from loom_jupyter.errors import SessionNotFoundError


def session(session_id: str) -> SessionInfo:
    fields = dict.fromkeys(SessionInfo.__dataclass_fields__)
    return SessionInfo(**{**fields, "id": session_id})  # type: ignore[arg-type]


SESSIONS = [session("9abc0001"), session("9abc0002"), session("1234ffff")]


def test_numbers_are_list_positions_never_id_prefixes() -> None:
    assert resolve_session_ref(SESSIONS, "1").id == "9abc0001"
    assert resolve_session_ref(SESSIONS, "3").id == "1234ffff"
    with pytest.raises(SessionNotFoundError, match="numbered 1 to 3"):
        resolve_session_ref(SESSIONS, "9")


def test_id_prefixes_need_four_characters_and_must_be_unique() -> None:
    assert resolve_session_ref(SESSIONS, "9ABC0001").id == "9abc0001"
    assert resolve_session_ref(SESSIONS, "1234ffff").id == "1234ffff"
    with pytest.raises(AmbiguousSessionError, match="type more of the id"):
        resolve_session_ref(SESSIONS, "9abc")
    for unknown in ("zzzz", "9ab"):
        with pytest.raises(SessionNotFoundError, match="id prefix of 4"):
            resolve_session_ref(SESSIONS, unknown)


def test_hidden_sessions_answer_to_their_id_but_not_to_a_number() -> None:
    child = session("c0ffee01")
    assert resolve_session_ref(SESSIONS, "c0ffee", hidden=[child]) is child
    assert resolve_session_ref(SESSIONS, "3", hidden=[child]).id == "1234ffff"
    with pytest.raises(SessionNotFoundError, match="numbered 1 to 3"):
        resolve_session_ref(SESSIONS, "4", hidden=[child])
    assert resolve_session_ref(SESSIONS, "1234ff", hidden=SESSIONS).id == "1234ffff"  # not twice
