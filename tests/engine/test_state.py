"""SessionState: mechanical extraction, pruning to the token budget, JSON round trip."""

from __future__ import annotations

import yaml

from loom_jupyter.engine.state import SessionState, extract_decisions
from loom_jupyter.models.estimate import estimate_tokens
from loom_jupyter.tools.base import FileEffect, VariableEffect


def test_decisions_are_the_users_explicit_constraints() -> None:
    message = (
        "Load sales.csv. Always use polars, never pandas! Could you check the nulls? "
        "Don't touch the raw folder; prefer seaborn for plots.\nUse UTC timestamps."
    )
    assert extract_decisions(message) == [
        "Always use polars, never pandas!",
        "Don't touch the raw folder;",
        "prefer seaborn for plots.",
        "Use UTC timestamps.",
    ]
    assert extract_decisions("Should we always use polars?") == []  # a question decides nothing
    assert extract_decisions("Plot the sales by region.") == []


def test_focus_decisions_files_variables_and_resolved_errors() -> None:
    state = SessionState(session_id="s1", notebook="nb.ipynb", model="m")
    state = state.with_user_message(3, "Always use polars, never pandas.\nThen load data.")
    state = state.with_tool_result(
        4, "read_file", is_error=False, effects=[FileEffect("a.csv", "read")]
    )
    state = state.with_tool_result(5, "run_python", is_error=True, text="NameError: name 'pl'")
    state = state.with_tool_result(
        6, "run_python", is_error=False, effects=[VariableEffect("df", "DataFrame", "(10, 3)")]
    )
    state = state.with_user_message(7, "Now plot revenue by month")
    state = state.with_tool_result(
        8, "run_python", is_error=False, effects=[VariableEffect("df", "DataFrame", "(12, 3)")]
    )
    assert state.focus == "Now plot revenue by month"
    assert [(d.text, d.turn) for d in state.decisions] == [("Always use polars, never pandas.", 3)]
    assert [(f.path, f.action, f.turn) for f in state.files] == [("a.csv", "read", 4)]
    assert [(v.name, v.shape, v.turn) for v in state.variables] == [("df", "(12, 3)", 8)]
    resolved = state.errors_resolved
    assert [(e.tool, e.failed_turn, e.fixed_turn) for e in resolved] == [("run_python", 5, 6)]
    assert "NameError" in resolved[0].error

    rendered = yaml.safe_load(state.to_yaml())
    assert rendered["current_focus"] == "Now plot revenue by month"
    assert rendered["key_decisions"] == ["turn 3: Always use polars, never pandas."]
    assert rendered["session"]["id"] == "s1"
    assert SessionState.from_json(state.to_json()) == state


def test_lists_keep_only_the_latest_entries() -> None:
    state = SessionState()
    for turn in range(1, 41):
        state = state.with_user_message(turn, f"Never call column_{turn} a feature.")
        effects = [FileEffect(f"f{turn}.csv", "write"), VariableEffect(f"v{turn}", "int")]
        state = state.with_tool_result(turn, "run_python", is_error=turn % 2 == 0, effects=effects)
    assert len(state.decisions) == 10
    assert state.decisions[-1].turn == 40
    assert len(state.files) == 20
    assert state.files[0].path == "f21.csv"
    assert len(state.variables) == 20
    assert len(state.errors_resolved) == 5


def test_a_restated_decision_moves_to_its_latest_turn() -> None:
    state = SessionState().with_user_message(2, "Always use polars.")
    state = state.with_user_message(9, "always use polars")
    assert [(d.text, d.turn) for d in state.decisions] == [("always use polars", 9)]


def test_the_yaml_is_pruned_to_the_token_budget_keeping_decisions() -> None:
    state = SessionState(session_id="s", notebook="/very/long/path/" * 5 + "nb.ipynb")
    for turn in range(1, 60):
        long_path = f"data/{'nested/' * 10}file_{turn}.parquet"
        state = state.with_tool_result(
            turn, "read_file", is_error=False, effects=[FileEffect(long_path, "read")]
        )
        state = state.with_tool_result(
            turn,
            "run_python",
            is_error=False,
            effects=[VariableEffect(f"frame_{turn}", "DataFrame", "(100000, 250)")],
        )
    state = state.with_user_message(
        60, "Never drop rows with missing prices. Always keep raw data untouched."
    )
    text = state.to_yaml(max_tokens=400)
    assert estimate_tokens(text) <= 400
    assert "Never drop rows with missing prices." in text
    full = state.to_yaml()
    assert estimate_tokens(full) <= 1_000


def test_unreadable_json_gives_a_fresh_state() -> None:
    assert SessionState.from_json("{not json") == SessionState()
    assert SessionState.from_json(None) == SessionState()


def test_a_lost_variable_the_namespace_has_again_is_recreated_not_gone() -> None:
    """Issue 30: gone means absent from the namespace when last read."""
    state = SessionState(kernel_session="k1")
    state = state.with_variables(2, [VariableEffect("prices", "list", "len 3")])
    state = state.with_variables(3, [VariableEffect("weights", "list", "len 3")])
    state = state.in_kernel("k2", last_turn=4, at="now")  # a restart
    assert state.lost_names() == ["prices", "weights"]
    again = state.with_present(["prices", "unrelated"])
    assert again.recreated == ("prices",)
    assert [v.name for v in again.live_and_gone()[1]] == ["weights"]
    assert [v.name for v in again.recreated_variables()] == ["prices"]
    rendered = yaml.safe_load(again.to_yaml())
    assert rendered["variables_gone"] == ["weights: list len 3 (turn 3)"]
    assert rendered["variables_recreated"][0].startswith("prices: list len 3 (turn 2): re-created")
    assert "offer rebuild_variables" in rendered["kernel"]
    assert again.with_present(["prices"]) is again  # unchanged: the same state (cached text)
    assert SessionState.from_json(again.to_json()) == again

    both = state.with_present(["prices", "weights"])
    kernel = yaml.safe_load(both.to_yaml())["kernel"]
    assert "variables_gone" not in yaml.safe_load(both.to_yaml())
    assert "rebuild_variables" not in kernel
    assert "re-created outside the conversation" in kernel
    assert both.in_kernel("k3", last_turn=5, at="later").recreated == ()  # another restart
