"""Ask the person before a write tool runs (policy ``ask``), through ``input()``.

A message sent to a busy kernel is handled only after the running cell ends,
so from a blocking ``%cowork`` cell the only way to get an answer is stdin.
``input()`` must run on the main thread, so the question is marshalled there.
Where there is no stdin (nbclient, ``jupyter execute``, a closed terminal) the
call is denied with a message saying how to allow tools without asking.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from loom_jupyter.engine.events import ApprovalAnswer, ApprovalRequest
    from loom_jupyter.jupyter.mainthread import MainThreadQueue
    from loom_jupyter.jupyter.render import Renderer

__all__ = ["NO_STDIN_MESSAGE", "StdinApprover", "format_question", "parse_answer", "read_answer"]

NO_STDIN_MESSAGE = (
    "Denied {tool}: approval needs an answer on stdin, which this run does not have "
    "(nbclient / jupyter execute). To let tools run without asking, set "
    "LOOM_APPROVAL=auto before starting the kernel, or run `%cowork approval auto`."
)
_DETAIL_KEYS = ("code", "command", "source", "path", "content", "old", "new", "goal")
_DETAIL_CHARS = 4000


class StdinApprover:
    """An ``Approver`` that asks on stdin; remembers when stdin is unavailable."""

    def __init__(self, main: MainThreadQueue, renderer: Renderer | None = None) -> None:
        self._main = main
        self.renderer = renderer
        self._stdin_missing = False

    async def __call__(self, request: ApprovalRequest) -> ApprovalAnswer:
        """Show the request and wait for y / n / a on the main thread."""
        if self._stdin_missing:
            return self._deny_without_stdin(request)
        return await self._main.call(lambda: self._ask(request))

    def _ask(self, request: ApprovalRequest) -> ApprovalAnswer:
        question = format_question(request)
        while True:
            answer = read_answer(question)
            if answer is None:
                self._stdin_missing = True
                return self._deny_without_stdin(request)
            decision = parse_answer(answer)
            if decision is not None:
                return decision
            question = "Please answer y (yes), n (no) or a (always for this tool): "

    def _deny_without_stdin(self, request: ApprovalRequest) -> ApprovalAnswer:
        message = NO_STDIN_MESSAGE.format(tool=request.tool_name)
        if self.renderer is not None:
            self.renderer.message(message, level="warning")
        return "no"


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
    lines = [f"The agent wants to run {request.tool_name}: {request.summary}"]
    if request.detail.strip():
        lines.append(_cap(request.detail.rstrip()))
    else:
        lines.extend(_input_details(request))
    lines.append("Allow? [y]es / [n]o / [a]lways for this tool: ")
    return "\n".join(lines)


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
