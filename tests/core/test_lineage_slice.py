"""lineage.plan_rebuild: the smallest ordered slice of archived executions (issue 21)."""

from __future__ import annotations

from loom_jupyter.lineage import ExecutionRecord, analyze, plan_rebuild


def history(*cells: str, durations: float = 1.0) -> list[ExecutionRecord]:
    records = []
    for n, code in enumerate(cells, start=1):
        facts = analyze(code)
        records.append(
            ExecutionRecord(
                id=n,
                source="cell",
                code=code,
                reads=facts.reads,
                sets=facts.sets,
                mutates=facts.mutates,
                effects=facts.effects,
                duration_s=durations,
                execution_count=n,
            )
        )
    return records


def codes(records: tuple[ExecutionRecord, ...]) -> list[str]:
    return [r.code for r in records]


def test_only_the_chain_a_name_needs_is_run_in_archive_order() -> None:
    records = history(
        "a = 1",
        "unrelated = 99",
        "b = a + 1",
        "plot = unrelated * 2",
        "c = b * 10",
    )
    plan = plan_rebuild(records, ["c"])
    assert codes(plan.steps) == ["a = 1", "b = a + 1", "c = b * 10"]
    assert plan.missing == {}
    assert plan.estimated_s == 3.0


def test_the_latest_setter_wins_and_names_still_present_are_not_rebuilt() -> None:
    records = history("a = 1", "a = 2", "b = a + 1")
    assert codes(plan_rebuild(records, ["b"]).steps) == ["a = 2", "b = a + 1"]
    assert codes(plan_rebuild(records, ["b"], present=["a"]).steps) == ["b = a + 1"]


def test_a_setter_reads_the_value_from_before_it_ran() -> None:
    records = history("x = 1", "x = x + 1", "x = 100", "y = x")
    assert codes(plan_rebuild(records, ["y"]).steps) == ["x = 100", "y = x"]
    chain = history("x = 1", "x = x + 1", "y = x")
    assert codes(plan_rebuild(chain, ["y"]).steps) == ["x = 1", "x = x + 1", "y = x"]


def test_in_place_changes_after_the_binding_are_replayed() -> None:
    records = history(
        "lst = []",
        "lst.append(1)",
        "other = 5",
        "df = make()",
        "df.drop(columns=['a'], inplace=True)",
        "lst.append(other)",
    )
    plan = plan_rebuild(records, ["lst"])
    assert codes(plan.steps) == ["lst = []", "lst.append(1)", "other = 5", "lst.append(other)"]
    assert "make" in plan_rebuild(records, ["df"]).unresolved


def test_names_it_cannot_rebuild_come_with_a_reason() -> None:
    records = history("a = 1", "b = 1/0")
    failing = [
        records[0],
        ExecutionRecord(
            id=2, source="cell", code="b = 1/0", sets=("b",), error="ZeroDivisionError"
        ),
    ]
    plan = plan_rebuild(failing, ["b", "nope", "a"])
    assert plan.missing == {
        "b": "only executions that raised set it",
        "nope": "no archived execution sets it",
    }
    assert codes(plan.steps) == ["a = 1"]


def test_side_effect_steps_are_listed_for_consent() -> None:
    records = history(
        "import pandas as pd", "df = pd.DataFrame()", "df.to_csv('out.csv')", "n = len(df)"
    )
    plan = plan_rebuild(records, ["n"])
    assert codes(plan.steps) == ["import pandas as pd", "df = pd.DataFrame()", "n = len(df)"]
    assert plan.consent_steps == ()
    wrote = history("import os", "path = 'x'", "open(path, 'w').write('1'); flag = True")
    assert codes(plan_rebuild(wrote, ["flag"]).consent_steps) == [
        "open(path, 'w').write('1'); flag = True"
    ]


def test_functions_bring_their_definitions_and_globals() -> None:
    records = history("scale = 3", "def f(v):\n    return v * scale", "noise = 1", "out = f(2)")
    assert codes(plan_rebuild(records, ["out"]).steps) == [
        "scale = 3",
        "def f(v):\n    return v * scale",
        "out = f(2)",
    ]


def test_a_long_history_slices_quickly_and_without_recursion_limits() -> None:
    cells = ["v0 = 0", *[f"v{n} = v{n - 1} + 1" for n in range(1, 3000)]]
    plan = plan_rebuild(history(*cells), ["v2999"])
    assert len(plan.steps) == 3000


def test_trace_names_the_last_change_and_the_chain_before_it() -> None:
    from dataclasses import replace

    from loom_jupyter.lineage import trace

    records = history("import json", "rows = []", "other = 1", "rows.append(json.dumps({}))")
    origin = trace(records, "rows")
    assert origin.setter is not None
    assert origin.setter.code == "rows.append(json.dumps({}))"  # an in-place change counts
    assert codes(origin.depends_on) == ["import json", "rows = []"]
    assert origin.why == ""
    failed = [*records, replace(history("late = 1 / 0")[0], id=9, error="ZeroDivisionError")]
    assert trace(failed, "late").why == "only executions that raised set it"
    assert trace(records, "nowhere").setter is None
    assert trace(records, "nowhere").why == "no archived execution sets it"
