"""SessionState: what the session has done so far, extracted mechanically.

No model is asked to summarise anything. The state is folded, turn by turn,
from facts the engine already has: the user's messages (focus and explicit
decisions), tool results (errors and their fixes) and the typed effects tools
report (files touched, variables changed). It rides in every request as a
small YAML block (pruned to about 1,000 tokens) and is persisted as JSON on
the session row, so a resumed session has it back without replaying turns.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from loom_jupyter.engine.tokens import text_tokens as estimate_tokens
from loom_jupyter.tools.base import FileEffect, VariableEffect

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

__all__ = [
    "STATE_TOKEN_BUDGET",
    "Decision",
    "FileTouch",
    "OpenTask",
    "PendingError",
    "ResolvedError",
    "SessionState",
    "VariableChange",
    "extract_decisions",
]

STATE_TOKEN_BUDGET = 1_000
MAX_FILES = 20
MAX_VARIABLES = 20
MAX_DECISIONS = 10
MAX_RESOLVED = 5
MAX_LOSSES = 3
FOCUS_CHARS = 100
DECISION_CHARS = 160
ERROR_CHARS = 120

# An explicit constraint or preference: "always ...", "never ...", "don't ...",
# "must ...", "prefer ...", "avoid ...", or an imperative "use X" / "use X instead".
_DECISION = re.compile(
    r"\b(always|never|don'?t|do not|must|mustn'?t|prefer|avoid|make sure|from now on|stick to)\b"
    r"|^(please |let'?s |we |you should |only )?use\s+\S"
    r"|\buse\s+\S+\s+(instead|rather|only)\b",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|\n+")


@dataclass(frozen=True)
class FileTouch:
    """A file a tool read, wrote, edited, listed or searched."""

    path: str
    action: str
    turn: int


@dataclass(frozen=True)
class VariableChange:
    """A user-namespace variable that ``run_python`` created or changed."""

    name: str
    type_name: str
    shape: str | None
    turn: int


@dataclass(frozen=True)
class Decision:
    """An explicit constraint or preference the user stated."""

    text: str
    turn: int


@dataclass(frozen=True)
class PendingError:
    """A tool's latest failure, not yet followed by a success."""

    tool: str
    error: str
    turn: int


@dataclass(frozen=True)
class ResolvedError:
    """A tool failed, then later succeeded."""

    tool: str
    error: str
    failed_turn: int
    fixed_turn: int


@dataclass(frozen=True)
class OpenTask:
    """A delegated task that has not finished."""

    id: str
    goal: str
    status: str


@dataclass(frozen=True)
class KernelLoss:
    """The kernel lost its namespace after ``turn``: a ``restart`` or a ``crash`` at ``at``."""

    turn: int
    cause: Literal["restart", "crash"]
    at: str


