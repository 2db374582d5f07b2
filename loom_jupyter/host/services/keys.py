"""The API key as the fronts see it (DESIGN §12, "The key"): there or not, and where.

The sidebar's key field sends ``set_key``; ``%cowork login`` / ``logout`` change the
store from a cell. Either way every front is told with a ``key`` message, which never
holds the key; the page that sent the key hears where it was saved (a notice). The key
goes straight to :mod:`loom_jupyter.apikey` (the keyring or a 0600 file in the person's
config folder): it is not archived, logged or kept in the replay log, and is not put in
the process environment, which subprocesses inherit.
"""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING, Protocol

import loom_jupyter.apikey as apikey
from loom_jupyter.errors import LoomError
from loom_jupyter.host.wire.protocol import KeyMsg, NoticeMsg

if TYPE_CHECKING:
    from loom_jupyter.host.runtime.floor import TurnFloor
    from loom_jupyter.settings import Settings

__all__ = ["KeyHost", "has_key", "key_message", "save_key", "saved_words", "tell_key"]


class KeyHost(Protocol):
    """What this module needs of the host."""

    settings: Settings | None
    fronts_lack_key: bool

    @property
    def floor(self) -> TurnFloor:
        """The host's turn floor (made on first use)."""


def has_key(host: KeyHost) -> bool:
    """Whether requests have credentials: Bedrock and Vertex use the cloud's own."""
    settings = host.settings
    if settings is not None and settings.provider != "anthropic":
        return True
    return apikey.key_state().has_key


def key_message(host: KeyHost, problem: str = "") -> KeyMsg:
    """The ``key`` message for the state now (``problem``: why a key was not saved)."""
    state = apikey.key_state()
    there = has_key(host)
    return KeyMsg(has_key=there, where=state.where if state.has_key else "", problem=problem)


def tell_key(host: KeyHost) -> None:
    """Tell every front whether there is a key now (engine loop)."""
    message = key_message(host)
    host.floor.broadcast(message)
    host.fronts_lack_key = not message.has_key


async def save_key(host: KeyHost, key: str) -> KeyMsg | NoticeMsg:
    """Store ``key`` and tell every front; the reply for the front that sent it: where the
    key went, or why it was not saved. The store's file and keyring calls run off the
    engine loop."""
    try:
        state = await asyncio.to_thread(apikey.save_key, key)
    except LoomError as exc:  # the shape, or the store refused: said without the key
        return key_message(host, str(exc))
    tell_key(host)
    return NoticeMsg(saved_words(state.where), "info")


def saved_words(where: str) -> str:
    """The confirmation for a key just saved in ``where`` (and what still wins over it)."""
    words = (
        f"Key saved in {where}, outside this notebook and its folder. Loom uses it from your "
        "next message; %cowork logout removes it."
    )
    in_env = [name for name in apikey.ENV_NAMES if os.environ.get(name)]
    if in_env:
        words += f" {in_env[0]} in this kernel's environment still wins over it."
    return words
