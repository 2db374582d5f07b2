"""The plan: the pinned ``submit_plan`` tool, parsing its input and validating it by code.

A plan is valid when its ids are unique, every dependency names a subtask of
the plan, the dependencies form no cycle and there are at most
``delegate_max_subtasks`` subtasks. Errors are plain words the planner can act
on (``cycle: a -> b -> a``).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from loom_jupyter.messages import ToolSpec
from loom_jupyter.tools.schema import LenientInput, input_schema

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

__all__ = [
    "SUBMIT_PLAN",
    "Plan",
    "PlanInput",
    "PlannedSubtask",
    "SubtaskInput",
    "parse_plan",
    "plan_errors",
]


@dataclass(frozen=True, kw_only=True)
class SubtaskInput(LenientInput):
    """One subtask as ``submit_plan`` asks for it (every key required)."""

    id: str
    description: str
    depends_on: tuple[str, ...]
    acceptance: str
    check: str | None


@dataclass(frozen=True, kw_only=True)
class PlanInput(LenientInput):
    """``submit_plan``'s input: its schema. :func:`parse_plan` reads it leniently (a subtask
    with an id and a description is enough) and says what it cannot use."""

    subtasks: tuple[SubtaskInput, ...]


SUBMIT_PLAN = ToolSpec(
    name="submit_plan",
    description=(
        "Submit the plan: subtasks a sub-agent can each do on its own, with the ids of the "
        "subtasks each one needs first, what counts as done, and a Python expression that is "
        "True in the notebook's namespace when it is done (or null when none fits)."
    ),
    input_schema=input_schema(PlanInput),
)
"""The pinned plan tool (DESIGN.md §7); the planning request forces it."""


@dataclass(frozen=True, kw_only=True)
class PlannedSubtask:
    """One subtask of a plan, as the planner gave it."""

    id: str
    description: str
    depends_on: tuple[str, ...] = ()
    acceptance: str = ""
    check: str | None = None


@dataclass(frozen=True)
class Plan:
    """The subtasks, in the planner's order."""

    subtasks: tuple[PlannedSubtask, ...]

    def to_json(self) -> str:
        """The plan as stored in ``tasks.plan_json`` (the tool's input shape)."""
        return json.dumps({"subtasks": [_wire(s) for s in self.subtasks]}, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> Plan:
        """The plan stored by :meth:`to_json`."""
        plan, errors = parse_plan(json.loads(text))
        if plan is None:
            raise ValueError("; ".join(errors))
        return plan


def _wire(subtask: PlannedSubtask) -> dict[str, Any]:
    data = asdict(subtask)
    data["depends_on"] = list(subtask.depends_on)
    return data


def parse_plan(data: Mapping[str, Any]) -> tuple[Plan | None, list[str]]:
    """The plan in ``data`` (the tool's input), or ``None`` and what is wrong with its shape."""
    items = data.get("subtasks")
    if not isinstance(items, list) or not items:
        return None, ["the plan has no subtasks: give at least one"]
    subtasks, errors = [], []
    for index, item in enumerate(items, 1):
        subtask = _subtask(item)
        if subtask is None:
            errors.append(f"subtask {index} needs a string id and description")
        else:
            subtasks.append(subtask)
    return (None, errors) if errors else (Plan(tuple(subtasks)), [])


def _subtask(item: object) -> PlannedSubtask | None:
    if not isinstance(item, dict):
        return None
    sid, description = item.get("id"), item.get("description")
    if not isinstance(sid, str) or not sid.strip() or not isinstance(description, str):
        return None
    depends = item.get("depends_on") or []
    check = item.get("check")
    return PlannedSubtask(
        id=sid.strip(),
        description=description,
        depends_on=tuple(str(d).strip() for d in depends) if isinstance(depends, list) else (),
        acceptance=str(item.get("acceptance") or ""),
        check=check.strip() if isinstance(check, str) and check.strip() else None,
    )


def plan_errors(plan: Plan, *, max_subtasks: int) -> list[str]:
    """Everything that makes ``plan`` invalid, in plain words; empty when it is valid."""
    ids = [s.id for s in plan.subtasks]
    errors = [f"duplicate id: {i}" for i in sorted({i for i in ids if ids.count(i) > 1})]
    if len(ids) > max_subtasks:
        errors.append(f"too many subtasks: {len(ids)} (at most {max_subtasks})")
    known = set(ids)
    for subtask in plan.subtasks:
        errors.extend(
            f"unknown dependency: {subtask.id} depends on {dep}, which is not in the plan"
            for dep in subtask.depends_on
            if dep not in known
        )
    cycle = find_cycle({s.id: [d for d in s.depends_on if d in known] for s in plan.subtasks})
    if cycle:
        errors.append("cycle: " + " -> ".join(cycle))
    return errors


def find_cycle(graph: Mapping[str, Sequence[str]]) -> list[str]:
    """One dependency cycle as a path that returns to its start (``[a, b, a]``), or ``[]``."""
    state: dict[str, int] = {}  # 1: on the current path, 2: finished
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for dep in graph.get(node, ()):
            if state.get(dep) == 1:
                return [*path[path.index(dep) :], dep]
            if dep not in state and (found := visit(dep)):
                return found
        state[node] = 2
        path.pop()
        return []

    for node in graph:
        if node not in state and (found := visit(node)):
            return found
    return []