@dataclass(frozen=True)
class SessionState:
    """The mechanically extracted state of one session (immutable; ``with_*`` return copies)."""

    session_id: str | None = None
    notebook: str = ""
    model: str = ""
    turn_count: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    focus: str = ""
    files: tuple[FileTouch, ...] = ()
    variables: tuple[VariableChange, ...] = ()
    decisions: tuple[Decision, ...] = ()
    errors_resolved: tuple[ResolvedError, ...] = ()
    pending_errors: tuple[PendingError, ...] = field(default=(), repr=False)
    open_tasks: tuple[OpenTask, ...] = ()
    kernel_losses: tuple[KernelLoss, ...] = ()
    kernel_session: str = ""  # the kernel process the variables were made in (not shown)
    # Of the variables lost with the last kernel, those the live namespace has again (as
    # checked at load and at each request): re-created outside the conversation's record.
    recreated: tuple[str, ...] = ()

    def with_user_message(self, turn: int, text: str) -> SessionState:
        """Fold in a user message: focus and explicit decisions."""
        decisions = list(self.decisions)
        for sentence in extract_decisions(text):
            decisions = [d for d in decisions if _norm(d.text) != _norm(sentence)]
            decisions.append(Decision(sentence, turn))
        focus = _first_line(text)[:FOCUS_CHARS]
        return replace(self, focus=focus, decisions=tuple(decisions[-MAX_DECISIONS:]))

    def with_tool_result(
        self,
        turn: int,
        tool: str,
        *,
        is_error: bool,
        text: str = "",
        effects: Iterable[FileEffect | VariableEffect] = (),
    ) -> SessionState:
        """Fold in one tool result: its effects, and errors it raised or resolved."""
        state = self._with_effects(turn, effects)
        pending = [p for p in state.pending_errors if p.tool != tool]
        failed = next((p for p in state.pending_errors if p.tool == tool), None)
        if is_error:
            pending.append(PendingError(tool, _first_line(text)[:ERROR_CHARS], turn))
            return replace(state, pending_errors=tuple(pending))
        resolved = state.errors_resolved
        if failed is not None:
            fix = ResolvedError(tool, failed.error, failed.turn, turn)
            resolved = (*resolved, fix)[-MAX_RESOLVED:]
        return replace(state, pending_errors=tuple(pending), errors_resolved=resolved)

    def with_totals(
        self, *, turn_count: int, input_tokens: int, output_tokens: int, cost_usd: float
    ) -> SessionState:
        """Update the session counters (from the archive's session row)."""
        return replace(
            self,
            turn_count=turn_count,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cost_usd=cost_usd,
        )

    def with_kernel_lost(
        self, turn: int, cause: Literal["restart", "crash"], at: str
    ) -> SessionState:
        """Note that the kernel's variables are gone (those made up to ``turn``)."""
        losses = (*self.kernel_losses, KernelLoss(turn, cause, at))[-MAX_LOSSES:]
        return replace(self, kernel_losses=losses, recreated=())

    def with_variables(self, turn: int, effects: Iterable[VariableEffect]) -> SessionState:
        """Variables made outside a tool call (the person's cells), as of ``turn``."""
        return self._with_effects(turn, effects)

    def in_kernel(self, kernel: str, *, last_turn: int, at: str) -> SessionState:
        """The session now runs in ``kernel``. Another kernel than the one its variables
        were made in means they are gone: a restart after ``last_turn`` (unless a crash
        was already noted there)."""
        if not kernel or kernel == self.kernel_session:
            return self
        moved = replace(self, kernel_session=kernel, recreated=())
        noted = bool(self.kernel_losses) and self.kernel_losses[-1].turn >= last_turn
        if not self.kernel_session or noted or last_turn == 0:
            return moved
        return moved.with_kernel_lost(last_turn, "restart", at)

    def lost_names(self) -> list[str]:
        """The variables made before the last loss of the kernel: gone unless the namespace
        has them again (what :meth:`with_present` is told)."""
        if not self.kernel_losses:
            return []
        cut = self.kernel_losses[-1].turn
        return [v.name for v in self.variables if v.turn <= cut]

    def with_present(self, present: Iterable[str]) -> SessionState:
        """The namespace as read now: which lost variables exist again (re-created outside
        the conversation's record, e.g. by cells run before Loom loaded)."""
        there = set(present)
        recreated = tuple(name for name in self.lost_names() if name in there)
        return self if recreated == self.recreated else replace(self, recreated=recreated)

    def live_and_gone(self) -> tuple[list[VariableChange], list[VariableChange]]:
        """Variables still in the kernel and those lost with it (made before the last loss
        and absent from the namespace when last checked: :meth:`with_present`)."""
        if not self.kernel_losses:
            return list(self.variables), []
        cut = self.kernel_losses[-1].turn
        return [v for v in self.variables if v.turn > cut], [
            v for v in self.variables if v.turn <= cut and v.name not in self.recreated
        ]

    def recreated_variables(self) -> list[VariableChange]:
        """Lost variables the namespace has again, made by code the conversation did not see."""
        if not self.kernel_losses:
            return []
        cut = self.kernel_losses[-1].turn
        return [v for v in self.variables if v.turn <= cut and v.name in self.recreated]

    def with_tasks(self, tasks: Sequence[OpenTask]) -> SessionState:
        """Replace the open delegated tasks."""
        return replace(self, open_tasks=tuple(tasks))

    def _with_effects(
        self, turn: int, effects: Iterable[FileEffect | VariableEffect]
    ) -> SessionState:
        files, variables = list(self.files), list(self.variables)
        for effect in effects:
            if isinstance(effect, FileEffect):
                files = [f for f in files if f.path != effect.path]
                files.append(FileTouch(effect.path, effect.action, turn))
            else:
                variables = [v for v in variables if v.name != effect.name]
                variables.append(VariableChange(effect.name, effect.type_name, effect.shape, turn))
        return replace(
            self, files=tuple(files[-MAX_FILES:]), variables=tuple(variables[-MAX_VARIABLES:])
        )

    def to_json(self) -> str:
        """The form persisted on the session row."""
        return json.dumps(asdict(self), ensure_ascii=False, sort_keys=True)

    @classmethod
    def from_json(cls, text: str | None) -> SessionState:
        """Parse :meth:`to_json` output; ``None``, empty or unreadable text gives a fresh state."""
        try:
            data = json.loads(text) if text else {}
        except json.JSONDecodeError:
            return cls()
        return _state_from_dict(data) if isinstance(data, dict) else cls()

    def to_yaml(self, *, max_tokens: int = STATE_TOKEN_BUDGET) -> str:
        """The YAML block sent with every request, pruned to about ``max_tokens``."""
        sections = _sections(self)
        text = _dump(sections)
        # Prune the least important, oldest entries first until it fits.
        prunable = (
            "files_touched",
            "variables_gone",
            "variables_recreated",
            "variables",
            "errors_resolved",
            "open_tasks",
            "key_decisions",
        )
        for key in prunable:
            while estimate_tokens(text) > max_tokens and sections.get(key):
                sections[key] = sections[key][1:]
                text = _dump(sections)
        return text


