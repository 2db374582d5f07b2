"""The texts the orchestrator sends: the planner's, a subtask's first message, a re-plan."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from loom_jupyter.orchestrator.plan import PlannedSubtask

__all__ = ["PLANNER_SYSTEM", "plan_prompt", "subtask_message"]

PLANNER_SYSTEM = (
    "You plan work for sub-agents inside a Jupyter notebook. Each sub-agent has the notebook's "
    "tools (run Python in the person's live namespace, read and write files in the notebook's "
    "folder) but sees only its own subtask, the results of the subtasks it depends on and the "
    "context below. Split the goal into as few subtasks as do the job well; make subtasks "
    "independent wherever you can, so they run in parallel, and list a dependency only when a "
    "subtask needs another's result. For each, say what counts as done (acceptance) and, when "
    "the result lands in the namespace, give a Python expression that is True once it is done "
    "(for example `'revenue' in df.columns`), else null. Call submit_plan."
)


def plan_prompt(goal: str, context: str, *, max_subtasks: int, errors: Sequence[str] = ()) -> str:
    """The planning request's user message: the goal verbatim, context, and any earlier errors."""
    parts = [f"Goal:\n{goal}", f"Context:\n{context or '(none)'}"]
    parts.append(f"Use at most {max_subtasks} subtasks, with unique ids.")
    if errors:
        listed = "\n".join(f"- {error}" for error in errors)
        parts.append(
            "Your previous plan was invalid:\n" + listed + "\nSubmit a corrected plan that fixes "
            "every problem above."
        )
    return "\n\n".join(parts)


def subtask_message(
    subtask: PlannedSubtask,
    *,
    goal: str,
    context: str,
    results: Mapping[str, str],
    feedback: str | None,
    attempt: int,
) -> str:
    """A sub-agent's first user message: the description verbatim first, then what it needs."""
    parts = [subtask.description, "---", f"This is one subtask of a delegated goal:\n{goal}"]
    if subtask.acceptance:
        parts.append(f"Acceptance criteria:\n{subtask.acceptance}")
    if subtask.check:
        parts.append(
            f"Afterwards this is evaluated in the kernel and must be True: {subtask.check}"
        )
    if results:
        done = "\n".join(f"- {key}: {_short(text)}" for key, text in results.items())
        parts.append(f"Results of the subtasks this one builds on:\n{done}")
    if context:
        parts.append(f"Context from the person's conversation:\n{context}")
    if feedback is not None:
        parts.append(
            f"This is attempt {attempt}. The previous attempt did not pass verification. "
            f"Feedback:\n{feedback}"
        )
    return "\n\n".join(parts)


def _short(text: str, limit: int = 800) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"
