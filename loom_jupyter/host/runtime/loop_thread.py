"""The loop thread: one asyncio loop in a daemon thread per kernel, where the core runs.

The agent, the archive and the model client all live on this loop, so the core
never cares which event loop (if any) the kernel itself runs. Fronts submit
coroutines with :meth:`LoopThread.submit` and get a
``concurrent.futures.Future`` back.
"""

from __future__ import annotations

import asyncio
import threading
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import concurrent.futures
    from collections.abc import Coroutine

__all__ = ["LoopThread"]

T = TypeVar("T")


class LoopThread:
    """A private event loop running forever in a daemon thread."""

    def __init__(self, name: str = "loom-loop") -> None:
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()
        self._ready.wait()

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The thread's event loop."""
        return self._loop

    @property
    def alive(self) -> bool:
        """Whether the loop still accepts work."""
        return self._thread.is_alive() and not self._loop.is_closed()

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Schedule ``coro`` on the loop thread."""
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run ``coro`` on the loop thread and wait for its result (blocking)."""
        return self.submit(coro).result(timeout)

    def stop(self, timeout: float = 2.0) -> None:
        """Stop the loop and wait briefly for the thread to end."""
        if self._loop.is_closed():
            return
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.call_soon(self._ready.set)
        try:
            self._loop.run_forever()
        finally:
            self._loop.close()
