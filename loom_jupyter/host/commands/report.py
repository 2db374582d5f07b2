"""What a command answers: a typed report every front renders its own way.

A :class:`Report` is a title and an ordered list of parts: notes (:class:`Note`), tables
(:class:`Table`: headers and rows), blocks of code or markdown (:class:`Block`) and a
plot of the cost ledger (:class:`CostPlot`, drawn where a front can draw). Text in a
title or a note is plain, with `backticks` around code (a command to type, a name): the
cell and the terminal show it as it is, the sidebar's markdown makes it code. Nothing in
a report is formatted for one front: the cell shows it with ``show_table``/``show_text``
(``loom_jupyter/jupyter/magics/front.py``), the terminal with ``cli/render.py`` and the
sidebar with :func:`to_markdown`, the one report-to-markdown of the kernel.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeAlias

if TYPE_CHECKING:
    from collections.abc import Sequence

    from loom_jupyter.records import ModelCallRecord

__all__ = [
    "Block",
    "CostPlot",
    "Items",
    "Note",
    "Part",
    "Report",
    "Table",
    "code_span",
    "fenced",
    "listing",
    "say",
    "to_markdown",
]


@dataclass(frozen=True)
class Note:
    """A paragraph of plain text (`backticks` mark code); may hold line breaks."""

    text: str


@dataclass(frozen=True)
class Table:
    """Rows under headers, with a caption after them."""

    headers: tuple[str, ...]
    rows: tuple[tuple[object, ...], ...]
    caption: str = ""
    align: str = ""
    """One ``<`` or ``>`` per column (``""``: all left)."""
    code: tuple[int, ...] = ()
    """Columns whose cells are code (the sidebar shows them as code spans)."""
    nowrap: bool = False
    """Keep each cell on one line (dates, ids): a narrow cell scrolls instead."""
    text: tuple[int, ...] = ()
    """Columns of text from outside Loom (a project file's words): the sidebar shows them
    as written, never as markdown or HTML."""


@dataclass(frozen=True)
class Block:
    """A block shown as it is: code (``language``), or markdown the kernel wrote."""

    text: str
    kind: Literal["code", "markdown"] = "code"
    language: str = "text"
    heading: str = ""
    """A line above it (``cell [3]``), plain text."""


@dataclass(frozen=True)
class Items:
    """Named things, each with a word on it (``Cannot rebuild:`` each name and why)."""

    heading: str
    items: tuple[tuple[str, str], ...]
    """``(name, text)``: the name is code (a variable, a file)."""

    def line(self) -> str:
        """On one line, as text: ``Cannot rebuild: a: why; b: why``."""
        return f"{self.heading} " + "; ".join(f"{name}: {text}" for name, text in self.items)


@dataclass(frozen=True)
class CostPlot:
    """Tokens and cost per model call, for a front that can draw (the cell)."""

    calls: tuple[ModelCallRecord, ...]


Part: TypeAlias = Note | Table | Block | Items | CostPlot


@dataclass(frozen=True)
class Report:
    """A command's answer. ``ok`` False: it could not do what was asked (the parts say why).

    ``confirm`` is a yes/no question the front may ask before doing it (``delete``): a
    front that can ask runs the command again with ``--yes`` on a yes."""

    title: str = ""
    parts: tuple[Part, ...] = ()
    ok: bool = True
    confirm: str | None = None

    @property
    def tables(self) -> tuple[Table, ...]:
        return tuple(p for p in self.parts if isinstance(p, Table))

    @property
    def notes(self) -> tuple[str, ...]:
        return tuple(p.text for p in self.parts if isinstance(p, Note))

    def plain(self) -> str:
        """The title and notes as lines (what a test or a log reads)."""
        return "\n".join(filter(None, (self.title, *self.notes)))


def say(text: str, *parts: Part, ok: bool = True) -> Report:
    """A report of one note (and any parts after it)."""
    return Report(parts=(Note(text), *parts), ok=ok)


# -- the sidebar's rendering ------------------------------------------------------------


def to_markdown(report: Report) -> str:
    """The report as markdown, for the sidebar's card (rendered sanitized, never as HTML)."""
    pieces = [f"**{report.title}**"] if report.title else []
    pieces += [_part(part) for part in report.parts]
    if report.confirm:
        pieces.append(report.confirm)
    return "\n\n".join(p for p in pieces if p)


def _part(part: Part) -> str:
    if isinstance(part, Note):
        return part.text
    if isinstance(part, Table):
        return _table(part)
    if isinstance(part, Items):
        return f"{part.heading}\n\n" + listing([f"`{n}`: {text}" for n, text in part.items])
    if isinstance(part, Block):
        if part.kind == "markdown":
            return part.text
        head = f"{_cell(part.heading)}:\n\n" if part.heading else ""
        return head + fenced(part.text, part.language)
    return ""  # a plot: the sidebar's footer already shows the cost


def _table(table: Table) -> str:
    align = (table.align + "<" * len(table.headers))[: len(table.headers)]
    rows = [
        "| " + " | ".join(_cell(h) for h in table.headers) + " |",
        "|" + "".join("---:|" if side == ">" else "---|" for side in align),
    ]
    for row in table.rows:
        cells = [
            code_span(str(value))
            if i in table.code
            else as_text(" ".join(str(value).split()))
            if i in table.text
            else _cell(_number(value))
            for i, value in enumerate(row)
        ]
        rows.append("| " + " | ".join(cells) + " |")
    text = "\n".join(rows)
    return f"{text}\n\n{table.caption}" if table.caption else text


def _number(value: object) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def _cell(value: object) -> str:
    """A value inside a markdown table's cell: one line, its bars escaped."""
    return " ".join(str(value).split()).replace("|", "\\|")


def as_text(text: str) -> str:
    """``text`` for markdown that shows it as written: every ASCII punctuation character
    escaped (CommonMark's backslash escapes), so no emphasis, link, image or HTML tag."""
    return _PUNCTUATION.sub(r"\\\g<0>", text)


_PUNCTUATION = re.compile(r"[!-/:-@\[-`{-~]")


def code_span(text: str) -> str:
    """``text`` as an inline code span, whatever backticks it holds (in a table's cell)."""
    flat = " ".join(text.split())
    if not flat:
        return ""
    fence = "`" * (max(map(len, re.findall(r"`+", flat)), default=0) + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{fence}{pad}{flat}{pad}{fence}".replace("|", "\\|")


def fenced(text: str, language: str = "text") -> str:
    """``text`` as a fenced block that nothing inside can close."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text}\n{fence}"


def listing(items: Sequence[str]) -> str:
    """Lines as a list (``- a``)."""
    return "\n".join(f"- {item}" for item in items)
