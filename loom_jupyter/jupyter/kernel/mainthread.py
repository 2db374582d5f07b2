"""Marshal work from the engine thread to the kernel's main thread.

User code, ``input()`` and display updates must run on the kernel's main
thread. While a blocking ``%cowork`` cell runs, that thread is waiting for the
turn, so it *pumps* this queue (:meth:`MainThreadQueue.pump_until`). When no
cell is pumping (work started from the sidebar, say), queued jobs are drained
on the kernel's own asyncio loop, which ipykernel runs on the main thread; in a
plain terminal with no pump and no loop they are drained on a helper thread.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from loom_jupyter.errors import ToolError

if TYPE_CHECKING:
    import concurrent.futures
    from collections.abc import Callable

__all__ = ["MainThreadQueue"]

T = TypeVar("T")
_POLL_SECONDS = 0.05


@dataclass(frozen=True)
class _Job:
    fn: Callable[[], Any]
    loop: asyncio.AbstractEventLoop | None = None
    future: asyncio.Future[Any] | None = None

    def run(self) -> None:
        if self.future is not None and self.future.done():
            return  # the waiter was cancelled (turn interrupted): skip the work
        try:
            value = self.fn()
        except KeyboardInterrupt:
            self._deliver(None, ToolError("interrupted by the user (kernel interrupt)"))
            raise
        except BaseException as exc:
            self._deliver(None, exc)
        else:
            self._deliver(value, None)

    def refuse(self, error: BaseException) -> None:
        """Answer the waiter with ``error`` without running the work."""
        self._deliver(None, error)

    def _deliver(self, value: Any, exc: BaseException | None) -> None:
        if self.future is None or self.loop is None or self.loop.is_closed():
            return
        self.loop.call_soon_threadsafe(_settle, self.future, value, exc)


def _settle(future: asyncio.Future[Any], value: Any, exc: BaseException | None) -> None:
    if future.done():
        return
    if exc is None:
        future.set_result(value)
    else:
        future.set_exception(exc)


def _nothing() -> None:
    """A job that only wakes the pump."""


class MainThreadQueue:
    """A queue of callables that must run on the kernel's main thread."""

    def __init__(self, kernel_loop: asyncio.AbstractEventLoop | None = None) -> None:
        self._queue: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._kernel_loop = kernel_loop
        self._pumping = 0
        self._main = threading.main_thread()
        self._refusing = False  # after a kernel interrupt, until the interrupted work ends

    @property
    def pumping(self) -> bool:
        """Whether a blocking cell is pumping this queue right now (its jobs run at once)."""
        return self._pumping > 0

    async def call(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` on the main thread and await its result (from the engine loop)."""
        if threading.current_thread() is self._main:
            return fn()
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self._enqueue(_Job(fn, loop, future))
        return await future

    def post(self, fn: Callable[[], None]) -> None:
        """Run ``fn`` on the main thread soon; nobody waits for it (display updates)."""
        if threading.current_thread() is self._main and not self._pumping:
            fn()
            return
        self._enqueue(_Job(fn))

    def pump_until(
        self,
        done: concurrent.futures.Future[Any],
        tick: Callable[[], None] | None = None,
    ) -> None:
        """Run queued jobs on this (main) thread until ``done`` completes.

        ``tick`` runs between jobs and on idle polls (throttled display
        flushes). ``KeyboardInterrupt`` propagates to the caller.
        """
        self._pumping += 1
        done.add_done_callback(self._wake)  # no poll delay when the work ends
        try:
            while not done.done():
                self._run_one(timeout=_POLL_SECONDS)
                if tick is not None:
                    tick()
            self.drain()
        finally:
            self._pumping -= 1

    def interrupt_waiting(self) -> None:
        """A kernel interrupt reached the pump: until :meth:`resume_waiting`, every job that
        someone awaits (code for the namespace), queued now or later, is answered
        "interrupted" instead of run, so no code starts after the interrupt; display
        updates still run."""
        self._refusing = True
        self.drain()

    def resume_waiting(self) -> None:
        """The interrupted work has ended: run awaited jobs again."""
        self._refusing = False

    def _wake(self, _: concurrent.futures.Future[Any]) -> None:
        self._queue.put(_Job(_nothing))

    def drain(self) -> None:
        """Run every job queued so far."""
        while True:
            try:
                job = self._queue.get_nowait()
            except queue.Empty:
                return
            self._run(job)

    def _run_one(self, timeout: float) -> None:
        try:
            job = self._queue.get(timeout=timeout)
        except queue.Empty:
            return
        self._run(job)

    def _run(self, job: _Job) -> None:
        if self._refusing and job.future is not None:
            job.refuse(ToolError("interrupted by the user (kernel interrupt)"))
        else:
            job.run()

    def _enqueue(self, job: _Job) -> None:
        self._queue.put(job)
        if self._pumping:
            return
        loop = self._kernel_loop
        if loop is not None and loop.is_running() and not loop.is_closed():
            loop.call_soon_threadsafe(self.drain)
        else:
            # The person's code runs here: its imports are theirs (loom_jupyter.importguard).
            threading.Thread(target=self.drain, name="main-fallback", daemon=True).start()
