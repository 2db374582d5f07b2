"""Plans are validated by code: unique ids, known dependencies, no cycle, a size cap."""

from __future__ import annotations

from loom_jupyter.orchestrator.plan import Plan, PlannedSubtask, find_cycle, parse_plan, plan_errors


def _plan(*items: tuple[str, tuple[str, ...]]) -> Plan:
    return Plan(tuple(PlannedSubtask(id=i, description=i, depends_on=d) for i, d in items))


def test_a_valid_plan_has_no_errors_and_round_trips_through_json() -> None:
    plan = _plan(("load", ()), ("clean", ("load",)), ("plot", ("clean",)))
    assert plan_errors(plan, max_subtasks=8) == []
    assert Plan.from_json(plan.to_json()) == plan


def test_errors_are_plain_words() -> None:
    plan = _plan(("a", ("b",)), ("b", ("a",)), ("d", ()), ("c", ("zz",)))
    errors = plan_errors(plan, max_subtasks=3)
    assert plan_errors(_plan(("a", ()), ("a", ())), max_subtasks=3) == ["duplicate id: a"]
    assert "too many subtasks: 4 (at most 3)" in errors
    assert "unknown dependency: c depends on zz, which is not in the plan" in errors
    assert "cycle: a -> b -> a" in errors


def test_find_cycle_returns_a_closed_path() -> None:
    assert find_cycle({"a": ["b"], "b": ["c"], "c": ["a"]}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": ["a"]}) == ["a", "a"]
    assert find_cycle({"a": [], "b": ["a"], "c": ["a", "b"]}) == []


def test_parse_plan_rejects_shapes_it_cannot_use() -> None:
    assert parse_plan({"subtasks": []}) == (None, ["the plan has no subtasks: give at least one"])
    plan, errors = parse_plan({"subtasks": [{"id": "x"}, {"id": "y", "description": "d"}]})
    assert plan is None
    assert errors == ["subtask 1 needs a string id and description"]
    plan, errors = parse_plan(
        {"subtasks": [{"id": " y ", "description": "d", "depends_on": None, "check": "  "}]}
    )
    assert errors == []
    assert plan is not None
    assert plan.subtasks[0] == PlannedSubtask(id="y", description="d")
