"""Reading the person's values within a time limit (security review R10).

Describing a value runs the value's own code: its ``repr``, ``__len__``, ``shape``,
``dtype``, a DataFrame's ``describe()``. Any of them may sleep or loop forever, and
describing happens where the namespace lives, often the kernel's main thread: one such
value would hold the person's next cell. So :class:`NamespaceReader` runs the helpers of
:mod:`loom_jupyter.tools.describe` on a worker thread and waits at most
:attr:`DescribeLimits.seconds`. At the deadline it stops waiting, answers with an error
that names the value and the method that did not finish (a listing shows what it has and
marks the rest), and stops the worker with ``PyThreadState_SetAsyncExc``.

What that stop cannot end: the exception is raised when the worker next runs Python
bytecode. A pure-Python loop ends at once. A thread blocked in a C call that released the
GIL (``time.sleep``, a socket read, a lock) goes on waiting until that call returns; it
costs nothing meanwhile and the caller does not wait for it. A C call that holds the GIL
and never returns (a huge regular-expression match, a C extension's endless loop) holds
every thread, the waiting one included: no Python-level limit can end it.

A value whose describing did not finish is remembered (by identity): later listings
show it by its type alone and describing it fails at once, so one bad value costs the
time limit once, not on every turn. At most :data:`MAX_STUCK_WORKERS` stopped workers may
still be alive; beyond that nothing is described until they end (a kernel restart ends
them).
"""

from __future__ import annotations

