"""Who may run a write tool: the per-session approval policy.

Modes (pinned): ``ask`` (read tools run, write tools ask the person through an
:data:`Approver` the front supplies), ``auto`` (everything runs) and
``read-only`` (write tools are refused). "Always" answers are remembered for
the rest of the session, each for a scope (:class:`~loom_jupyter.tools.guard.AlwaysScope`:
a shell command's program and subcommand, or the exact command line for one that can run
other programs, :mod:`loom_jupyter.tools.shell_scope`; a folder of files; one MCP tool;
else the tool), listed by
:meth:`ApprovalPolicy.always_labels` and forgotten by :meth:`ApprovalPolicy.reset`. A
write to one of Loom's guard rails (:mod:`loom_jupyter.tools.guard`) asks every time,
whatever the mode or an earlier "Always". A denial is not an exception for the loop: it
becomes an ``is_error`` tool result via :meth:`ApprovalDecision.to_output`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import (
    TYPE_CHECKING,
    Any,
    Literal,
    Protocol,
    TypeAlias,
    TypeVar,
    get_args,
    runtime_checkable,
)

from loom_jupyter.errors import ApprovalDeniedError, LoomConfigError, ManagedPolicyError
from loom_jupyter.policy import managed_policy
from loom_jupyter.settings import ApprovalMode, Settings, SettingSource, stricter_approval
from loom_jupyter.tools.base import ToolContext, ToolOutput, call_args
from loom_jupyter.tools.guard import AlwaysScope

if TYPE_CHECKING:
    from loom_jupyter.messages import ToolUseBlock
    from loom_jupyter.tools.base import AnyTool

__all__ = [
    "ApprovalAnswer",
    "ApprovalDecision",
    "ApprovalDescriber",
    "ApprovalMode",
    "ApprovalPolicy",
    "ApprovalRequest",
    "Approver",
    "Asker",
    "AsyncApprovalDescriber",
    "CodeGuardedTool",
    "GuardedTool",
    "RailUnknown",
    "ScopedTool",
    "ServerApproval",
    "declares_rail",
]

ApprovalAnswer = Literal["yes", "no", "always"]

# events.py spells the answers allow/deny; both spellings are accepted.
_ANSWER_ALIASES = {"allow": "yes", "deny": "no"}

_SWITCH_HINT = (
    "`%cowork approval ask` (ask each time) or `%cowork approval auto` (run without asking)"
)


@dataclass(frozen=True)
class ApprovalRequest:
    """What the person is asked to approve.

    ``detail`` is what they need to judge: the code, the command, or the file
    path with a diff of the change.
    """

    tool_name: str
    summary: str
    detail: str
    call_id: str = ""
    input: Mapping[str, Any] = field(default_factory=dict)
    always: str | None = ""
    """What "Always" would allow from then on, in words ("": offered, unnamed; ``None``: not
    offered, e.g. a write to a guard rail)."""
    question: Literal["run", "keep"] = "run"
    """``run``: may this call run? ``keep``: the call changed protected files without the
    person's approval and Loom undid it; ``detail`` is the diff and a yes puts it back."""


In_contra = TypeVar("In_contra", contravariant=True)

Approver: TypeAlias = Callable[
    [ApprovalRequest], Awaitable[ApprovalAnswer | Literal["allow", "deny"]]
]
"""The front's way of asking the person (a button, an ``input()`` prompt...).

``allow``/``deny`` (the spelling of :mod:`loom_jupyter.engine.events`) mean ``yes``/``no``.
"""


@dataclass(frozen=True)
class Asker:
    """Who answers one caller's questions (the "ask the person" port): the session's card or
    stdin, or nobody (``approver`` None), and then ``nobody`` says why, in the caller's words
    (an outside agent's call with no page open on the notebook)."""

    approver: Approver | None
    nobody: str = ""


