"""What every command module shares: :func:`arg` (a field of an argument dataclass, with
its help), the fronts' names (:data:`Front`, :func:`spelled`) and :class:`UsageProblem`.

Kept apart from :mod:`.spec` (which reads these fields into parsers and types each command's
handler) so the arguments, the handlers' context and the spec module do not import each
other.
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from loom_jupyter.errors import LoomError

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["ArgInfo", "Front", "UsageProblem", "arg", "spelled"]

Front = Literal["magic", "sidebar", "cli"]
"""Where a command is typed: ``%cowork NAME`` in a cell, ``/NAME`` in the sidebar,
``loom-jupyter NAME NOTEBOOK`` in a terminal."""

_PREFIX: dict[Front, str] = {"magic": "%cowork ", "sidebar": "/", "cli": "loom-jupyter "}


def spelled(front: Front, line: str) -> str:
    """A command line as ``front`` types it: ``spelled("sidebar", "rebuild x")`` is
    ``/rebuild x``."""
    return _PREFIX[front] + line


class UsageProblem(LoomError):
    """The words do not fit the command's arguments; the message shows its usage."""


@dataclass(frozen=True)
class ArgInfo:
    """How a field of an argument dataclass is typed (:func:`arg`)."""

    help: str
    positional: bool
    flags: tuple[str, ...]
    metavar: str | None
    rest: bool
    fronts: frozenset[Front] | None


def arg(
    help: str = "",
    *,
    default: Any = MISSING,
    positional: bool = False,
    flags: Sequence[str] = (),
    metavar: str | None = None,
    rest: bool = False,
    fronts: Sequence[Front] | None = None,
) -> Any:
    """One argument of a command: a dataclass field with its help.

    ``positional``: typed without a flag (else ``--name``, with ``_`` as ``-``); ``flags``:
    other spellings (``-o``, ``--all-sessions``); ``rest``: the rest of the line as one
    string (``/delegate GOAL``); ``fronts``: only these fronts offer it (default: all)."""
    info = ArgInfo(
        help,
        positional or rest,
        tuple(flags),
        metavar,
        rest,
        None if fronts is None else frozenset(fronts),
    )
    if isinstance(default, list):
        raise TypeError("a list default: use arg(default=()) and a list[str] field")
    if default == ():
        return field(default_factory=list, metadata={"arg": info})
    return field(default=default, metadata={"arg": info})
