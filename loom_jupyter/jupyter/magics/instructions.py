"""``%cowork instructions``: the project instructions in the system prompt, as a table."""

from __future__ import annotations

from typing import TYPE_CHECKING

from loom_jupyter.jupyter.cell.output import show_table, show_text

if TYPE_CHECKING:
    import argparse

    from loom_jupyter.jupyter.coworker.runtime import KernelCowork
    from loom_jupyter.session.instructions import InstructionFile

__all__ = ["instructions"]

_LOOKED_FOR = "AGENTS.md, CLAUDE.md or .loom/instructions.md"


def instructions(cw: KernelCowork, args: argparse.Namespace) -> None:
    """``%cowork instructions``: file, characters, included/cut, and the total."""
    loaded = cw.run(cw.session.project_instructions())
    if not loaded.files:
        show_text(
            f"No project instructions: no {_LOOKED_FOR} in the notebook's folder or a parent "
            f"up to the project root ({loaded.root})."
        )
        return
    rows = [(f.name, _chars(f), _status(f)) for f in loaded.files]
    rows.append(("total", f"{loaded.total_chars:,}", f"{loaded.included_chars:,} in the prompt"))
    caption = (
        f"Project root: {loaded.root}. Outermost first; at most {loaded.max_chars:,} characters "
        "(instructions_max_chars). Edits reach the model on the next turn."
    )
    show_table(("file", "characters", "in the system prompt"), rows, caption=caption)


def _chars(file: InstructionFile) -> str:
    if file.status in ("skipped", "duplicate", "untrusted"):
        return "-"
    return f"{file.chars:,}" if file.whole else f"{file.chars:,}+"


def _status(file: InstructionFile) -> str:
    if file.status == "cut":
        return f"cut: first {file.included:,}"
    if file.status == "skipped":
        return f"skipped: {file.reason}"
    if file.status == "duplicate":
        return f"same file as {file.reason}"
    if file.status == "untrusted":
        return f"not sent: {file.reason}"
    return file.status