@runtime_checkable
class ApprovalDescriber(Protocol[In_contra]):
    """A tool that can describe a call for the person better than its raw JSON."""

    def approval_request(self, args: In_contra, ctx: ToolContext | None) -> ApprovalRequest:
        """The request to show for a call with ``args`` (a diff needs ``ctx``'s folder)."""
        ...


@runtime_checkable
class AsyncApprovalDescriber(Protocol[In_contra]):
    """A tool whose call needs a look at the archive or the kernel to be described (the
    steps a rebuild would run)."""

    async def describe_call(self, args: In_contra, ctx: ToolContext) -> ApprovalRequest:
        """The request to show for a call with ``args``."""
        ...


@runtime_checkable
class GuardedTool(Protocol[In_contra]):
    """A write tool that can reach one of Loom's guard rails (a path, a command, code)."""

    def guard_rail(self, args: In_contra, ctx: ToolContext | None) -> str | None:
        """Which guard rail this call writes (it then always asks), or ``None``."""
        ...


@runtime_checkable
class CodeGuardedTool(Protocol[In_contra]):
    """A write tool whose code is found only when it is called (a cell's source as the
    notebook holds it, the archived steps a rebuild replays): its rail reads that code."""

    async def code_rail(self, args: In_contra, ctx: ToolContext) -> str | None:
        """Which guard rail the code this call runs names, or ``None``."""
        ...


def declares_rail(tool: AnyTool) -> bool:
    """Whether ``tool`` says what its calls may touch (every write tool must: rails by
    construction, :meth:`~loom_jupyter.tools.registry.ToolRegistry.add`)."""
    return isinstance(tool, GuardedTool | CodeGuardedTool)


class RailUnknown(Exception):
    """A rail could not tell what a call touches: the call is refused (fail closed)."""


@runtime_checkable
class ScopedTool(Protocol[In_contra]):
    """A tool whose "Always" covers less than every call of it."""

    def always_scope(self, args: In_contra, ctx: ToolContext | None) -> AlwaysScope:
        """The scope an "Always" for this call would allow."""
        ...


@runtime_checkable
class ServerApproval(Protocol):
    """A tool whose server sets its approval (an MCP server's ``approval`` in loom.yaml):
    ``auto`` runs without asking, ``read-only`` refuses, ``ask`` follows the session's mode;
    a read-only session refuses it whatever its server says."""

    @property
    def server_approval(self) -> ApprovalMode:
        """The server's approval."""
        ...


@dataclass(frozen=True)
class ApprovalDecision:
    """The policy's verdict on one call."""

    allowed: bool
    reason: str = ""
    asked: bool = False
    answer: ApprovalAnswer | None = None
    rail: str | None = None
    """The guard rail the person was asked about and allowed this call to write."""

    def error(self) -> ApprovalDeniedError:
        """The denial as an error (for code that prefers raising)."""
        return ApprovalDeniedError(self.reason)

    def to_output(self) -> ToolOutput:
        """The ``is_error`` tool result the model sees for a denial."""
        return ToolOutput.error(self.reason)


