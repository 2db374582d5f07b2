"""Ask the person before a write tool runs (policy ``ask``), through ``input()``.

A message sent to a busy kernel's main shell is handled only after the running
cell ends, so from a blocking ``%cowork`` cell the way to get an answer is
stdin (and the sidebar, whose comm rides a subshell: see
:mod:`.sidebar.approvals`; the first answer wins). ``input()`` must run on the
main thread, so the question is marshalled there. In a notebook the question
is shown in a display that is cleared once answered; only the short prompt
and the answer stay. Where there is no stdin (nbclient, ``jupyter execute``, a
closed terminal) the call is denied with a message saying how to allow tools
without asking.
"""

from __future__ import annotations

import ctypes
import threading
import time
import uuid
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from collections.abc import Callable

    from loom_jupyter.engine.events import ApprovalAnswer, ApprovalRequest
    from loom_jupyter.jupyter.cell.render import Renderer
    from loom_jupyter.jupyter.kernel.mainthread import MainThreadQueue

__all__ = [
    "NO_STDIN_MESSAGE",
    "Interruptible",
    "StdinApprover",
    "format_question",
    "parse_answer",
    "read_answer",
]

T = TypeVar("T")

NO_STDIN_MESSAGE = (
    "Denied {tool}: approval needs an answer on stdin, which this run does not have "
    "(nbclient / jupyter execute). To let tools run without asking, set "
    "LOOM_APPROVAL=auto before starting the kernel, or run %cowork approval auto."
)
_DETAIL_KEYS = ("code", "command", "source", "path", "content", "old", "new", "goal")
_DETAIL_CHARS = 4000
_PROMPT = "Allow? [y]es / [n]o / [a]lways: "
_RETRY = "Please answer y (yes), n (no) or a (always): "


class _AnsweredElsewhere(BaseException):
    """Raised into the main thread to end an ``input()`` answered in the sidebar.

    A BaseException because ipykernel's input loop swallows ``Exception``.
    """


class Interruptible:
    """Run a blocking call on the main thread so that another thread can end it.

    One question at a time: :meth:`arm` before handing :meth:`run` to the
    main thread. :meth:`cancel` (any thread) either stops the call before it
    starts or raises :class:`_AnsweredElsewhere` inside it
    (``PyThreadState_SetAsyncExc``). The handshake (``_thread``,
    ``_cancelling``, ``_injected``) guarantees the exception can only land
    inside ``run``: after the call, ``run`` waits for a cancel in progress and
    absorbs an exception already sent. No lock is held on the main thread, so
    the exception cannot leave one locked.
    """

    def __init__(self) -> None:
        self._thread: int | None = None
        self._cancelling = False
        self._cancelled = False
        self._injected = False

    def arm(self) -> None:
        """A new question: forget the last one's cancel."""
        self._cancelled = self._injected = False

    def run(self, fn: Callable[[], T]) -> T | None:
        """``fn()``, or None when :meth:`cancel` came first or ended it."""
        landed = False
        try:
            self._thread = threading.get_ident()
            try:
                while self._cancelling:  # a cancel in progress decides first
                    time.sleep(0.001)
                return None if self._cancelled else fn()
            except _AnsweredElsewhere:
                landed = True
                return None
            finally:
                self._thread = None
                while self._cancelling:
                    time.sleep(0.001)
                while self._injected and not landed:  # sent but not raised yet: let it land here
                    time.sleep(0.001)
        except _AnsweredElsewhere:
            return None

    def cancel(self) -> bool:
        """End the question (from another thread); False when it was already ended."""
        self._cancelling = True
        try:
            if self._cancelled:
                return False
            self._cancelled = True
            thread = self._thread
            if thread is None:
                return True  # not started (run skips it) or already over
            exc = ctypes.py_object(_AnsweredElsewhere)
            self._injected = (
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread), exc) == 1
            )
            return self._injected
        finally:
            self._cancelling = False


