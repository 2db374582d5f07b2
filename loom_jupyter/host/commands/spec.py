"""How a command is declared: :class:`Spec` and its typed arguments.

A command's arguments are a frozen dataclass; each field is one argument, described by
:func:`arg` (help, positional or ``--flag``, other spellings, which fronts offer it). A
``bool`` is a flag, a ``list[str]`` takes several words, a ``Literal`` lists its
choices, a default makes it optional. From that one class come the magic's
``MagicArgumentParser`` (``%cowork NAME --help``), the sidebar's slash form (tokenized
into the class by :func:`parse_words`) and the CLI's argparse subcommand; the usage line
(``/rebuild NAME [NAME ...] [--yes]``) is written from it too.

A :class:`Spec` is generic in its argument dataclass ``A``: it holds a function that
imports and returns that class (:attr:`Spec.load_args`) and its handler, a
:data:`Handler` ``async (context, args: A) -> Report``; both are written out in the registry,
so mypy checks that they agree and the layering test sees what they import.

Nothing here runs a command and nothing is imported that ``%load_ext`` would feel.
"""

from __future__ import annotations

import argparse
import shlex
import types
from dataclasses import MISSING, dataclass, fields
from typing import (
    TYPE_CHECKING,
    Any,
    Generic,
    Literal,
    TypeVar,
    Union,
    get_args,
    get_origin,
    get_type_hints,
)

from loom_jupyter.host.commands.fields import ArgInfo, Front, UsageProblem, arg, spelled

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from typing import TypeAlias

    from loom_jupyter.host.commands.context import Context
    from loom_jupyter.host.commands.report import Report

__all__ = [
    "FRONTS",
    "Argument",
    "Front",
    "Spec",
    "UsageProblem",
    "add_arguments",
    "arg",
    "arguments",
    "from_namespace",
    "parse_shape",
    "parse_words",
    "spelled",
]

FRONTS: tuple[Front, ...] = ("magic", "sidebar", "cli")

A = TypeVar("A")
"""A command's argument dataclass."""

if TYPE_CHECKING:
    Handler: TypeAlias = Callable[[Context, A], Awaitable[Report]]
    """What answers a command: ``async (context, args) -> Report``, run on the engine loop."""


@dataclass(frozen=True)
class Argument:
    """One argument as the fronts see it, derived from a field."""

    name: str
    help: str
    positional: bool
    flags: tuple[str, ...]
    metavar: str
    kind: Literal["flag", "text", "int", "words", "rest"]
    choices: tuple[str, ...] | None
    required: bool
    default: Any
    fronts: frozenset[Front] | None

    @property
    def flag(self) -> str:
        """Its main spelling: ``--output`` (not ``-o``)."""
        return next(f for f in self.flags if f.startswith("--"))

    def offered(self, front: Front) -> bool:
        return self.fronts is None or front in self.fronts

    def usage(self) -> str:
        """How the usage line shows it: ``NAME [NAME ...]``, ``[--yes]``, ``[--restart NAME]``."""
        if self.kind == "flag":
            return f"[{self.flag}]"
        if self.kind == "rest":
            return self.metavar
        if self.positional:
            word = f"{self.metavar} [{self.metavar} ...]" if self.kind == "words" else self.metavar
            if self.kind == "words" and not self.required:
                return f"[{self.metavar} ...]"
            return word if self.required else f"[{word}]"
        return f"[{self.flag} {self.metavar}]"


def arguments(cls: type) -> tuple[Argument, ...]:
    """The arguments of an argument dataclass, in field order."""
    hints = get_type_hints(cls)
    found = []
    for f in fields(cls):
        info: ArgInfo = f.metadata.get("arg") or ArgInfo("", False, (), None, False, None)
        kind, choices = _kind(hints[f.name], rest=info.rest)
        required = f.default is MISSING and f.default_factory is MISSING
        default = None if required else (f.default if f.default is not MISSING else [])
        short = tuple(flag for flag in info.flags if not flag.startswith("--"))
        long = tuple(flag for flag in info.flags if flag.startswith("--"))
        flags = () if info.positional else (*short, f"--{f.name.replace('_', '-')}", *long)
        metavar = info.metavar or (f.name.upper() if kind != "flag" else "")
        found.append(
            Argument(
                f.name,
                info.help,
                info.positional,
                flags,
                metavar,
                kind,
                choices,
                required,
                default,
                info.fronts,
            )
        )
    return tuple(found)


def _kind(hint: Any, *, rest: bool) -> tuple[Any, tuple[str, ...] | None]:
    if get_origin(hint) in (Union, types.UnionType):
        hint = next(a for a in get_args(hint) if a is not type(None))
    if rest:
        return "rest", None
    if hint is bool:
        return "flag", None
    if hint is int:
        return "int", None
    if get_origin(hint) is Literal:
        return "text", tuple(str(a) for a in get_args(hint))
    if get_origin(hint) is list:
        return "words", None
    return "text", None


