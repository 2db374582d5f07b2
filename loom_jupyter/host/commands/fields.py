"""The one helper an argument dataclass needs: :func:`arg`, a field with its help.

Kept apart from :mod:`.spec` (which reads these fields into parsers) so the arguments
module and the spec module do not import each other.
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["ArgInfo", "Front", "arg"]

Front = Literal["magic", "sidebar", "cli"]
"""Where a command is typed: ``%cowork NAME`` in a cell, ``/NAME`` in the sidebar,
``loom-jupyter NAME NOTEBOOK`` in a terminal."""


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
