"""What the notebook's folder brings: project instructions, MCP servers, skills, folder
trust."""

from __future__ import annotations

from typing import TYPE_CHECKING

from loom_jupyter.host.commands.context import Context, HostContext
from loom_jupyter.host.commands.report import Block, Report, Table, say

if TYPE_CHECKING:
    from loom_jupyter.host.commands.arguments import McpArgs, NoArgs, TrustArgs
    from loom_jupyter.host.host import Host
    from loom_jupyter.session.instructions import InstructionFile
    from loom_jupyter.skills import SkillSet

__all__ = ["SKILL_HEADERS", "instructions", "mcp", "skill_rows", "skills", "trust"]

_LOOKED_FOR = "AGENTS.md, CLAUDE.md or .loom/instructions.md"


def _host(context: Context) -> Host:
    if not isinstance(context, HostContext):  # the registry offers these in kernels only
        raise TypeError("this command needs the kernel's host")
    return context.host


async def instructions(context: Context, args: NoArgs) -> Report:
    """File, characters, included/cut, and the total."""
    loaded = await (await _host(context).session_async()).project_instructions()
    if not loaded.files:
        return say(
            f"No project instructions: no {_LOOKED_FOR} in the notebook's folder or a parent "
            f"up to the project root ({loaded.root})."
        )
    rows: list[tuple[object, ...]] = [(f.name, _chars(f), _status(f)) for f in loaded.files]
    rows.append(("total", f"{loaded.total_chars:,}", f"{loaded.included_chars:,} in the prompt"))
    caption = (
        f"Project root: {loaded.root}. Outermost first; at most {loaded.max_chars:,} characters "
        "(instructions_max_chars). Edits reach the model on the next turn."
    )
    headers = ("file", "characters", "in the system prompt")
    return Report(parts=(Table(headers, tuple(rows), caption),))


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


async def mcp(context: Context, args: McpArgs) -> Report:
    """Starts the servers not started yet, then lists them."""
    from loom_jupyter.mcp.view import CAPTION, HEADERS, NO_SERVERS, status_rows

    session = await _host(context).session_async()
    statuses = await session.mcp_status(restart=args.restart)
    if not statuses:
        return say(NO_SERVERS)
    caption = CAPTION.replace("%cowork mcp --restart NAME", context.spelled("mcp --restart NAME"))
    rows = tuple(status_rows(statuses))
    return Report(title="MCP servers", parts=(Table(HEADERS, rows, caption),))


async def trust(context: Context, args: TrustArgs) -> Report:
    """What the folder asks for, as text (the folder's words are never markup), and the
    trust card opened on every sidebar to answer it (a cell and a terminal ask themselves)."""
    found = await _host(context).trust.show()
    return Report(title="Folder trust", parts=(Block(found.report()),))


SKILL_HEADERS = ("name", "description", "source", "path", "state")
_SKILL_CAPTION = (
    "The model sees the usable skills by name and description and loads one with load_skill. "
    "A project skill needs the folder's trust (`{trust}`); the person's skill wins over a "
    "project skill of the same name."
)


async def skills(context: Context, args: NoArgs) -> Report:
    """Every skill found now, usable or not, and why not (DESIGN §15)."""
    from loom_jupyter.skills import person_skill_roots
    from loom_jupyter.trust import skills_for

    found = skills_for(_host(context).trust.read())
    if not found.skills:
        places = ", ".join(str(root) for root in person_skill_roots())
        return say(
            f"No skills found: none in {places}, nor in .claude/skills or .agents/skills from "
            "the notebook's folder up to the project root. A skill is a folder holding SKILL.md."
        )
    caption = _SKILL_CAPTION.format(trust=context.spelled("trust"))
    table = Table(SKILL_HEADERS, skill_rows(found), caption, code=(0, 3), text=(1, 4))
    return Report(title="Skills", parts=(table,))


def skill_rows(found: SkillSet) -> tuple[tuple[object, ...], ...]:
    """One row a skill, in the order found: name, description, source, folder, state."""
    from loom_jupyter.controls import visible

    return tuple(
        tuple(visible(cell) for cell in (s.name, s.description, s.source, str(s.folder), s.state))
        for s in found.skills
    )
