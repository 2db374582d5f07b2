"""Where a variable came from, for the sidebar: a ``where_from`` answered with ``origin``.

The sidebar asks when the person hovers a variable mentioned in the chat (issue 21).
:func:`check_name` refuses what is no variable name; :func:`origin` turns the
:class:`~loom_jupyter.lineage.VariableTrace` the host traced into the wire's
:class:`~loom_jupyter.host.wire.protocol.Origin`: the setter's label, time and first lines,
and the chain it depends on, capped so one answer stays small.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loom_jupyter.errors import LoomError
from loom_jupyter.host.wire.protocol import Origin, OriginStep
from loom_jupyter.tools.rebuild import SHOWN_LINES, SHOWN_STEPS, first_line, when

if TYPE_CHECKING:
    from loom_jupyter.lineage import VariableTrace

__all__ = ["MAX_NAME_CHARS", "check_name", "origin"]

MAX_NAME_CHARS = 200
"""A longer name is refused (no variable is named like that)."""
LINE_CHARS = 160
"""Each code line is cut here."""


def check_name(name: str) -> str:
    """The variable to trace for ``name`` (a dotted name's first part); a clear
    :class:`LoomError` when ``name`` is no (dotted) Python identifier."""
    shown = name if len(name) <= 40 else name[:39] + "…"
    if len(name) > MAX_NAME_CHARS:
        raise LoomError(f"loom: {shown!r} is no variable name (over {MAX_NAME_CHARS} characters)")
    parts = name.split(".")
    if not all(part.isidentifier() for part in parts):
        raise LoomError(f"loom: {shown!r} is no variable name: where it came from is not traced")
    return parts[0]


def origin(name: str, provenance: VariableTrace) -> Origin:
    """The wire's answer for ``name`` from what the host traced of its variable."""
    setter = provenance.setter
    if setter is None:
        return Origin(name, provenance.name, found=False, why=provenance.why)
    lines = setter.code.rstrip().splitlines()
    earlier = provenance.depends_on
    steps = tuple(OriginStep(step.label, first_line(step.code)) for step in earlier[:SHOWN_STEPS])
    return Origin(
        name,
        provenance.name,
        found=True,
        setter=setter.label,
        when=when(setter),
        code="\n".join(_cut(line) for line in lines[:SHOWN_LINES]),
        more_lines=max(0, len(lines) - SHOWN_LINES),
        steps=steps,
        more_steps=max(0, len(earlier) - SHOWN_STEPS),
        estimated_s=provenance.chain.estimated_s,
    )


def _cut(line: str) -> str:
    return line if len(line) <= LINE_CHARS else line[: LINE_CHARS - 1] + "…"
