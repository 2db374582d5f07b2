"""Commands are checked before anything is sent (issue 40.1).

A line a front would send to the model is first read against :data:`~.registry.COMMANDS`:

- :func:`misspelling`: its first word is a slip of a command's name (:mod:`.nearby`'s
  rule) and the rest fits that command's arguments (``%cowork sesions``,
  ``/serach outliers``): the front answers "did you mean …" and sends nothing.
- :func:`read`: a real command's words, in the command's shape but with a value it does not
  take (``%cowork approval yolo``, ``%cowork fork --at x``): :class:`BadValue` names the
  values it takes. Words of another shape (too many, an unknown flag) are
  :class:`Misfit`: ``%cowork`` sends such a line as a prompt.

The answers are worded here for every front (:func:`misspelling_text`,
:func:`bad_value_text`), so the cell, the sidebar and the terminal say the same.
"""

from __future__ import annotations

import functools
import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from typing_extensions import assert_never

from loom_jupyter.host.commands.nearby import Candidate, misspelled
from loom_jupyter.host.commands.registry import COMMANDS, commands_for
from loom_jupyter.host.commands.spec import (
    Argument,
    Front,
    Spec,
    UsageProblem,
    arguments,
    parse_shape,
    parse_words,
    spelled,
)

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable

__all__ = [
    "BadValue",
    "Fits",
    "Misfit",
    "Reading",
    "Where",
    "bad_value_text",
    "candidates",
    "misspelling",
    "misspelling_text",
    "read",
    "shape_fits",
    "words_of",
]

Where = Literal["cowork", "delegate", "sidebar", "cli"]
"""Where a line was typed: ``%cowork``, ``%delegate``, the sidebar's box, the terminal."""

_HELP = ("-h", "--help")


@dataclass(frozen=True)
class Fits:
    """The words are the command's arguments."""

    args: Any
    kind: Literal["fits"] = "fits"


@dataclass(frozen=True)
class BadValue:
    """The command's shape, with values it does not take; ``problem`` names those it does."""

    problem: str
    kind: Literal["bad_value"] = "bad_value"


@dataclass(frozen=True)
class Misfit:
    """Not the command's shape; ``problem`` is its usage."""

    problem: str
    kind: Literal["misfit"] = "misfit"


Reading: TypeAlias = Fits | BadValue | Misfit
"""What a command's words are."""


def words_of(rest: str) -> list[str]:
    """The words of a line as a shell splits them (plain spaces when its quotes do not
    close: ``what's in df`` is still three words)."""
    if not any(mark in rest for mark in "'\"\\"):  # the same words, without shlex's pace
        return rest.split()
    try:
        return shlex.split(rest)
    except ValueError:
        return rest.split()


def read(spec: Spec[Any], front: Front, rest: str) -> Reading:
    """What ``rest`` (the words after the command's name) is for ``spec`` on ``front``."""
    try:
        return Fits(parse_words(spec, front, rest))
    except UsageProblem as strict:
        problem = str(strict)
    shape = _shape(spec, front, words_of(rest))
    if shape is None:
        return Misfit(problem)
    bad = [p for a in arguments(spec.args) if (p := _problem(spec, front, a, shape))]
    return BadValue(" ".join(bad)) if bad else Misfit(problem)


def shape_fits(spec: Spec[Any], front: Front, rest: str) -> bool:
    """Whether ``rest`` has the shape of ``spec``'s arguments (any values), or is empty or
    ``--help`` (the command then shows its usage)."""
    words = words_of(rest)
    return not words or rest.strip() in _HELP or _shape(spec, front, words) is not None


def _shape(spec: Spec[Any], front: Front, words: list[str]) -> argparse.Namespace | None:
    try:
        return parse_shape(spec, front, words)
    except UsageProblem:
        return None


def _problem(spec: Spec[Any], front: Front, a: Argument, shape: argparse.Namespace) -> str:
    """Why ``a``'s value in ``shape`` is not one it takes (``""``: it is)."""
    value = getattr(shape, a.name, None)
    if not a.offered(front) or not isinstance(value, str):
        return ""
    where = spelled(front, spec.name) + ("" if a.positional else f" {a.flag}")
    if a.choices is not None and value not in a.choices:
        return f"`{where}` takes {_either(a.choices)} (got `{value}`)."
    if a.kind == "int" and not _is_int(value):
        return f"`{where}` takes a whole number (got `{value}`)."
    return ""


def _is_int(text: str) -> bool:
    try:
        int(text)
    except ValueError:
        return False
    return True


def _either(choices: tuple[str, ...]) -> str:
    return ", ".join(choices[:-1]) + f" or {choices[-1]}" if len(choices) > 1 else choices[0]


# -- misspellings -------------------------------------------------------------------------


def candidates(
    front: Front, fits: Callable[[Spec[Any], str], bool] | None = None
) -> list[Candidate]:
    """The commands ``front`` offers as :class:`~.nearby.Candidate`\\ s; ``fits`` checks a
    line's shape (default :func:`shape_fits`; the terminal adds its NOTEBOOK)."""
    check = fits or (lambda spec, rest: shape_fits(spec, front, rest))
    return [
        Candidate(spec.name, _bound(check, spec), free_text=_free_text(spec, front))
        for spec in commands_for(front)
    ]


def _bound(check: Callable[[Spec[Any], str], bool], spec: Spec[Any]) -> Callable[[str], bool]:
    return lambda rest: check(spec, rest)


@functools.cache
def _free_text(spec: Spec[Any], front: Front) -> bool:
    return any(a.kind == "rest" and a.offered(front) for a in arguments(spec.args))


def misspelling(
    front: Front, word: str, rest: str, fits: Callable[[Spec[Any], str], bool] | None = None
) -> Spec[Any] | None:
    """The command ``word`` misspells on ``front`` when ``rest`` fits it, else ``None``
    (a word that names any command, on any front, is never a slip of another)."""
    names = [spec.name for spec in COMMANDS]
    found = misspelled(word, rest, candidates(front, fits), names=names)
    return None if found is None else next(s for s in COMMANDS if s.name == found.name)


# -- the answers --------------------------------------------------------------------------


def _spelled(where: Where, line: str) -> str:
    match where:
        case "cowork":
            return spelled("magic", line)
        case "sidebar" | "cli":
            return spelled(where, line)
        case "delegate":
            return f"%delegate {line}"
        case _:
            assert_never(where)


def _unsent(where: Where, line: str) -> str:
    """What happened to the line, and how to send it as it is."""
    match where:
        case "cowork":
            return (
                "Nothing was sent to the model. To send this line as a prompt: "
                f"`%cowork -- {line}`, or a `%%cowork` cell."
            )
        case "delegate":
            return (
                "Nothing was delegated. To delegate this line as a goal: "
                f"`%delegate -- {line}`, or a `%%delegate` cell."
            )
        case "sidebar":
            return "Nothing was sent to the model."
        case "cli":
            return ""
        case _:
            assert_never(where)


def misspelling_text(where: Where, line: str, name: str, rest: str) -> str:
    """The "did you mean …?" for ``line`` (as typed after the prefix), a slip of ``name``."""
    meant = _spelled(where, " ".join(part for part in (name, rest.strip()) if part))
    return " ".join(part for part in (f"Did you mean `{meant}`?", _unsent(where, line)) if part)


def bad_value_text(where: Where, line: str, problem: str) -> str:
    """A real command with a value it does not take: ``problem``, and what was not sent."""
    return " ".join(part for part in (problem, _unsent(where, line)) if part)
