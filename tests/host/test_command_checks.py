"""Checks before anything is sent (issue 40.1): the near-miss rule, and a real command's
words read as fitting, of another shape, or with a value it does not take — for every
argument of the registry that has choices or takes a number. Pure."""

from __future__ import annotations

from typing import Any

import pytest

from loom_jupyter.host.commands.checking import BadValue, Fits, Misfit, read
from loom_jupyter.host.commands.nearby import distance, near, reach
from loom_jupyter.host.commands.registry import COMMANDS, command
from loom_jupyter.host.commands.spec import Argument, Front, Spec, arguments, spelled
from loom_jupyter.models.catalog import ModelInfo, ModelList

KERNEL_FRONTS: tuple[Front, ...] = ("magic", "sidebar")


@pytest.mark.parametrize(
    ("a", "b", "edits"),
    [
        ("sessions", "sessions", 0),
        ("sesions", "sessions", 1),  # a deletion
        ("stauts", "status", 1),  # a swap of neighbours
        ("resme", "resume", 1),
        ("cots", "cost", 1),
        ("sesion", "sessions", 2),
        ("", "new", 3),
    ],
)
def test_distance_counts_each_slip_once(a: str, b: str, edits: int) -> None:
    assert distance(a, b) == edits
    assert distance(b, a) == edits


def test_the_one_rule() -> None:
    assert (reach("cost"), reach("sessions"), reach("search", free_text=True)) == (1, 2, 1)
    assert near("sesion", "sessions")  # two slips in a long name
    assert near("cst", "cost")  # one slip in a short name
    assert near("coat", "cost")
    assert not near("cst", "close")  # two in a short name: not
    assert not near("cots", "new")
    assert not near("effect", "effort")  # two letters changed in place: another word
    assert not near("import", "export")
    assert not near("research", "search", free_text=True)  # free text: one slip only
    assert near("Status", "status")  # a command in other letters' case
    assert not near("status", "status")  # the command itself is no slip


def _bad_values() -> list[tuple[Spec[Any], Front, str, Argument]]:
    """(command, front, line, the argument given ``yolo``) for every argument that has
    choices or takes a number, in a cell and in the sidebar (the terminal's argparse says
    the choices itself)."""
    cases = []
    for spec in COMMANDS:
        for front in KERNEL_FRONTS:
            if front not in spec.fronts:
                continue
            for a in arguments(spec.args):
                if not a.offered(front) or (a.choices is None and a.kind != "int"):
                    continue
                required = " ".join("df" for r in arguments(spec.args) if r.required)
                given = "yolo" if a.positional else f"{a.flag} yolo"
                cases.append((spec, front, f"{required} {given}".strip(), a))
    return cases


@pytest.mark.parametrize(
    ("spec", "front", "line", "argument"),
    _bad_values(),
    ids=[f"{front}:{spec.name} {line}" for spec, front, line, _ in _bad_values()],
)
def test_a_value_a_command_does_not_take_names_those_it_takes(
    spec: Spec[Any], front: Front, line: str, argument: Argument
) -> None:
    reading = read(spec, front, line)
    assert isinstance(reading, BadValue), reading
    assert "(got `yolo`)" in reading.problem
    assert spelled(front, spec.name) in reading.problem
    for choice in argument.choices or ("a whole number",):
        assert choice in reading.problem


def test_the_bad_value_cases_cover_the_newcomers() -> None:
    lines = {(s.name, f, line) for s, f, line, _ in _bad_values()}
    assert ("approval", "magic", "yolo") in lines
    assert ("effort", "sidebar", "yolo") in lines
    assert ("fork", "magic", "--at yolo") in lines


def test_fitting_words_and_words_of_another_shape() -> None:
    approval, effort = command("approval"), command("effort")
    assert approval is not None
    assert effort is not None
    assert isinstance(read(approval, "magic", "auto"), Fits)
    misfit = read(approval, "magic", "of this plan is pending, what next?")
    assert isinstance(misfit, Misfit)
    assert isinstance(read(effort, "sidebar", "high --loudly"), Misfit)  # an unknown flag
    problem = read(effort, "sidebar", "extreme")
    assert problem == BadValue(
        "`/effort` takes default, low, medium, high, xhigh or max (got `extreme`)."
    )


def test_a_model_list_knows_whether_the_api_answered() -> None:
    models = (ModelInfo("claude-sonnet-5-5", "Claude Sonnet 5.5"),)
    assert ModelList(models, "api", 1.0).answered
    assert ModelList(models, "cache", 1.0).answered
    assert not ModelList(models, "cache", 1.0, note="Connection error.").answered
    assert not ModelList(models, "shipped", None, note="Connection error.").answered
    assert not ModelList((), "api", 1.0).answered  # an endpoint that lists nothing
    listed = ModelList(models, "api", 1.0)
    assert listed.find("claude-sonnet-5-5-latest") == models[0]
    assert listed.find("gpt-4o") is None
