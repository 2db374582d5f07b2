"""Session references as people type them: a list number, a full id or an id prefix.

One rule for every front (the CLI and ``%cowork resume``): a number is its
position in the most-recent-first session list; anything else of at least
:data:`MIN_ID_PREFIX` characters is an id prefix, so a short number never reads
as the start of an id.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loom_jupyter.errors import SessionNotFoundError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from loom_jupyter.records import SessionInfo

__all__ = ["MIN_ID_PREFIX", "AmbiguousSessionError", "resolve_session_ref"]

MIN_ID_PREFIX = 4
"""The shortest id prefix accepted."""


class AmbiguousSessionError(SessionNotFoundError):
    """An id prefix matches more than one session."""


def resolve_session_ref(
    sessions: Sequence[SessionInfo], ref: str, hidden: Sequence[SessionInfo] = ()
) -> SessionInfo:
    """The session ``ref`` names in ``sessions`` (listed most recent first).

    A number counts in ``sessions`` (as listed); an id or id prefix may also
    name one of the ``hidden`` sessions (a delegated sub-agent's, say).

    Raises :class:`SessionNotFoundError` (or :class:`AmbiguousSessionError`)
    with a message saying what to type instead.
    """
    wanted = ref.strip().lower()
    if wanted.isdigit() and len(wanted) < MIN_ID_PREFIX:
        number = int(wanted)
        if 1 <= number <= len(sessions):
            return sessions[number - 1]
        raise SessionNotFoundError(
            f"No session {ref!r}: there are {len(sessions)} sessions, numbered 1 to "
            f"{len(sessions)} (most recent first)."
        )
    candidates = {s.id: s for s in (*sessions, *hidden)}.values()
    matches = [s for s in candidates if len(wanted) >= MIN_ID_PREFIX and s.id.startswith(wanted)]
    if len(matches) == 1:
        return matches[0]
    if matches:
        ids = ", ".join(s.id[:12] for s in matches[:5])
        raise AmbiguousSessionError(f"Session {ref!r} is ambiguous ({ids}); type more of the id.")
    raise SessionNotFoundError(
        f"No session {ref!r}: use a list number, an id, or an id prefix of "
        f"{MIN_ID_PREFIX}+ characters."
    )
