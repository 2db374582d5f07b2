"""Typos never reach the model (issue 40.1), on a real in-process IPython shell against the
fake Messages API: the newcomer's lines (``%cowork sesions``, ``%cowork resme 1``,
``%cowork approval yolo``, ``%delegate stauts``) send nothing; the ways to send such a
line anyway (``%cowork -- …``, ``%%cowork``) and real prompts still go through."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from collections.abc import Callable

    from IPython.core.interactiveshell import InteractiveShell

    from loom_jupyter.testing import FakeAnthropic

pytest_plugins = ["loom_jupyter.testing.pytest_plugin"]


@pytest.mark.parametrize(
    ("line", "answer"),
    [
        ("sesions", "Did you mean `%cowork sessions`?"),
        ("resme 1", "Did you mean `%cowork resume 1`?"),
        ("aproval auto", "Did you mean `%cowork approval auto`?"),
        ("approval yolo", "`%cowork approval` takes ask, auto or read-only (got `yolo`)."),
        ("fork --at two", "`%cowork fork --at` takes a whole number (got `two`)."),
    ],
)
def test_a_typo_or_a_bad_value_sends_nothing(
    cowork: Callable[[str], str], fake_anthropic: FakeAnthropic, line: str, answer: str
) -> None:
    shown = cowork(line)
    assert answer in shown
    assert "Nothing was sent to the model." in shown
    assert f"`%cowork -- {line}`, or a `%%cowork` cell" in shown
    assert fake_anthropic.requests == []


def test_the_way_round_sends_the_line_as_a_prompt(
    cowork: Callable[[str], str], shell: InteractiveShell, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.add("About sesions: a prompt after all.", "Stats by region: here.")
    assert "a prompt after all" in cowork("-- sesions")
    assert "Stats by region" in cowork("stats for df by region")  # does not fit `status`
    sent = [r.body["messages"][-1]["content"] for r in fake_anthropic.message_requests if r.body]
    assert "sesions" in str(sent[0])
    assert "stats for df by region" in str(sent[1])
    fake_anthropic.add("Yolo noted.")
    shell.run_cell_magic("cowork", "", "approval yolo")
    assert "approval yolo" in str(fake_anthropic.message_requests[-1].body)


def test_delegate_typo_plans_nothing(
    cowork: Callable[[str], str],
    shell: InteractiveShell,
    fake_anthropic: FakeAnthropic,
    capsys: pytest.CaptureFixture[str],
) -> None:
    shell.run_line_magic("delegate", "stauts")
    shown = capsys.readouterr().out
    assert "Did you mean `%delegate status`? Nothing was delegated." in shown
    assert "`%delegate -- stauts`" in shown
    shell.run_line_magic("delegate", "status")
    assert "No delegated tasks in this session yet" in capsys.readouterr().out
    assert fake_anthropic.requests == []


# -- %cowork model ID against the Models API -------------------------------------------------


def test_an_unknown_model_is_refused_naming_the_listed_ones(
    cowork: Callable[[str], str], fake_anthropic: FakeAnthropic
) -> None:
    refused = cowork("model gpt-4o")
    assert "Unknown model `gpt-4o`" in refused
    for listed in ("claude-opus-5-5", "claude-sonnet-5-5", "claude-haiku-5-5"):
        assert listed in refused
    assert "The model stays `claude-sonnet-5-5`" in refused
    assert "Model: claude-opus-5-5 (from the next request)." in cowork("model claude-opus-5-5")
    assert "Model: claude-haiku-5-5" in cowork("model haiku")  # an alias
    gets = [r for r in fake_anthropic.requests if r.path.startswith("/v1/models")]
    assert len(gets) == 1  # the list is cached: asked once for the three
    assert fake_anthropic.message_requests == []


def test_a_model_newer_than_the_cached_list_is_asked_for_again(
    cowork: Callable[[str], str], fake_anthropic: FakeAnthropic
) -> None:
    cowork("model")  # the list is cached now
    fake_anthropic.set_models([{"id": "claude-fable-6", "display_name": "Claude Fable 6"}])
    assert "Model: claude-fable-6 (from the next request)." in cowork("model claude-fable-6")
    assert sum(r.path.startswith("/v1/models") for r in fake_anthropic.requests) == 2


def test_offline_a_model_is_taken_with_a_warning(
    cowork: Callable[[str], str], fake_anthropic: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")  # nothing listens there
    monkeypatch.setenv("LOOM_MAX_RETRIES", "0")
    taken = cowork("model gpt-4o")
    assert "Model: gpt-4o (from the next request)." in taken
    assert "Not checked: the Models API could not be asked" in taken
    assert "the next request will say so" in taken
    assert fake_anthropic.requests == []