def add_arguments(
    parser: argparse.ArgumentParser, cls: type, front: Front, *, relaxed: bool = False
) -> None:
    """Add the arguments ``front`` offers to an argparse parser (or IPython's);
    ``relaxed``: every value as typed (no choices, no ``int``), to check a line's shape."""
    for a in arguments(cls):
        if not a.offered(front):
            continue
        options: dict[str, Any] = {"help": a.help or None}
        if a.kind == "flag":
            options["action"] = "store_true"
        else:
            options["metavar"] = a.metavar
            if a.choices is not None and not relaxed:
                options["choices"] = a.choices
            if a.kind == "int" and not relaxed:
                options["type"] = int
        if a.kind in ("words", "rest"):
            options["nargs"] = "+" if a.required else "*"
        elif a.positional and not a.required:
            options["nargs"] = "?"
        if not a.required and a.kind != "flag":
            options["default"] = a.default
        if a.positional:
            parser.add_argument(a.name, **options)
        else:
            parser.add_argument(*a.flags, dest=a.name, **options)


def from_namespace(cls: type[A], namespace: argparse.Namespace) -> A:
    """The argument dataclass from what argparse parsed (fields a front does not offer keep
    their defaults)."""
    values = {}
    for a in arguments(cls):
        if not hasattr(namespace, a.name):
            continue
        value = getattr(namespace, a.name)
        if a.kind == "rest":
            value = " ".join(value or ())
        values[a.name] = value
    return cls(**values)


class _Raising(argparse.ArgumentParser):
    """argparse that raises instead of printing and exiting."""

    def __init__(self, spec: Spec[Any], front: Front, **kwargs: Any) -> None:
        super().__init__(add_help=False, **kwargs)
        self.usage_line = spec.usage(front)
        self.head = spelled(front, spec.name)

    def error(self, message: str) -> Any:
        raise UsageProblem(f"Usage: `{self.usage_line}`")

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        if action.choices is not None and value not in action.choices:
            choices = "|".join(map(str, action.choices))
            raise UsageProblem(f"Usage: {self.head} {choices} (got {value!r}).")


def parse_words(spec: Spec[A], front: Front, line: str) -> A:
    """``line`` (what follows ``/NAME``) tokenized into the command's argument dataclass;
    :class:`UsageProblem` when it does not fit."""
    try:
        words = shlex.split(line)
    except ValueError:
        raise UsageProblem(f"Usage: `{spec.usage(front)}`") from None
    parser = _Raising(spec, front)
    add_arguments(parser, spec.args, front)
    return from_namespace(spec.args, parser.parse_args(words))


def parse_shape(spec: Spec[Any], front: Front, words: list[str]) -> argparse.Namespace:
    """``words`` read as the command's arguments with every value as typed (no choices, no
    ``int``): whether a line has the command's shape; :class:`UsageProblem` when not."""
    parser = _Raising(spec, front)
    add_arguments(parser, spec.args, front, relaxed=True)
    return parser.parse_args(words)


Busy = Literal["free", "refused", "switch"]


@dataclass(frozen=True)
class Spec(Generic[A]):
    """A command, declared once for every front; ``A`` is its argument dataclass."""

    name: str
    summary: str
    """What it does, in a few words (``/help``, the sidebar's completion)."""
    about: str
    """Its whole help (``%cowork NAME --help``; its first sentence in ``%cowork --help``)."""
    load_args: Callable[[], type[A]]
    """Imports and returns the argument dataclass (:attr:`args`), from :mod:`.arguments` on
    first use: ``%load_ext`` stays light."""
    handler: Handler[A] | None
    """What answers it on the engine loop (the registry's, which imports its module when it
    first runs); ``None``: only the fronts that offer it answer it (:attr:`by_front`)."""
    fronts: frozenset[Front]
    """Where it can be typed."""
    by_front: frozenset[Front] = frozenset()
    """Fronts that answer it themselves (the sidebar's ``/new`` switches without a
    ``command`` message; ``%cowork login`` asks on the main thread)."""
    needs_session: bool = True
    """Needs the kernel's open conversation (not offered where there is none: the CLI)."""
    busy: Busy = "free"
    """While a turn or a delegation runs: ``free`` runs; ``refused`` is refused with a word
    (:func:`~loom_jupyter.host.commands.registry.availability`); ``switch`` is a session
    switch, which the session itself refuses
    (:class:`~loom_jupyter.errors.SessionBusyError`)."""
    runs_without_archive: bool = False
    """Runs when the archive cannot be opened (``recover``)."""
    cli_about: str = ""
    """The terminal's help when it says more or other than :attr:`about`."""
    examples: str = ""
    """Examples under the terminal's ``--help``."""

    @property
    def args(self) -> type[A]:
        """The argument dataclass (imported on first use: ``%load_ext`` stays light)."""
        return self.load_args()

    def usage(self, front: Front) -> str:
        """``/rebuild NAME [NAME ...] [--yes]`` (as ``front`` types it)."""
        words = [a.usage() for a in arguments(self.args) if a.offered(front)]
        return spelled(front, " ".join([self.name, *words]))

    def arg_line(self, front: Front) -> str:
        """The usage after the name: ``NAME [NAME ...] [--yes]`` (``""``: none)."""
        return " ".join(a.usage() for a in arguments(self.args) if a.offered(front))

    @property
    def required(self) -> bool:
        """Whether a bare ``%cowork NAME`` lacks an argument (it then shows the usage)."""
        return any(a.required for a in arguments(self.args) if a.offered("magic"))