def extract_decisions(text: str) -> list[str]:
    """The sentences of a user message that state a constraint or preference."""
    found: list[str] = []
    for raw in _SENTENCE_END.split(text):
        sentence = " ".join(raw.split())
        if not sentence or sentence.endswith("?") or not _DECISION.search(sentence):
            continue
        found.append(sentence[:DECISION_CHARS])
    return found


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def _norm(text: str) -> str:
    return " ".join(text.lower().split()).rstrip(".!;")


_NESTED: dict[str, type[Any]] = {
    "files": FileTouch,
    "variables": VariableChange,
    "decisions": Decision,
    "errors_resolved": ResolvedError,
    "pending_errors": PendingError,
    "open_tasks": OpenTask,
    "kernel_losses": KernelLoss,
}


def _sections(state: SessionState) -> dict[str, Any]:
    session = {
        "id": state.session_id,
        "notebook": state.notebook,
        "model": state.model,
        "turns": state.turn_count,
        "tokens": {"input": state.input_tokens, "output": state.output_tokens},
        "cost_usd": round(state.cost_usd, 4),
    }
    live, gone = state.live_and_gone()
    recreated = state.recreated_variables()
    loss = state.kernel_losses[-1] if state.kernel_losses else None
    return {
        "session": session,
        "current_focus": state.focus,
        "kernel": _kernel_line(loss, gone=bool(gone), recreated=bool(recreated)) if loss else "",
        "key_decisions": [f"turn {d.turn}: {d.text}" for d in state.decisions],
        "files_touched": [f"{f.path} ({f.action}, turn {f.turn})" for f in state.files],
        "variables": [_variable_line(v) for v in live],
        "variables_gone": [_variable_line(v) for v in gone],
        "variables_recreated": [_variable_line(v) + RECREATED for v in recreated],
        "errors_resolved": [_resolved_line(e) for e in state.errors_resolved],
        "open_tasks": [f"{t.id} [{t.status}]: {t.goal[:100]}" for t in state.open_tasks],
    }


RECREATED = (
    ": re-created in this kernel by code outside the conversation (e.g. a cell run before "
    "Loom loaded); its value may differ, and its record starts there"
)


def _kernel_line(loss: KernelLoss, *, gone: bool = True, recreated: bool = False) -> str:
    what = "died" if loss.cause == "crash" else "restarted"
    head = f"the kernel {what} at {loss.at} (after turn {loss.turn})"
    again = "; some were re-created outside the conversation (variables_recreated)"
    if not gone:
        return head + (
            "; the variables used before exist again, re-created outside the conversation "
            "(variables_recreated)"
            if recreated
            else ""
        )
    return (
        f"{head}; its variables are gone (variables_gone, checked against the namespace now) "
        "until code re-creates them: offer rebuild_variables, which replays only the archived "
        f"executions that made them{again if recreated else ''}"
    )


def _variable_line(v: VariableChange) -> str:
    shape = f" {v.shape}" if v.shape else ""
    return f"{v.name}: {v.type_name}{shape} (turn {v.turn})"


def _resolved_line(e: ResolvedError) -> str:
    return f"{e.tool}: {e.error} (failed turn {e.failed_turn}, fixed turn {e.fixed_turn})"


def _dump(sections: dict[str, Any]) -> str:
    import yaml  # lazily: keeps `import loom_jupyter` light

    present = {k: v for k, v in sections.items() if v or k == "session"}
    body = yaml.safe_dump(present, sort_keys=False, allow_unicode=True, width=200)
    return str(body)


def _state_from_dict(data: dict[str, Any]) -> SessionState:
    known = set(SessionState.__dataclass_fields__)
    values: dict[str, Any] = {}
    for key, value in data.items():
        if key not in known:
            continue
        item_type = _NESTED.get(key)
        if item_type:
            values[key] = tuple(item_type(**item) for item in value)
        else:
            values[key] = tuple(value) if isinstance(value, list) else value
    return SessionState(**values)