import ctypes
import functools
import sys
import threading
import time
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from loom_jupyter.errors import ToolError
from loom_jupyter.lineage import fingerprint
from loom_jupyter.tools.base import VariableInfo
from loom_jupyter.tools.describe import (
    DETAIL_CHARS,
    REPR_CHARS,
    Progress,
    describe_value,
    is_user_variable,
    track,
    type_name,
    variable_info,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from types import FrameType

__all__ = [
    "MAX_STUCK_WORKERS",
    "DescribeLimits",
    "DescribeTimeout",
    "NamespaceReader",
    "user_names",
]

T = TypeVar("T")

MAX_STUCK_WORKERS = 8
"""Stopped workers still alive (blocked in C) beyond which nothing more is described."""
_REMEMBERED = 64
"""Values whose describing did not finish, remembered (the oldest forgotten first)."""
_POLL_SECONDS = 0.05
_PACKAGE_DIR = str(Path(__file__).parent.parent)
_THREADING = threading.__file__


@dataclass(frozen=True)
class DescribeLimits:
    """How long describing may take, and how much of it is kept."""

    seconds: float = 10.0
    """One description, one listing or one fingerprint check, at most."""
    preview_seconds: float = 2.0
    """One value's preview within a listing, at most (the listing then goes on)."""
    detail_chars: int = DETAIL_CHARS
    """One variable's description is cut here."""
    repr_chars: int = REPR_CHARS
    """A plain value's ``repr`` within its description is cut here."""


class DescribeTimeout(ToolError):
    """Describing a value took longer than the limit; the value's method is named."""


class _Stopped(BaseException):
    """Raised in a worker whose waiter gave up (a BaseException: ``except Exception`` in
    the value's code does not swallow it)."""


@dataclass
class _Stuck:
    """What is remembered of a value whose describing did not finish."""

    value: object
    step: str


_stuck_values: dict[int, _Stuck] = {}
_stuck_workers: list[threading.Thread] = []
_registry_lock = threading.Lock()


@dataclass
class _Run:
    """One worker's run: its result, what it is doing, whether it still runs the value's code."""

    future: Future[Any] = field(default_factory=Future)
    progress: Progress = field(default_factory=Progress)
    running: bool = True
    thread: threading.Thread | None = None


def user_names(namespace: Mapping[str, Any]) -> list[str]:
    """The person's variable names, sorted; no value's code runs."""
    return sorted(
        name
        for name, value in namespace.items()
        if isinstance(name, str) and is_user_variable(name, value)
    )


class NamespaceReader:
    """Lists, describes and fingerprints values under :class:`DescribeLimits`.

    Its methods block the calling thread for at most the time limit (plus the moment a
    listing takes to mark what it could not preview)."""

    def __init__(self, limits: DescribeLimits | None = None) -> None:
        self.limits = limits or DescribeLimits()

    def describe(self, name: str, value: Any) -> str:
        """``value`` described (:func:`describe_value`); :class:`DescribeTimeout` when it
        takes longer than the limit or did so before."""
        earlier = _remembered(value)
        if earlier is not None:
            raise DescribeTimeout(_earlier_message(name, earlier.step, self.limits.seconds))
        limits = self.limits
        run = _start(
            lambda: describe_value(
                name, value, max_chars=limits.detail_chars, repr_chars=limits.repr_chars
            )
        )
        try:
            text: str = _wait(run, limits.seconds)
        except FutureTimeout:
            where = _stop(run, value)
            raise DescribeTimeout(
                f"describing `{name}` took longer than {limits.seconds:g} s: "
                f"{run.progress.step} did not finish{where}. The description was stopped and "
                f"the kernel is free; `{name}` is not described again in this kernel (its "
                "code would hang again). Do not print or display it; if you need to know "
                "more, look at one attribute you know to be cheap."
            ) from None
        return text

    def variables(self, namespace: Mapping[str, Any]) -> list[VariableInfo]:
        """The person's variables, sorted by name, each with its preview. A value whose
        preview does not finish within :attr:`DescribeLimits.preview_seconds` is shown by
        its type and the listing goes on; once the whole listing's time limit is reached,
        the values left are shown by their type."""
        values = [(name, namespace[name]) for name in user_names(namespace)]
        limits = self.limits
        per_value = min(limits.preview_seconds, limits.seconds)
        deadline = time.monotonic() + limits.seconds
        infos: list[VariableInfo] = []
        while len(infos) < len(values) and time.monotonic() < deadline:
            batch = values[len(infos) :]
            done: list[VariableInfo] = []
            try:
                run = _start(functools.partial(_preview, batch, done))
            except DescribeTimeout:  # too many stopped workers: names and types only
                break
            outcome = _wait_moving(run, functools.partial(len, done), per_value, deadline)
            previewed = done[: len(done)]  # the worker may add one more until it is stopped
            infos += previewed
            if outcome == "done" or len(previewed) == len(batch):
                break
            name, value = batch[len(previewed)]
            _stop(run, value if outcome == "stalled" else None)
            if outcome == "stalled":
                infos.append(_by_type(name, value, _not_shown(run.progress.step, per_value)))
        note = "(not previewed: the listing reached its time limit)"
        return infos + [_by_type(n, v, note) for n, v in values[len(infos) :]]

    def fingerprints(
        self, namespace: Mapping[str, Any], names: Sequence[str]
    ) -> dict[str, str | None]:
        """Each of ``names`` that exists: its fingerprint, ``None`` (no check) for one
        that could not be taken in time."""
        present = [(n, namespace[n]) for n in names if n in namespace]
        done: dict[str, str | None] = {}

        def taking() -> None:
            for name, value in present:
                done[name] = None if _remembered(value) else fingerprint(value)

        try:
            run = _start(taking, step="its fingerprint (repr or hash)")
        except DescribeTimeout:  # too many stopped workers: present, unchecked
            return {name: None for name, _ in present}
        try:
            _wait(run, self.limits.seconds)
        except FutureTimeout:  # the one it was taking may just be slow: not remembered
            finished = dict(done)
            _stop(run, None)
            done = finished
        return {name: done.get(name) for name, _ in present}

    def within(self, work: Callable[[], T], fallback: Callable[[], T]) -> T:
        """``work()`` (which runs values' code) within the time limit, else ``fallback()``
        (which must run none: names and types only)."""
        try:
            run = _start(work)
        except DescribeTimeout:
            return fallback()
        try:
            done: T = _wait(run, self.limits.seconds)
        except FutureTimeout:
            _stop(run, None)
            return fallback()
        return done


def _preview(values: list[tuple[str, Any]], done: list[VariableInfo]) -> None:
    """Each value's listing row into ``done`` (a remembered value by its type)."""
    for name, value in values:
        earlier = _remembered(value)
        if earlier is None:
            done.append(variable_info(name, value))
        else:
            done.append(_by_type(name, value, _not_shown(earlier.step, None)))


def _by_type(name: str, value: Any, summary: str) -> VariableInfo:
    return VariableInfo(name, type_name(value), None, summary)


def _not_shown(step: str, seconds: float | None) -> str:
    """A listing's note for a value not previewed (``seconds``: None when it did not
    finish when tried earlier)."""
    when = "when tried earlier" if seconds is None else f"within {seconds:g} s"
    return f"(not shown: {step} did not finish {when})"


def _earlier_message(name: str, step: str, seconds: float) -> str:
    return (
        f"describing `{name}` took longer than {seconds:g} s before ({step} did not "
        "finish), so it is not described again in this kernel: its code would hang again. "
        "Do not print or display it; if you need to know more, look at one attribute you "
        "know to be cheap."
    )


def _remembered(value: object) -> _Stuck | None:
    with _registry_lock:
        stuck = _stuck_values.get(id(value))
    return stuck if stuck is not None and stuck.value is value else None


def _start(work: Callable[[], T], *, step: str | None = None) -> _Run:
    """Run ``work`` on a new worker thread; refused while too many stopped workers live."""
    with _registry_lock:
        _stuck_workers[:] = [t for t in _stuck_workers if t.is_alive()]
        stuck = len(_stuck_workers)
    if stuck >= MAX_STUCK_WORKERS:
        raise DescribeTimeout(
            f"{stuck} earlier descriptions of values are still running (their code is "
            "blocked and cannot be stopped from Python): nothing more is described until "
            "they end. Restarting the kernel ends them."
        )
    run = _Run()
    if step is not None:
        run.progress.step = step

    def worker() -> None:
        try:
            track(run.progress)
            try:
                value = work()
            finally:
                run.running = False
            run.future.set_result(value)
        except _Stopped:
            return  # the waiter gave up and said so
        except BaseException as exc:  # the value's code may raise anything, even SystemExit
            run.future.set_exception(exc)
        finally:
            track(None)

    run.thread = threading.Thread(target=worker, name="loom-describe", daemon=True)
    run.thread.start()
    return run


def _wait_moving(
    run: _Run, count: Callable[[], int], stall: float, deadline: float
) -> Literal["done", "stalled", "deadline"]:
    """Wait while the worker makes progress (``count`` grows at least every ``stall``
    seconds), until ``deadline``."""
    last, since = count(), time.monotonic()
    while True:
        now = time.monotonic()
        try:
            _wait(run, max(0.0, min(_POLL_SECONDS, deadline - now)))
        except FutureTimeout:
            pass
        else:
            return "done"
        now = time.monotonic()
        if count() != last:
            last, since = count(), now
        if now >= deadline:  # first: a stall ending at the deadline ran out of its time
            return "deadline"
        if now - since >= stall:
            return "stalled"


def _wait(run: _Run, seconds: float) -> Any:
    """The worker's result; :class:`FutureTimeout` at the deadline. A kernel interrupt
    while waiting stops the worker too."""
    try:
        return run.future.result(timeout=seconds)
    except KeyboardInterrupt:
        _stop(run, None)
        raise


def _stop(run: _Run, value: object) -> str:
    """Stop the worker (see the module's docstring for what cannot be stopped), remember
    ``value`` as one whose describing does not finish, and say where the worker was."""
    thread = run.thread
    assert thread is not None
    assert thread.ident is not None
    where = _where(thread.ident)
    if run.running and not run.future.done():
        ctypes.pythonapi.PyThreadState_SetAsyncExc(
            ctypes.c_ulong(thread.ident), ctypes.py_object(_Stopped)
        )
    with _registry_lock:
        _stuck_workers.append(thread)
        if value is not None:
            _stuck_values[id(value)] = _Stuck(value, run.progress.step)
            while len(_stuck_values) > _REMEMBERED:
                del _stuck_values[next(iter(_stuck_values))]
    return where


def _where(ident: int) -> str:
    """Where the worker is in the value's own code, as text ("" when it is not in it)."""
    frame: FrameType | None = sys._current_frames().get(ident)
    while frame is not None:  # innermost first: the first frame not Loom's nor threading's
        filename = frame.f_code.co_filename
        if not filename.startswith(_PACKAGE_DIR) and filename != _THREADING:
            code = frame.f_code
            return f" (stopped in `{code.co_name}`, line {frame.f_lineno} of {code.co_filename})"
        frame = frame.f_back
    return ""
