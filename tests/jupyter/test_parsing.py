"""The %cowork line rule, approval answers, notebook path resolution, panel values."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import pytest

from loom_jupyter.engine.events import (
    ApprovalRequest,
    StateChanged,
    ToolStarted,
    TurnStarted,
    UsageEvent,
)
from loom_jupyter.host.services.panel_data import PanelData, per_turn
from loom_jupyter.host.upkeep.location import resolve_notebook
from loom_jupyter.jupyter.cell.approval import format_question, parse_answer
from loom_jupyter.jupyter.magics.cowork import (
    USAGE,
    CommandHelp,
    Prompt,
    SubcommandCall,
    parse_line,
)
from loom_jupyter.jupyter.panel.render import panel_html, panel_text
from loom_jupyter.messages import Usage

if TYPE_CHECKING:
    from pathlib import Path


@pytest.mark.parametrize(
    ("line", "kind", "name"),
    [
        ("", "usage", ""),
        ("--help", "usage", ""),
        ("sessions", "command", "sessions"),
        ("resume 2", "command", "resume"),
        ("fork --at 3", "command", "fork"),
        ("search outliers in sales", "command", "search"),
        ("approval auto", "command", "approval"),
        ("approval of this plan is pending, what next?", "prompt", ""),
        ("new features for df please", "prompt", ""),
        ("status of the model?", "prompt", ""),
        ("what's in df", "prompt", ""),
        ("-- sessions", "prompt", ""),
        ("resume", "command_help", "resume"),
        ("delete --help", "command_help", "delete"),
    ],
)
def test_subcommand_rule(line: str, kind: str, name: str) -> None:
    parsed = parse_line(line)
    named = parsed.name if isinstance(parsed, SubcommandCall | CommandHelp) else ""
    assert (parsed.kind, named) == (kind, name)


def test_forced_prompt_keeps_the_text() -> None:
    assert parse_line("-- sessions are great") == Prompt("sessions are great")
    assert parse_line("what's in df") == Prompt("what's in df")


def test_usage_lists_every_subcommand_and_the_rule() -> None:
    for word in ("sessions", "resume", "fork", "delete", "cost", "approval", "%cowork -- TEXT"):
        assert word in USAGE
    assert "ANTHROPIC_API_KEY" in USAGE


def test_approval_answers() -> None:
    assert [parse_answer(a) for a in ("y", "Yes", "n", "no", "a", "always", "", "maybe")] == [
        "yes",
        "yes",
        "no",
        "no",
        "always",
        "always",
        None,
        None,
    ]
    request = ApprovalRequest(
        "run_python", "x = 1", "", call_id="c1", input={"code": "x = 1\ny = 2"}
    )
    question = format_question(request)
    assert "x = 1\ny = 2" in question
    assert "[y]es / [n]o / [a]lways" in question
    scoped = format_question(replace(request, always="shell commands starting with `git`"))
    assert "(always = shell commands starting with `git`" in scoped
    rail = format_question(replace(request, always=None))  # a guard rail: no "always"
    assert rail.endswith("Allow? [y]es / [n]o: ")


def test_notebook_path_order(tmp_path: Path) -> None:
    env = {"JPY_SESSION_NAME": str(tmp_path / "a.ipynb")}
    assert (
        resolve_notebook({}, explicit="b.ipynb", env=env, cwd=tmp_path).path == tmp_path / "b.ipynb"
    )
    assert resolve_notebook({}, env=env).source == "env"
    ns = {"__session__": str(tmp_path / "c.ipynb")}
    assert resolve_notebook(ns, env={}).path == tmp_path / "c.ipynb"
    terminal = resolve_notebook({}, env={}, cwd=tmp_path)
    assert (terminal.source, terminal.path) == ("terminal", tmp_path.resolve() / "ipython-session")


def test_panel_data_follows_events() -> None:
    data = PanelData().apply(TurnStarted("s1", 1))
    assert data.activity == "thinking"
    data = data.apply(ToolStarted("c1", "run_python", "x = 1"))
    assert data.activity == "running run_python"
    data = data.apply(UsageEvent(Usage(100, 20, 0, 50), 0.002, "m"))
    data = data.apply(StateChanged("s1", "Sales", 3, 100, 20, 0.002, "focus: sales\n"))
    assert (data.title, data.turns, data.input_tokens, data.cache_tokens) == ("Sales", 3, 100, 50)
    assert data.points == ((170, 0.002),)
    data = data.apply(UsageEvent(Usage(10, 5), 0.001, "m"))  # same turn: added to its point
    assert data.points == ((185, 0.003),)
    assert "<svg" in panel_html(data)
    assert "Tokens in/out/cache: 110/25/50" in panel_text(data)
    assert "focus: sales" in panel_text(data)


def test_calls_group_into_turns_by_stop_reason() -> None:
    from loom_jupyter.archive import ModelCallRecord

    def call(n: int, stop: str | None) -> ModelCallRecord:
        return ModelCallRecord(
            id=n,
            session_id="s",
            turn_number=n,
            model="m",
            input_tokens=10,
            output_tokens=0,
            cache_creation_tokens=0,
            cache_read_tokens=0,
            cost_usd=1.0,
            stop_reason=stop,
            latency_ms=1.0,
            error=None,
            created_at="",
        )

    calls = [call(1, "tool_use"), call(2, "end_turn"), call(3, "end_turn"), call(4, "tool_use")]
    assert per_turn(calls) == ((20, 2.0), (10, 1.0), (10, 1.0))
