"""Near misses: when a typed word is a slip of a command's name (issue 40.1).

The one rule, for every front (``%cowork``, ``%delegate``, the sidebar's ``/``, the
terminal): a word *misspells* a command when it is within :func:`reach` edits of the
command's name (:func:`distance`: insertions, deletions, substitutions and swaps of two
neighbouring letters, each one edit) and the rest of the line fits that command's
arguments. Nothing here knows a command; a front hands :func:`misspelled` its
:class:`Candidate`\\ s.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

__all__ = ["Candidate", "distance", "misspelled", "near", "reach"]

LONG_NAME = 6
"""Names this long or longer forgive two slips; shorter ones one."""


@dataclass(frozen=True)
class Candidate:
    """A command a word may misspell: its name and whether the rest of a line fits it."""

    name: str
    fits: Callable[[str], bool]
    """The rest of the line (after the word) parses as its arguments."""
    free_text: bool = False
    """Its argument is free text (``search WORDS``): any sentence fits it."""


def distance(a: str, b: str) -> int:
    """The edits that make ``a`` into ``b`` (optimal string alignment: insert, delete,
    substitute, or swap two neighbouring letters, each counted once)."""
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        row = [i]
        for j, y in enumerate(b, 1):
            best = min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (x != y))
            if i > 1 and j > 1 and x == b[j - 2] and a[i - 2] == y:
                best = min(best, previous2[j - 2] + 1)
            row.append(best)
        previous2, previous = previous, row
    return previous[-1]


def reach(name: str, *, free_text: bool = False) -> int:
    """How many edits away a word may be and still mean ``name``: two for names of six
    letters or more, one for shorter names and for commands that take free text (any
    sentence fits those, so only a one-letter slip counts)."""
    return 2 if len(name) >= LONG_NAME and not free_text else 1


def near(word: str, name: str, *, free_text: bool = False) -> bool:
    """Whether ``word`` (any case) is a slip of ``name``: within :func:`reach`, but not
    ``name`` itself, and not two letters changed in place (``effect``/``effort``,
    ``import``/``export``: a word that long differing in two letters is another word)."""
    typed = word.lower()
    if word == name or abs(len(typed) - len(name)) > reach(name, free_text=free_text):
        return False  # each letter more or less is an edit: not near, without counting
    edits = distance(typed, name)
    if edits > reach(name, free_text=free_text):
        return False
    return not (edits == 2 and len(typed) == len(name) and _changed(typed, name) == 2)


def _changed(a: str, b: str) -> int:
    return sum(x != y for x, y in zip(a, b, strict=True))


def misspelled(
    word: str, rest: str, candidates: Iterable[Candidate], *, names: Iterable[str] = ()
) -> Candidate | None:
    """The command ``word`` most likely misspells: the nearest candidate ``word`` is
    :func:`near` whose arguments ``rest`` fits (the first listed on a tie), else ``None``.
    A word in ``names`` (every command's, on any front) is that command, never a slip of
    another (``delegate`` is not ``delete``); in other letters' case it is its own slip."""
    listed = list(candidates)
    typed = word.lower()
    if typed in set(names) and typed not in {c.name for c in listed}:
        return None
    found = [c for c in listed if near(word, c.name, free_text=c.free_text)]
    found.sort(key=lambda c: distance(word.lower(), c.name))  # stable: table order on ties
    return next((c for c in found if c.fits(rest)), None)
