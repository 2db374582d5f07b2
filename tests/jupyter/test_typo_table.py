"""The typo table (issue 40.1), generated from the command registry, at the parser level.

For every command of every front — ``%cowork``, ``%delegate``, the sidebar's ``/`` and
the terminal — every near miss of its name (each one-letter deletion, each swap of two
neighbouring letters, each one-letter substitution) followed by valid arguments is
answered "did you mean" that command, so nothing goes to the model; and natural prompts
that start with words near a command's name stay prompts. Pure: no shell, no kernel, no
API (``test_typos_in_shell.py`` and ``tests/kernel/test_typos_kernel.py`` take the same
lines through real fronts).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from loom_jupyter.cli import main as cli_main
from loom_jupyter.host.commands.registry import COMMANDS, commands_for
from loom_jupyter.host.commands.slash import mistyped
from loom_jupyter.host.commands.spec import Front, Spec, arguments
from loom_jupyter.jupyter.magics.cowork import Misspelled, Prompt, parse_line
from loom_jupyter.jupyter.magics.delegate import SUBCOMMANDS as DELEGATE_SUBCOMMANDS
from loom_jupyter.jupyter.magics.delegate import misspelled_line

if TYPE_CHECKING:
    from collections.abc import Iterator


NAMES = {spec.name for spec in COMMANDS} | set(DELEGATE_SUBCOMMANDS) | {"mcp"}


def near_misses(name: str) -> Iterator[str]:
    """Each one-letter deletion, neighbour swap and substitution of ``name`` that is not
    itself a command's name."""
    seen = {name}
    for i in range(len(name)):
        substitute = "x" if name[i] != "x" else "q"
        swapped = name[:i] + name[i + 1 : i + 2] + name[i] + name[i + 2 :]
        for miss in (name[:i] + name[i + 1 :], swapped, name[:i] + substitute + name[i + 1 :]):
            if miss and miss not in seen and miss not in NAMES:
                seen.add(miss)
                yield miss


def sample_words(spec: Spec[Any], front: Front) -> list[str]:
    """Valid words for every positional argument ``front`` offers."""
    words = []
    for a in arguments(spec.args):
        if not a.offered(front) or not a.positional:
            continue
        if a.choices is not None:
            words.append(a.choices[-1])
        elif a.kind == "rest":
            words.append("outliers by region")
        else:
            words.append("3" if a.kind == "int" else "df")
    return words


def table(front: Front) -> list[tuple[str, str]]:
    """(command, rest of the line) for every command ``front`` offers."""
    return [(spec.name, " ".join(sample_words(spec, front))) for spec in commands_for(front)]


# -- every near miss of every command: "did you mean", nothing sent -----------------------


@pytest.mark.parametrize(("name", "rest"), table("magic"))
def test_cowork_near_misses_are_answered(name: str, rest: str) -> None:
    for miss in near_misses(name):
        line = f"{miss} {rest}".strip()
        parsed = parse_line(line)
        assert isinstance(parsed, Misspelled), (line, parsed)
        assert parsed.name == name, line
        meant = f"%cowork {name} {rest}".strip()
        assert parsed.text.startswith(f"Did you mean `{meant}`? Nothing was sent"), parsed.text
        assert f"`%cowork -- {line}`" in parsed.text  # how to send it as a prompt after all


@pytest.mark.parametrize(("name", "rest"), table("sidebar"))
def test_sidebar_near_misses_are_answered(name: str, rest: str) -> None:
    for miss in near_misses(name):
        text = f"/{miss} {rest}".strip()
        answer = mistyped(text)
        meant = f"/{name} {rest}".strip()
        assert answer is not None, text
        assert answer.startswith(f"Did you mean `{meant}`? Nothing was sent"), answer


@pytest.mark.parametrize(("name", "rest"), table("cli"))
def test_terminal_near_misses_are_answered(
    name: str, rest: str, capsys: pytest.CaptureFixture[str]
) -> None:
    for miss in near_misses(name):
        assert cli_main([miss, "nb.ipynb", *rest.split()]) == 2
        meant = f"loom-jupyter {name} nb.ipynb {rest}".strip()
        err = capsys.readouterr().err
        assert f"no command `{miss}`. Did you mean `{meant}`?" in err, err


@pytest.mark.parametrize(("name", "rest"), [("status", ""), ("resume", "3f9a"), ("cancel", "")])
def test_delegate_near_misses_are_answered(name: str, rest: str) -> None:
    for miss in near_misses(name):
        line = f"{miss} {rest}".strip()
        answer = misspelled_line(line)
        assert answer is not None, line
        meant = f"%delegate {name} {rest}".strip()
        assert answer.startswith(f"Did you mean `{meant}`? Nothing was delegated"), answer
        assert f"`%delegate -- {line}`" in answer


def test_the_table_covers_every_command_of_every_front() -> None:
    for front in ("magic", "sidebar", "cli"):
        assert {n for n, _ in table(front)} == {s.name for s in COMMANDS if front in s.fronts}
    assert all(any(near_misses(spec.name)) for spec in COMMANDS)


# -- a slip with words that do not fit, and real prompts, stay prompts ---------------------

PROMPTS = [
    "stats for df by region",
    "model the sales trend",
    "new idea: bin the ages by decade",
    "status of the model?",
    "approval of this plan is pending, what next?",
    "costs by month, please",
    "close the figure and plot again",
    "export df to parquet",
    "effect sizes for each treatment",
    "import sales.csv as df",
    "research the churn data",
    "session summary please",
    "resumes of the candidates in df",
    "models for churn",
    "thinking about outliers",
    "forks and knives in the inventory",
    "delete the outliers",
    "trusty old regression, or a forest?",
    "searching for outliers in df",
    "rebuilding df from scratch",
    "mcp servers, what are they?",
    "logging setup for the pipeline",
    "adapt the plot to a log scale",
    "statistics by region",
    "help me plot df",
    "delegate the cleanup to someone",
    "what's in df",
]


@pytest.mark.parametrize("line", PROMPTS)
def test_real_prompts_go_to_the_model(line: str) -> None:
    assert parse_line(line) == Prompt(line)


@pytest.mark.parametrize(
    "line",
    [
        "status report for Q3 by region",
        "stats for each store, with a chart",
        "resumes of the candidates, ranked",
        "cancellation rates by month",
        "canceled orders: find the pattern",
        "statue sales by city",
    ],
)
def test_real_goals_are_delegated(line: str) -> None:
    assert misspelled_line(line) is None


@pytest.mark.parametrize(
    "text",
    [
        "stats for df by region",
        "/home/me/data.csv is empty, why?",
        "/cots of each region and why",
        "/sesions of the conference, summarised",
        "/approval of the plan",
    ],
)
def test_sidebar_messages_that_do_not_fit_go_to_the_model(text: str) -> None:
    assert mistyped(text) is None


def test_a_slip_in_other_letters_case_and_a_command_of_another_front() -> None:
    assert isinstance(parse_line("Sessions"), Misspelled)
    assert parse_line("delegate cleanup") == Prompt("delegate cleanup")  # not `delete`
    assert parse_line("-- sesions") == Prompt("sesions")  # the way to send it anyway
