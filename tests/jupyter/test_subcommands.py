"""%cowork and its subcommands on a real in-process IPython shell, against the fake Messages API."""

from __future__ import annotations

import base64
import json
import sys
from typing import TYPE_CHECKING

import pytest

from loom_jupyter.jupyter.magics.cost import cost_plot_png

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from IPython.core.interactiveshell import InteractiveShell

    from loom_jupyter.testing import FakeAnthropic

pytest_plugins = ["loom_jupyter.testing.pytest_plugin"]


@pytest.fixture
def notebook(tmp_path: Path) -> Path:
    return tmp_path / "analysis.ipynb"


@pytest.fixture
def cowork_notebook(notebook: Path) -> Path:
    return notebook


def _last_request(fake: FakeAnthropic) -> str:
    return json.dumps(fake.message_requests[-1].body)


def test_no_text_prints_usage_and_each_subcommand_has_help(cowork: Callable[[str], str]) -> None:
    usage = cowork("")
    assert "%cowork TEXT" in usage
    assert "%cowork -- TEXT" in usage
    help_text = cowork("fork --help")
    assert "%cowork fork" in help_text
    assert "--at N" in help_text
    assert "needs an argument" in cowork("resume")


def test_a_prompt_streams_and_sessions_lists_it(
    cowork: Callable[[str], str], fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.add("Hello from the **fake**.")
    answer = cowork("hello there")
    assert "Hello from the fake." in answer  # Markdown printed readably
    table = cowork("sessions")
    assert "1 *" in table
    assert "hello there" in table
    assert "active" in table
    assert len(fake_anthropic.message_requests) == 1


def test_forced_prompt_is_not_a_subcommand(
    cowork: Callable[[str], str], fake_anthropic: FakeAnthropic
) -> None:
    cowork("-- sessions are useful")
    assert "sessions are useful" in _last_request(fake_anthropic)


def test_a_question_mark_is_part_of_the_prompt(
    cowork: Callable[[str], str],
    shell: InteractiveShell,
    fake_anthropic: FakeAnthropic,
    capsys: pytest.CaptureFixture[str],
) -> None:
    fake_anthropic.add("It is sorted.")
    shell.run_cell("%cowork is df sorted?")
    assert "It is sorted." in capsys.readouterr().out
    assert "is df sorted?" in _last_request(fake_anthropic)


def test_new_then_resume_by_number_carries_the_old_turns(
    cowork: Callable[[str], str], fake_anthropic: FakeAnthropic
) -> None:
    cowork("the code word is MANGO")
    assert "New session" in cowork("new")
    cowork("something else")
    table = cowork("sessions")
    assert table.index("something else") < table.index("the code word is MANGO")
    assert "Resumed “the code word is MANGO” (1 prompt; 2 archive rows)" in cowork("resume 2")
    cowork("what was the code word?")
    assert "the code word is MANGO" in _last_request(fake_anthropic)
    assert "something else" not in _last_request(fake_anthropic)


def test_fork_close_and_delete(
    cowork: Callable[[str], str], monkeypatch: pytest.MonkeyPatch
) -> None:
    cowork("first")
    cowork("second")
    assert "new session with 2 turns" in cowork("fork --at 2")
    assert "Session closed" in cowork("close")
    table = cowork("sessions")
    assert "closed" in table
    refused = cowork("delete 1")  # pytest's stdin cannot be read: no confirmation, no delete
    assert "Pass --yes" in refused
    assert "Deleted session" in cowork("delete 1 --yes")
    assert cowork("sessions").count("first") == 1


def test_search_export_cost_status(
    cowork: Callable[[str], str], notebook: Path, tmp_path: Path
) -> None:
    cowork("tell me about pineapples")
    hits = cowork("search pineapples")
    assert hits.startswith("1 match(es) for 'pineapples' in this session")
    assert "after: turn 2 assistant" in hits  # the answer is context, not a hit
    cowork("new")
    assert "no turns yet" in cowork("search pineapples")
    assert "pineapples" in cowork("search pineapples --all")
    (notebook.parent / ".git").mkdir()
    other = cowork("search pineapples --all-notebooks")
    assert "in 1 notebook archive(s) under" in other
    assert "1. analysis.ipynb · session" in other
    cowork("resume 1")
    target = tmp_path / "journal.md"
    assert "Exported 2 turns" in cowork(f"export {target}")
    journal = target.read_text()
    assert journal.startswith("# tell me about pineapples")
    assert "## 1. User" in journal
    costs = cowork("cost")
    assert "total" in costs
    assert "end_turn" in costs
    assert "Prompt cache: the conversation is kept for an hour (no pause between turns" in costs
    status = cowork("status")
    assert "Session: tell me about pineapples" in status
    assert "Prompts: 1 (2 archive rows)" in status


def test_model_and_approval_switches(
    cowork: Callable[[str], str], fake_anthropic: FakeAnthropic
) -> None:
    assert "claude-haiku-5-5" in cowork("model haiku")
    cowork("hi")
    assert fake_anthropic.message_requests[-1].body["model"] == "claude-haiku-5-5"
    assert "Approval policy: ask" in cowork("approval ask")
    fake_anthropic.add(
        {"content": [{"type": "tool_use", "name": "run_python", "input": {"code": "z = 3"}}]},
        "Fine, skipped.",
    )
    out = cowork("set z")  # input() cannot read pytest's stdin: denied, turn goes on
    assert "LOOM_APPROVAL=auto" in out
    assert "Fine, skipped." in out


def test_agent_code_runs_in_the_shell_namespace(
    cowork: Callable[[str], str], fake_anthropic: FakeAnthropic, shell: InteractiveShell
) -> None:
    fake_anthropic.add(
        {
            "content": [
                {"type": "tool_use", "name": "run_python", "input": {"code": "x = 41 + 1\nx"}}
            ]
        },
        "x is 42.",
    )
    out = cowork("set x")
    assert "run_python" in out
    assert shell.user_ns["x"] == 42
    assert "42" in _last_request(fake_anthropic)


def test_missing_key_is_named(
    cowork: Callable[[str], str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    assert "ANTHROPIC_API_KEY" in cowork("hello")


def test_cost_plot_is_a_png() -> None:
    from loom_jupyter.archive import ModelCallRecord

    calls = [
        ModelCallRecord(
            id=n,
            session_id="s",
            turn_number=n,
            model="m",
            input_tokens=100 * n,
            output_tokens=10,
            cache_creation_tokens=0,
            cache_read_tokens=0,
            cost_usd=0.001 * n,
            stop_reason="end_turn",
            latency_ms=5.0,
            error=None,
            created_at="",
        )
        for n in (1, 2, 3)
    ]
    assert base64.b64decode(cost_plot_png(calls)).startswith(b"\x89PNG")


def test_notebook_option_switches_archives(
    cowork: Callable[[str], str], tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    other = tmp_path / "sub" / "other.ipynb"
    other.parent.mkdir()
    banner = cowork(f"--notebook {other}")
    assert "loom: other.ipynb — new session" in banner
    fake_anthropic.add("Noted.")
    cowork("a prompt for the other notebook")
    assert (other.parent / ".loom" / "other.ipynb.sqlite").exists()


def test_plain_terminal_uses_an_archive_in_the_working_directory(
    shell: InteractiveShell,
    fake_anthropic: FakeAnthropic,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.chdir(tmp_path)
    shell.run_line_magic("load_ext", "loom_jupyter")
    try:
        banner = capsys.readouterr().out
        assert "loom: ipython-session (terminal; archive" in banner
        assert (tmp_path / ".loom" / "ipython-session.sqlite").exists()
    finally:
        shell.run_line_magic("unload_ext", "loom_jupyter")


def test_after_unload_the_magic_says_to_load_again(
    cowork: Callable[[str], str], shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    shell.run_line_magic("unload_ext", "loom_jupyter")
    shell.run_line_magic("cowork", "sessions")
    assert "run %load_ext loom_jupyter" in capsys.readouterr().out
    shell.run_line_magic("load_ext", "loom_jupyter")  # the fixture unloads at the end


def test_cell_magic_sends_the_whole_cell(
    cowork: Callable[[str], str],
    shell: InteractiveShell,
    fake_anthropic: FakeAnthropic,
    capsys: pytest.CaptureFixture[str],
) -> None:
    fake_anthropic.add("Two lines received.")
    shell.run_cell("%%cowork\nfirst line?\nsecond line")
    assert "Two lines received." in capsys.readouterr().out
    assert "first line?\\nsecond line" in _last_request(fake_anthropic)


def test_cost_without_matplotlib_says_how_to_get_the_plot(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from loom_jupyter.jupyter.magics.cost import NO_MATPLOTLIB, show_plot

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if it were not installed
    show_plot([])
    assert NO_MATPLOTLIB in capsys.readouterr().out
    assert "pip install matplotlib" in NO_MATPLOTLIB
