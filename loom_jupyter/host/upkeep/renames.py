"""The notebook's new name, as a front tells it: kept until the Jupyter side follows it
(:mod:`loom_jupyter.host.upkeep.relocate` moves the conversation along)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from loom_jupyter.host.upkeep.location import NotebookLocation

__all__ = ["Renames"]


class Renames:
    """The host's part that hears the notebook's new name from a front and keeps it until
    the Jupyter side follows it (when nothing runs)."""

    def __init__(self, location: NotebookLocation) -> None:
        self._location = location
        self._pending: NotebookLocation | None = None
        self._listeners: list[Callable[[], None]] = []

    @property
    def pending(self) -> bool:
        """A new name was heard and not yet followed."""
        return self._pending is not None

    def listen(self, listener: Callable[[], None]) -> None:
        """Call ``listener`` (from any thread) each time a new name is heard."""
        self._listeners.append(listener)

    def heard(self, path: str, server_root: str = "") -> None:
        """A front says where the notebook is now (engine loop); following twice is
        harmless: the second finds it done."""
        from loom_jupyter.host.upkeep.relocate import renamed_location

        location = renamed_location(self._location, path, server_root)
        if location is None:
            return
        self._pending = location
        for listener in self._listeners:
            listener()

    def take(self) -> NotebookLocation | None:
        """The new name to follow now, once."""
        pending, self._pending = self._pending, None
        return pending
