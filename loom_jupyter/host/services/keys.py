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
from typing import TYPE_CHECKING, Literal

from loom_jupyter.errors import LoomError

# The key store and the protocol are imported where used: the host makes this part as
# ``%load_ext`` loads, before either is needed.
if TYPE_CHECKING:
    from collections.abc import Callable

    from loom_jupyter.host.runtime.floor import TurnFloor
    from loom_jupyter.host.wire.protocol import KeyMsg, NoticeMsg
    from loom_jupyter.settings import Settings

__all__ = ["MISSING_KEY", "KeyNotices", "missing_key_message", "saved_words"]


MISSING_KEY = (
    "No Anthropic API key yet. Run %cowork login in a cell (it asks for the key without "
    "showing it) or paste it into the key field of the Loom sidebar: either keeps it outside "
    "the notebook, its folder and the archive. Or run export ANTHROPIC_API_KEY=... in the "
    "terminal before starting Jupyter. Then send your message again."
)
_MISSING_KEY_AT: dict[str, str] = {
    "console": (
        "No Anthropic API key yet. Run %cowork login here (it asks for the key without "
        "showing it and keeps it outside your folders and the archive), or run export "
        "ANTHROPIC_API_KEY=... in the shell before starting the kernel (jupyter console). "
        "Then send your message again."
    ),
    "terminal": (
        "No Anthropic API key yet. Run %cowork login here (it asks for the key without "
        "showing it and keeps it outside your folders and the archive), or run export "
        "ANTHROPIC_API_KEY=... in the shell before starting IPython. Then send your message "
        "again."
    ),
}


def missing_key_message(
    front: Literal["notebook", "console", "terminal"] = "notebook",
) -> str | None:
    """The message shown when no API key is configured (environment or stored), else None,
    in the words of the ``front`` in use (a console or a terminal has no cells or sidebar).

    The store is read again each time (once a turn): a key saved by another kernel counts."""
    import loom_jupyter.apikey as apikey

    return None if apikey.key_state().has_key else _MISSING_KEY_AT.get(front, MISSING_KEY)


class KeyNotices:
    """The host's part that says whether there is a key: every front is told when it
    changes, and a front told there was none hears when one comes another way."""

    def __init__(
        self, floor: Callable[[], TurnFloor], settings: Callable[[], Settings | None]
    ) -> None:
        self._floor = floor
        self._settings = settings
        self._lacking = False  # a front was told there is no key

    def has_key(self) -> bool:
        """Whether requests have credentials: Bedrock and Vertex use the cloud's own."""
        import loom_jupyter.apikey as apikey

        settings = self._settings()
        if settings is not None and settings.provider != "anthropic":
            return True
        return apikey.key_state().has_key

    def message(self, problem: str = "") -> KeyMsg:
        """The ``key`` message for the state now (``problem``: why a key was not saved)."""
        import loom_jupyter.apikey as apikey
        from loom_jupyter.host.wire.protocol import KeyMsg

        state = apikey.key_state()
        there = self.has_key()
        return KeyMsg(has_key=there, where=state.where if state.has_key else "", problem=problem)

    def tell(self) -> None:
        """Tell every front whether there is a key now (engine loop)."""
        message = self.message()
        self._floor().broadcast(message)
        self._lacking = not message.has_key

    def welcomed(self, has_key: bool) -> None:
        """A front was welcomed with ``has_key``."""
        self._lacking = self._lacking or not has_key

    def before_turn(self, front: Literal["notebook", "console", "terminal"]) -> str | None:
        """Why a turn cannot be sent (no key, in ``front``'s words), else ``None``; a key
        that came another way (the environment, a file) since a front was told is told."""
        settings = self._settings()
        anthropic = settings is None or settings.provider == "anthropic"
        problem = missing_key_message(front) if anthropic else None
        if problem:
            self._lacking = True
        elif self._lacking:
            self.tell()
        return problem

    async def save(self, key: str) -> KeyMsg | NoticeMsg:
        """Store ``key`` and tell every front; the reply for the front that sent it: where
        the key went, or why it was not saved. The store's file and keyring calls run off
        the engine loop."""
        import loom_jupyter.apikey as apikey
        from loom_jupyter.host.wire.protocol import NoticeMsg

        try:
            state = await asyncio.to_thread(apikey.save_key, key)
        except LoomError as exc:  # the shape, or the store refused: said without the key
            return self.message(str(exc))
        self.tell()
        return NoticeMsg(saved_words(state.where), "info")


def saved_words(where: str) -> str:
    """The confirmation for a key just saved in ``where`` (and what still wins over it)."""
    import loom_jupyter.apikey as apikey

    words = (
        f"Key saved in {where}, outside this notebook and its folder. Loom uses it from your "
        "next message; %cowork logout removes it."
    )
    in_env = [name for name in apikey.ENV_NAMES if os.environ.get(name)]
    if in_env:
        words += f" {in_env[0]} in this kernel's environment still wins over it."
    return words
