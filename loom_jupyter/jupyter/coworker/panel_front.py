"""The live panel as one of the coworker's fronts: a subscriber of the host's stream that
draws each event into the kernel's one panel (``%cowork status``), reloaded when a front
switches sessions."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from typing_extensions import assert_never

from loom_jupyter.host.runtime.stream import HostMessage, Published, TurnEvent

if TYPE_CHECKING:
    import concurrent.futures
    from collections.abc import Coroutine

    from loom_jupyter.host.host import Host
    from loom_jupyter.host.services.panel_data import PanelData
    from loom_jupyter.jupyter.kernel.mainthread import MainThreadQueue
    from loom_jupyter.jupyter.panel.widget import Panel

__all__ = ["PanelFront", "Runs"]

T = TypeVar("T")


class Runs(Protocol):
    """Runs a coroutine on the engine loop from the main thread, pumping it meanwhile."""

    def __call__(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """The coroutine's result."""
        ...


class PanelFront:
    """The kernel's panel, made on first use; events reach it on the main thread."""

    def __init__(self, shell: Any, host: Host, main: MainThreadQueue, run: Runs) -> None:
        self._shell = shell
        self._host = host
        self._main = main
        self._run = run
        self.panel: Panel | None = None
        host.subscribe(self._published)  # the floor itself is made on first use

    def ensure(self) -> Panel:
        """The kernel's live panel, created on first use."""
        from loom_jupyter.jupyter.panel.widget import Panel

        if self.panel is None:
            self.panel = Panel(self._shell, self._run(self._host.views.panel_data()))
        return self.panel

    def take_over(self, predecessor: PanelFront) -> None:
        """Carry on the panel a predecessor showed (a rename, a recovery)."""
        self.panel, predecessor.panel = predecessor.panel, None

    def refresh(self, *, tell_sidebars: bool = True) -> None:
        """Reload the panel (after resume, new, fork, delete); tell every front."""
        if self.panel is not None:
            self.panel.reset(self._run(self._host.views.panel_data()))
        if tell_sidebars:
            self._run(self._host.switches.changed())

    def _published(self, item: Published) -> None:
        """The host's stream (engine loop): each engine event, and a reload when a front
        switched sessions."""
        if self.panel is None:
            return
        if isinstance(item, TurnEvent):
            event = item.event
            self._main.post(lambda: self._apply(event))
        elif isinstance(item, HostMessage):
            if item.message.type == "session_changed":
                self._reset_soon()
        else:
            assert_never(item)

    def _apply(self, event: Any) -> None:
        if self.panel is not None:
            self.panel.apply(event)

    def _reset_soon(self) -> None:
        """Reload the panel from the engine loop (a sidebar switched sessions)."""

        def reset(data: PanelData) -> None:
            if self.panel is not None:
                self.panel.reset(data)

        def settled(future: concurrent.futures.Future[PanelData]) -> None:
            if future.exception() is None:
                self._main.post(lambda: reset(future.result()))

        self._host.loop_thread.submit(self._host.views.panel_data()).add_done_callback(settled)