class ApprovalPolicy:
    """The approval rules of one session (mode, approver, "always allow" set)."""

    def __init__(
        self,
        mode: ApprovalMode = "ask",
        *,
        approver: Approver | None = None,
        always_allowed: Iterable[str] = (),
        source: SettingSource = "default",
    ) -> None:
        self.mode = mode
        self.source: SettingSource = source  # where the mode in force came from (DESIGN §12)
        self.approver = approver
        self._always: dict[str, str] = {name: f"every {name} call" for name in always_allowed}
        self._prefixes: set[str] = set()  # the keys of prefix scopes (folders of files)
        self._asking: asyncio.Lock | None = None

    @classmethod
    def from_settings(
        cls, settings: Settings, *, approver: Approver | None = None
    ) -> ApprovalPolicy:
        """A policy in the mode the settings (``approval`` / ``LOOM_APPROVAL``) pick."""
        return cls(settings.approval, approver=approver, source=settings.source_of("approval"))

    @property
    def mode(self) -> ApprovalMode:
        """``ask``, ``auto`` or ``read-only``; may be switched mid-session. Never looser
        than the organisation's managed policy allows now (DESIGN §16; a policy file that
        cannot be read makes it ``read-only``: fail closed)."""
        try:
            floor = managed_policy().approval
        except ManagedPolicyError:
            return "read-only"
        if floor is not None and stricter_approval(floor, self._mode):
            return floor
        return self._mode

    @mode.setter
    def mode(self, value: str) -> None:
        allowed = get_args(ApprovalMode)
        if value not in allowed:
            raise LoomConfigError(
                f"approval mode must be one of {', '.join(allowed)}; got {value!r}"
            )
        managed_policy().check_approval(value)  # a looser mode than the policy's: refused
        self._mode: ApprovalMode = value  # type: ignore[assignment]

    @property
    def always_allowed(self) -> frozenset[str]:
        """The scopes the person allowed for the rest of this session (their keys)."""
        return frozenset(self._always)

    def always_labels(self) -> list[str]:
        """What "Always" answers allow now, in words, in the order they were given."""
        return list(self._always.values())

    def allow_always(self, tool_name: str) -> None:
        """Stop asking about every call of ``tool_name`` for the rest of the session."""
        self._always[tool_name] = f"every {tool_name} call"

    def reset(self) -> None:
        """Forget every "always" answer."""
        self._always.clear()
        self._prefixes.clear()

    def scope(self, tool: AnyTool, call: ToolUseBlock, ctx: ToolContext | None) -> AlwaysScope:
        """What an "Always" for ``call`` would allow: the tool's own scope, else the tool."""
        name = tool.spec.name
        if isinstance(tool, ScopedTool):
            try:
                return tool.always_scope(call_args(tool, call.input), ctx)
            except Exception:  # a call too odd to scope is allowed once at most
                return AlwaysScope(f"{name}!{call.id}", "this call only")
        return AlwaysScope(name, f"every {name} call")

    def _covered(self, scope: AlwaysScope) -> bool:
        """Whether an earlier "Always" covers ``scope``: the same key, or a key below an
        earlier prefix scope (a folder: its files and subfolders). Keys are compared whole,
        never as a plain string prefix: ``shell:git status`` does not cover
        ``shell:git statusx``, and an exact command that happens to end in ``/`` covers no
        longer one."""
        key = scope.key
        return key in self._always or (
            scope.prefix and any(key.startswith(k) for k in self._prefixes)
        )

    def asker(self) -> Asker:
        """The session's own way of asking (a caller may bring another, see :class:`Asker`)."""
        return Asker(self.approver)

    async def check(
        self,
        tool: AnyTool,
        call: ToolUseBlock,
        ctx: ToolContext | None = None,
        *,
        asker: Asker | None = None,
    ) -> ApprovalDecision:
        """Decide whether ``call`` of ``tool`` may run, asking the person (through ``asker``,
        else the session's approver) if needed. ``ctx`` lets file tools show a diff against
        the file on disk."""
        asker = asker or self.asker()
        name = tool.spec.name
        try:
            rail = await _rail(tool, call, ctx)
        except RailUnknown as unknown:
            return ApprovalDecision(False, f"{name} was not run: {unknown}")
        if rail is not None:
            return await self._guarded(tool, call, ctx, rail, asker)
        server = tool.server_approval if isinstance(tool, ServerApproval) else None
        if server is not None and self.mode != "read-only":
            if server == "read-only":
                return ApprovalDecision(False, _server_read_only_reason(name))
            if server == "auto":
                return ApprovalDecision(True)
        if tool.access == "read" or self.mode == "auto":
            return ApprovalDecision(True)
        if self.mode == "read-only":
            return ApprovalDecision(False, _read_only_reason(name))
        scope = self.scope(tool, call, ctx)
        if self._covered(scope) or name in self._always:
            return ApprovalDecision(True, answer="always")
        request = replace(await self._described(tool, call, ctx), always=scope.label)
        return await self._ask(request, asker, scope)

    async def _guarded(
        self, tool: AnyTool, call: ToolUseBlock, ctx: ToolContext | None, rail: str, asker: Asker
    ) -> ApprovalDecision:
        """A write to a guard rail: refused when read-only, else asked, every time."""
        name = tool.spec.name
        if self.mode == "read-only":
            return ApprovalDecision(False, _read_only_reason(name))
        request = await self._described(tool, call, ctx)
        summary = f"{request.summary} — it writes {rail}: Loom always asks about this"
        decision = await self._ask(
            replace(request, summary=summary, always=None), asker, None, rail
        )
        return replace(decision, rail=rail) if decision.allowed else decision

    async def confirm(self, request: ApprovalRequest, asker: Asker | None = None) -> bool:
        """Ask a yes/no question that is not a call's approval (keep a protected change?),
        in the same row as the others; False when nobody can answer or the asking fails."""
        approver = (asker or self.asker()).approver
        if approver is None:
            return False
        try:
            async with self._one_question():
                answer = await approver(request)
        except Exception:  # a front that cannot ask leaves the safe answer
            return False
        return _ANSWER_ALIASES.get(answer, answer) in ("yes", "always")

    def will_ask(
        self,
        tool: AnyTool,
        call: ToolUseBlock | None = None,
        ctx: ToolContext | None = None,
        *,
        asker: Asker | None = None,
    ) -> bool:
        """Whether :meth:`check` would ask the person about ``tool`` (this ``call``) now."""
        if tool.access != "write" or (asker or self.asker()).approver is None:
            return False
        if call is not None:  # a rail read at call time (a cell's code) is not known here
            try:
                if _sync_rail(tool, call, ctx) is not None:
                    return self.mode != "read-only"
            except RailUnknown:
                return False  # refused, not asked
        server = tool.server_approval if isinstance(tool, ServerApproval) else "ask"
        if server != "ask" or self.mode != "ask" or tool.spec.name in self._always:
            return False
        return call is None or not self._covered(self.scope(tool, call, ctx))

    def describe(
        self, tool: AnyTool, call: ToolUseBlock, ctx: ToolContext | None = None
    ) -> ApprovalRequest:
        """The request shown to the person for ``call``."""
        if isinstance(tool, ApprovalDescriber):
            try:
                request = tool.approval_request(call_args(tool, call.input), ctx)
            except Exception:  # describing is best effort; the raw input still shows the call
                request = None
            if request is not None:
                return replace(request, call_id=call.id, input=dict(call.input))
        detail = json.dumps(dict(call.input), indent=2, ensure_ascii=False, default=str)
        return ApprovalRequest(
            tool.spec.name, f"run {tool.spec.name}", detail, call.id, dict(call.input)
        )

    async def _described(
        self, tool: AnyTool, call: ToolUseBlock, ctx: ToolContext | None
    ) -> ApprovalRequest:
        """:meth:`describe`, or the tool's own async description where it has one."""
        if ctx is not None and isinstance(tool, AsyncApprovalDescriber):
            try:
                request = await tool.describe_call(call_args(tool, call.input), ctx)
            except Exception:  # best effort, as describe(): the raw input still shows the call
                return self.describe(tool, call, ctx)
            return replace(request, call_id=call.id, input=dict(call.input))
        return self.describe(tool, call, ctx)

    async def _ask(
        self,
        request: ApprovalRequest,
        asker: Asker,
        scope: AlwaysScope | None,
        rail: str | None = None,
    ) -> ApprovalDecision:
        name = request.tool_name
        approver = asker.approver
        if approver is None and asker.nobody:
            return ApprovalDecision(False, asker.nobody)
        if approver is None:
            why = (
                f"it writes {rail}, which always needs the person's approval,"
                if rail
                else "approval mode is `ask`"
            )
            reason = (
                f"{name} needs approval, but there is nobody to ask here ({why} and this front "
                f"cannot show a prompt)."
            )
            hint = "" if rail else f" The person can switch with {_SWITCH_HINT}."
            return ApprovalDecision(False, reason + hint)
        try:
            async with self._one_question():  # sub-agents share the policy: one card at a time
                answer = await approver(request)
        except Exception as exc:  # a front that cannot ask must not crash the loop
            reason = (
                f"{name} was not run: asking for approval failed ({type(exc).__name__}: {exc})."
            )
            return ApprovalDecision(False, reason + f" The person can switch with {_SWITCH_HINT}.")
        return self._decide(name, answer, scope)

    def _one_question(self) -> asyncio.Lock:
        """The lock that puts the person's questions in a row (made on the asking loop)."""
        if self._asking is None:
            self._asking = asyncio.Lock()
        return self._asking

    def _decide(self, name: str, answer: object, scope: AlwaysScope | None) -> ApprovalDecision:
        answer = _ANSWER_ALIASES.get(answer, answer) if isinstance(answer, str) else answer
        if answer == "always" and scope is None:  # a guard rail: allowed this once only
            return ApprovalDecision(True, asked=True, answer="yes")
        if answer == "always":
            assert scope is not None
            self._always[scope.key] = scope.label
            if scope.prefix:
                self._prefixes.add(scope.key)
            return ApprovalDecision(True, asked=True, answer="always")
        if answer == "yes":
            return ApprovalDecision(True, asked=True, answer="yes")
        if answer == "no":
            what = (
                f"rejected this {name} change; nothing was changed in the notebook"
                if name in NOTEBOOK_CHANGES
                else f"declined this {name} call"
            )
            reason = (
                f"The person {what}. Do not retry it as is; ask them what they would like instead."
            )
            return ApprovalDecision(False, reason, asked=True, answer="no")
        return ApprovalDecision(
            False, f"{name} was not run: unexpected approval answer {answer!r}."
        )


