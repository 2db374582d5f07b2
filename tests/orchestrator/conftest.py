"""Delegation fixtures: a real archive and session, a LocalKernel, and a routing model script.

:class:`Router` answers like a planner, sub-agents and a judge would, keyed by what
each request is (the forced tool, or the subtask description at the top of the
first user message), so parallel subtasks get their own replies in any order.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pytest

from loom_jupyter.models.scripted import ScriptedModel, text, tool_call
from loom_jupyter.orchestrator import Delegations, attach
from loom_jupyter.session.conversation import CoworkSession
from loom_jupyter.settings import Settings
from loom_jupyter.tools.registry import default_registry

if TYPE_CHECKING:
    from pathlib import Path

    from loom_jupyter.archive import Archive
    from loom_jupyter.models.base import ModelRequest
    from loom_jupyter.models.scripted import ReplyLike
    from loom_jupyter.tools.approval import Approver
    from loom_jupyter.tools.local_kernel import LocalKernel

Step = Callable[["ModelRequest"], "ReplyLike | Awaitable[ReplyLike]"]


def plan(*subtasks: dict[str, Any]) -> dict[str, Any]:
    """A submit_plan input; each subtask gets the pinned keys with defaults."""
    full = [
        {"depends_on": [], "acceptance": "", "check": None, "description": f"do {s['id']}", **s}
        for s in subtasks
    ]
    return {"subtasks": full}


def first_user_text(request: ModelRequest) -> str:
    """The text of the request's first user message (where a subtask's description is)."""
    first = request.messages[0]
    texts = [b.text for b in first.content if b.type == "text"]
    return "\n".join(t for t in texts if not t.startswith(("<subagent>", "<session_state>")))


def last_user_text(request: ModelRequest) -> str:
    return "\n".join(b.text for b in request.messages[-1].content if b.type == "text")


@dataclass
class Router:
    """Plans, sub-agent steps (per description and attempt) and verdicts (per subtask id)."""

    plans: list[dict[str, Any]]
    steps: dict[str, list[Any]] = field(default_factory=dict)  # description -> replies per attempt
    verdicts: dict[str, list[str]] = field(default_factory=dict)  # id -> "pass" / "fail: why"
    log: list[tuple[str, str]] = field(default_factory=list)  # (kind, key) in arrival order
    attempts: dict[str, int] = field(default_factory=dict)

    async def __call__(self, request: ModelRequest) -> ReplyLike:
        if request.tool_choice == "submit_plan":
            self.log.append(("plan", last_user_text(request)))
            return tool_call("submit_plan", self.plans.pop(0))
        if request.tool_choice == "submit_verdict":
            key = last_user_text(request).split("\n", 1)[0].removeprefix("Subtask id: ")
            self.log.append(("judge", key))
            answers = self.verdicts.get(key) or ["pass"]
            answer = answers.pop(0) if len(answers) > 1 else answers[0]
            verdict, _, feedback = answer.partition(": ")
            return tool_call("submit_verdict", {"verdict": verdict, "feedback": feedback or "ok"})
        return await self._step(request)

    async def _step(self, request: ModelRequest) -> ReplyLike:
        description = first_user_text(request).split("\n", 1)[0]
        is_first = len(request.messages) == 1
        if is_first:
            self.attempts[description] = self.attempts.get(description, 0) + 1
        self.log.append(("first" if is_first else "step", description))
        attempt = self.attempts.get(description, 1)
        script = self.steps.get(description)
        if script is None:
            return text(f"finished {description}")
        step = script[min(attempt, len(script)) - 1]
        produced = step(request) if callable(step) else step
        if asyncio.iscoroutine(produced):
            produced = await produced
        return produced


def sequence(*replies: ReplyLike) -> Step:
    """One attempt made of several model calls, in order (tool call, then the final text)."""

    def step(request: ModelRequest) -> ReplyLike:
        calls = sum(1 for m in request.messages if m.role == "assistant")
        return replies[min(calls, len(replies) - 1)]

    return step


OpenDelegations = Callable[..., Awaitable[Delegations]]


@pytest.fixture
async def delegations(
    archive: Archive, notebook: Path, kernel: LocalKernel
) -> AsyncIterator[OpenDelegations]:
    """``await delegations(model, approver=..., **settings)``: a session with an orchestrator."""
    opened: list[CoworkSession] = []

    async def factory(
        model: ScriptedModel | Any, *, approver: Approver | None = None, **settings: Any
    ) -> Delegations:
        settings.setdefault("approval", "auto")
        session = await CoworkSession.open(
            archive,
            notebook_path=notebook,
            settings=Settings(**settings),
            model=model,
            kernel=kernel,
            tools=default_registry(),
            approver=approver,
        )
        opened.append(session)
        return attach(session)

    yield factory
    for session in opened:
        await session.close()


def scripted(router: Router) -> ScriptedModel:
    return ScriptedModel(router)
