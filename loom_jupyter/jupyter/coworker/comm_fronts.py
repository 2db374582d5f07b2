"""The coworker's comm fronts: the sidebars (comm target ``loom``) and outside agents'
links (``loom-agent``, DESIGN §14), each hub built when its first comm opens so
``%load_ext`` stays light, and handed over whole to a successor (a renamed notebook)."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from loom_jupyter.jupyter.sidebar import AGENT_TARGET, TARGET

if TYPE_CHECKING:
    from loom_jupyter.host.host import Host
    from loom_jupyter.jupyter.sidebar.agents import AgentHub
    from loom_jupyter.jupyter.sidebar.hub import SidebarHub

__all__ = ["CommFronts"]


class CommFronts:
    """The pages' hub and the agents' hub of one kernel's coworker."""

    def __init__(self, shell: Any, host: Host) -> None:
        self._shell = shell
        self._host = host
        self._pages: SidebarHub | None = None
        self._agents: AgentHub | None = None
        self._lock = threading.Lock()  # the main thread and the engine loop may both ask

    @property
    def sidebar(self) -> SidebarHub:
        """The kernel's sidebars: every open sidebar comm, on the host's stream."""
        with self._lock:
            if self._pages is None:
                from loom_jupyter.jupyter.sidebar.hub import SidebarHub

                self._pages = SidebarHub(self._host)
            return self._pages

    @property
    def agents(self) -> AgentHub:
        """Outside agents' links, apart from the sidebars."""
        with self._lock:
            if self._agents is None:
                from loom_jupyter.jupyter.sidebar.agents import AgentHub

                self._agents = AgentHub(self._host, lambda: self._pages)
            return self._agents

    def listen(self, *, pages: bool = True) -> None:
        """Accept the comms (main thread): the hub takes its target over when the first
        comm opens. ``pages=False``: the agents' target only."""
        manager = self._shell.kernel.comm_manager
        if pages:
            manager.register_target(TARGET, self.accept_page)
        manager.register_target(AGENT_TARGET, self.accept_agent)

    def accept_page(self, comm: Any, msg: dict[str, Any]) -> None:
        """A sidebar's comm opened (or was held until the coworker opened)."""
        hub = self.sidebar
        if hub.link is None:
            hub.attach(self._shell.kernel)
        assert hub.link is not None
        hub.link.accept(comm, msg)

    def accept_agent(self, comm: Any, msg: dict[str, Any]) -> None:
        """An outside agent's link opened (or was held until the coworker opened)."""
        hub = self.agents
        if hub.link is None:
            hub.attach(self._shell.kernel)
        assert hub.link is not None
        hub.link.accept(comm, msg)

    def take(self, predecessor: CommFronts, *, in_kernel: bool) -> None:
        """Serve ``predecessor``'s open sidebars and agents' links (main thread): they stay
        connected and see no restart."""
        self.sidebar.take(predecessor.sidebar.release())
        link = predecessor.agents.release()
        if link is not None:
            self.agents.take(link)
        elif in_kernel:
            self.listen(pages=False)  # none open: the light target, this coworker's now

    def close(self, *, in_kernel: bool) -> None:
        """Detach the hubs; give back the light targets when no comm opened."""
        if self._pages is not None:
            self._pages.detach()
        if self._agents is not None:
            self._agents.detach()
        if in_kernel:  # the light targets, when none opened (the hubs may exist)
            manager = self._shell.kernel.comm_manager
            if manager.targets.get(TARGET) == self.accept_page:
                manager.unregister_target(TARGET, self.accept_page)
            if manager.targets.get(AGENT_TARGET) == self.accept_agent:
                manager.unregister_target(AGENT_TARGET, self.accept_agent)