NOTEBOOK_CHANGES = frozenset({"edit_cell", "insert_cell", "delete_cell", "move_cell"})
"""Tools whose refusal the person sees as a rejected change of their notebook."""


async def _rail(tool: AnyTool, call: ToolUseBlock, ctx: ToolContext | None) -> str | None:
    """The guard rail a write call reaches, if any; :class:`RailUnknown` when the tool
    cannot tell (the call is then refused, never run unchecked)."""
    found = _sync_rail(tool, call, ctx)
    if found is not None or tool.access != "write" or not isinstance(tool, CodeGuardedTool):
        return found
    if ctx is None:
        raise RailUnknown("Loom cannot read the code it would run here.")
    try:
        return await tool.code_rail(call_args(tool, call.input), ctx)
    except Exception as error:
        raise RailUnknown(_why(error)) from error


def _sync_rail(tool: AnyTool, call: ToolUseBlock, ctx: ToolContext | None) -> str | None:
    if tool.access != "write" or not isinstance(tool, GuardedTool):
        return None
    try:
        return tool.guard_rail(call_args(tool, call.input), ctx)
    except Exception as error:  # a path outside the jail, an odd input: refused with why
        raise RailUnknown(_why(error)) from error


def _why(error: Exception) -> str:
    detail = str(error).strip() or type(error).__name__
    return f"Loom could not tell what it would touch ({detail})."


def _server_read_only_reason(name: str) -> str:
    return (
        f"{name} was not run: its MCP server is read-only (`approval: read-only` in loom.yaml), "
        "so none of its tools run. Tell the person if you need it."
    )


def _read_only_reason(name: str) -> str:
    return (
        f"{name} changes things and this session is read-only, so it was not run. "
        f"Describe what you would do instead, or the person can allow changes with {_SWITCH_HINT}."
    )