class StdinApprover:
    """An ``Approver`` that asks on stdin; remembers when stdin is unavailable."""

    def __init__(self, main: MainThreadQueue, renderer: Renderer | None = None) -> None:
        self._main = main
        self.renderer = renderer
        self._stdin_missing = False
        self._pending = Interruptible()

    async def __call__(self, request: ApprovalRequest) -> ApprovalAnswer:
        """Show the request and wait for y / n / a on the main thread (deny without stdin)."""
        answer = await self.ask(request)
        if answer is None:
            self._warn_no_stdin(request)
            return "no"
        return answer

    async def ask(self, request: ApprovalRequest) -> ApprovalAnswer | None:
        """The answer on stdin; None when there is no stdin or :meth:`cancel` ended the wait."""
        if self._stdin_missing:
            return None
        self._pending.arm()
        answer = await self._main.call(lambda: self._pending.run(lambda: self._ask(request)))
        return parse_answer(answer) if answer is not None else None

    def cancel(self) -> bool:
        """End a pending question (answered elsewhere); any thread."""
        return self._pending.cancel()

    def _ask(self, request: ApprovalRequest) -> ApprovalAnswer | str:
        shown = _show_question(request, self.renderer)
        question = _prompt(request) if shown else format_question(request)
        try:
            while True:
                answer = read_answer(question)
                if answer is None:
                    self._stdin_missing = True
                    return "missing"
                decision = parse_answer(answer)
                if decision is not None:
                    return decision
                question = _RETRY if request.always is not None else "Please answer y or n: "
        finally:
            if shown:
                _clear_question(shown)

    def _warn_no_stdin(self, request: ApprovalRequest) -> None:
        message = NO_STDIN_MESSAGE.format(tool=request.tool_name)
        renderer = self.renderer
        if renderer is not None:  # drawn on the main thread (the cell's pump runs it)
            self._main.post(lambda: renderer.message(message, level="warning"))


def _show_question(request: ApprovalRequest, renderer: Renderer | None) -> str | None:
    """Show the question above the stdin box in a notebook; its display id (None elsewhere)."""
    if renderer is None or not getattr(renderer, "rich", False):
        return None
    from IPython.display import display

    display_id = uuid.uuid4().hex
    text = format_question(request).removesuffix(_prompt(request)).rstrip()
    display(_question_bundle(text), raw=True, display_id=display_id)
    return display_id


def _clear_question(display_id: str) -> None:
    """Answered: the question's display becomes empty (the tool card shows the outcome)."""
    from IPython.display import update_display

    update_display({"text/plain": ""}, raw=True, display_id=display_id)


def _question_bundle(text: str) -> dict[str, Any]:
    import html

    body = f'<pre style="margin:2px 0;white-space:pre-wrap">{html.escape(text)}</pre>'
    return {"text/html": body, "text/plain": text}


def read_answer(question: str) -> str | None:
    """The person's answer through ``input()``; ``None`` where there is no stdin.

    Under nbclient, papermill or ``jupyter execute`` the kernel has no stdin
    channel and IPython raises; a closed terminal gives EOF.
    """
    from IPython.core.error import StdinNotImplementedError

    try:
        return input(question)
    except (StdinNotImplementedError, EOFError, OSError):
        return None


def format_question(request: ApprovalRequest) -> str:
    """The text shown above the prompt: the tool, its summary and its code or command."""
    keep = request.question == "keep"
    lines = [
        request.summary
        if keep
        else f"The agent wants to run {request.tool_name}: {request.summary}"
    ]
    if request.detail.strip():
        lines.append(_cap(request.detail.rstrip()))
    else:
        lines.extend(_input_details(request))
    if request.always:
        lines.append(f"(always = {request.always}, for the rest of this conversation)")
    lines.append(_prompt(request))
    return "\n".join(lines)


def _prompt(request: ApprovalRequest) -> str:
    """The question's last line: no "always" for a write to one of Loom's guard rails."""
    if request.question == "keep":
        return "Keep this change? [y]es / [n]o (leave it undone): "
    return "Allow? [y]es / [n]o: " if request.always is None else _PROMPT


def _input_details(request: ApprovalRequest) -> list[str]:
    lines = []
    for key in _DETAIL_KEYS:
        value = request.input.get(key)
        if isinstance(value, str) and value.strip():
            lines.append(f"--- {key} ---\n{_cap(value.rstrip())}")
    return lines


def _cap(text: str) -> str:
    return text if len(text) <= _DETAIL_CHARS else text[:_DETAIL_CHARS] + "\n…"


def parse_answer(answer: str) -> ApprovalAnswer | None:
    """``y``/``yes`` -> yes, ``n``/``no`` -> no, ``a``/``always`` -> always; else None."""
    text = answer.strip().lower()
    if text in {"y", "yes"}:
        return "yes"
    if text in {"n", "no"}:
        return "no"
    if text in {"a", "always"}:
        return "always"
    return None
