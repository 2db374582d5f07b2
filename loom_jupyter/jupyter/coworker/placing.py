"""The sidebar's door while no coworker is open: an unplaced notebook, or an archive that
would not open.

A kernel that cannot place its notebook (DESIGN §13, :mod:`loom_jupyter.host.upkeep.location`)
opens nothing at ``%load_ext``, and a kernel whose archive failed to open has nothing to
serve. Either way the comm targets ``loom`` and ``loom-agent`` are held here, so a sidebar
or an outside agent's link that opens is not taken for "Loom is not loaded":

- its ``hello`` names the notebook (the path relative to the server's folder): when that
  places it — a notebook file on this machine, or the server's path with ``archive_dir``
  set — the coworker opens there (on the kernel's main thread) and the sidebar is handed
  over, welcomed as usual;
- otherwise the sidebar gets an error ``notice`` saying why (the banner's words) and
  stays open; a coworker that opens later (``%cowork --notebook PATH``, or a retry that
  works) takes it over;
- an outside agent's link never places a notebook: each of its messages is answered with
  that notice, until a coworker opens and takes the link over (its ``hello`` answered).

Nothing is written here: an archive is opened only where a notebook was placed.
"""

from __future__ import annotations

import contextvars
import logging
import threading
from typing import TYPE_CHECKING, Any

from loom_jupyter.errors import LoomError
from loom_jupyter.jupyter.sidebar import AGENT_TARGET, TARGET

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Callable

    from loom_jupyter.host.upkeep.location import NotebookLocation
    from loom_jupyter.jupyter.coworker.runtime import KernelCowork

__all__ = ["Waiting", "pending_note"]

_log = logging.getLogger(__name__)


def pending_note(location: NotebookLocation) -> str:
    """What a kernel that cannot place its notebook says before writing anything: why, where
    the first ``%cowork`` would write, how to choose (the banner and the sidebar's notice)."""
    try:
        archive = location.planned_archive()
    except LoomError as exc:  # archive_dir set but unusable: that is the news
        return f"loom: {exc}"
    return f"loom: {location.unplaced_note(archive, pending=True) or ''}"


class Waiting:
    """The comm targets of a kernel with no coworker open, and the comms they hold.

    ``place`` opens a coworker for a location (main thread) or raises :class:`LoomError`;
    ``location`` is the kernel's unplaced location (``None``: the archive failed to open,
    ``why`` says how).
    """

    def __init__(
        self,
        shell: Any,
        loop: asyncio.AbstractEventLoop,
        place: Callable[[NotebookLocation], KernelCowork],
        *,
        location: NotebookLocation | None,
        why: str,
    ) -> None:
        self._shell = shell
        self._loop = loop
        self._place = place
        self.location = location
        self.why = why
        self._held: dict[str, tuple[Any, dict[str, Any], bool]] = {}  # id -> comm, hello, agent?
        self._lock = threading.Lock()

    def register(self) -> None:
        """Hold the comm targets (main thread)."""
        manager = self._shell.kernel.comm_manager
        manager.register_target(TARGET, self._opened)
        manager.register_target(AGENT_TARGET, self._agent_opened)

    def unregister(self) -> None:
        """Let go of the comm targets, if still ours (held comms stay open)."""
        manager = getattr(getattr(self._shell, "kernel", None), "comm_manager", None)
        if manager is None:
            return
        for target, opened in ((TARGET, self._opened), (AGENT_TARGET, self._agent_opened)):
            if manager.targets.get(target) == opened:
                manager.unregister_target(target, opened)

    def hand_over(self, cowork: KernelCowork) -> None:
        """A coworker opened: every held comm goes to it, its ``hello`` answered (main
        thread)."""
        self.unregister()
        with self._lock:
            held, self._held = list(self._held.values()), {}
        for comm, msg, _ in (item for item in held if not item[2]):
            cowork.comms.accept_page(comm, msg)  # the hub replays the hello: a welcome
        for comm, msg, _ in (item for item in held if item[2]):  # after the pages they count
            cowork.comms.accept_agent(comm, msg)  # its hub replays the hello: `pages`

    # -- any kernel thread ------------------------------------------------------------------

    def _opened(self, comm: Any, msg: dict[str, Any]) -> None:
        self._hold(comm, msg, agent=False)

    def _agent_opened(self, comm: Any, msg: dict[str, Any]) -> None:
        self._hold(comm, msg, agent=True)

    def _hold(self, comm: Any, msg: dict[str, Any], *, agent: bool) -> None:
        comm_id = str(comm.comm_id)
        with self._lock:
            self._held[comm_id] = (comm, msg, agent)
        answer = self._tell if agent else self._answer
        comm.on_msg(lambda m: self._loop.call_soon_threadsafe(answer, comm, m))
        comm.on_close(lambda _m: self._forget(comm_id))
        self._loop.call_soon_threadsafe(answer, comm, msg)

    def _forget(self, comm_id: str) -> None:
        with self._lock:
            self._held.pop(comm_id, None)

    # -- the kernel's main thread -------------------------------------------------------------

    def _answer(self, comm: Any, msg: dict[str, Any]) -> None:
        """Place the notebook from a ``hello`` and hand the sidebars over, else say why."""
        if str(comm.comm_id) not in self._held:
            return  # handed over (or closed) meanwhile
        data = (msg.get("content") or {}).get("data")
        hello = data if isinstance(data, dict) and data.get("type", "hello") == "hello" else {}
        try:
            cowork = self._placed(hello)
        except LoomError as exc:
            self._notice(comm, msg, f"loom: {exc}")
            return
        except Exception as exc:  # never an exception in the kernel's loop
            _log.exception("placing the notebook failed")
            self._notice(comm, msg, f"loom: {type(exc).__name__}: {exc}")
            return
        if cowork is None:
            self._notice(comm, msg, self.why)
        else:
            self.hand_over(cowork)

    def _tell(self, comm: Any, msg: dict[str, Any]) -> None:
        """An outside agent's link: it places nothing; it hears why nothing is open."""
        if str(comm.comm_id) in self._held:
            self._notice(comm, msg, self.why)

    def _placed(self, hello: dict[str, Any]) -> KernelCowork | None:
        if self.location is None:
            return None  # the archive failed to open: a hello does not change that
        from loom_jupyter.host.upkeep.location import placed_by_front

        path, root = hello.get("notebook_path"), hello.get("server_root", "")
        if not isinstance(path, str) or not isinstance(root, str):
            return None
        placed = placed_by_front(self.location, path, root)
        if placed.unplaced:
            self.location, self.why = placed, pending_note(placed)
            return None
        return self._place(placed)

    def _notice(self, comm: Any, msg: dict[str, Any], text: str) -> None:
        from loom_jupyter.host.wire.protocol import NoticeMsg, encode

        data = encode(NoticeMsg(text, "error"), seq=0, kernel_session="", turn=None)
        parent = getattr(getattr(self._shell, "kernel", None), "_shell_parent", None)
        context = contextvars.copy_context()

        def send() -> None:
            if isinstance(parent, contextvars.ContextVar):
                parent.set(msg)  # a reply to the front's message, on its subshell
            comm.send(data)

        try:
            context.run(send)
        except Exception:  # the front closed the comm meanwhile
            _log.debug("telling a sidebar failed", exc_info=True)
