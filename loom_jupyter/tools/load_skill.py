"""``load_skill`` (DESIGN §15): a usable skill's whole ``SKILL.md`` and its other files.

The session puts the skills found in :attr:`ToolContext.skills
<loom_jupyter.tools.base.ToolContext.skills>` (the person's, and the project's once the
folder is trusted); the system prompt lists the usable ones by name and description
(:func:`loom_jupyter.skills.skills_block`). The result names the skill, its source and its
folder, so the tool card and the archive show which skill was loaded and from where.
A skill's other files are read with ``read_file``, which reads inside a usable skill's
folder even outside the notebook's (:func:`skill_path`).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, ClassVar

from loom_jupyter.errors import ToolError
from loom_jupyter.messages import ToolSpec
from loom_jupyter.skills import NAME_MAX_CHARS, loaded_summary, skill_text
from loom_jupyter.tools.base import ToolAccess, ToolContext, ToolOutput, TypedTool
from loom_jupyter.tools.schema import Limit, ToolInput, input_schema

if TYPE_CHECKING:
    from loom_jupyter.skills import SkillSet

__all__ = ["LoadSkill", "LoadSkillInput", "skill_path"]


@dataclass(frozen=True, kw_only=True)
class LoadSkillInput(ToolInput):
    """``load_skill``: which skill."""

    name: Annotated[str, Limit(min_length=1, max_length=NAME_MAX_CHARS)]
    """The skill's name, as the system prompt lists it."""


class LoadSkill(TypedTool[LoadSkillInput]):
    """``load_skill``: the skill's instructions, and the files it holds."""

    input_type = LoadSkillInput
    access: ClassVar[ToolAccess] = "read"
    spec: ClassVar[ToolSpec] = ToolSpec(
        name="load_skill",
        description=(
            "Load one of the skills the system prompt lists: its whole SKILL.md (instructions "
            "for a kind of task) and the list of its other files with their sizes, which "
            "read_file can read. Load a skill before doing a task it covers."
        ),
        input_schema=input_schema(LoadSkillInput),
    )

    async def run(self, args: LoadSkillInput, ctx: ToolContext) -> ToolOutput:
        """The skill's text, or why there is no such usable skill."""
        skill = ctx.skills.get(args.name) if ctx.skills is not None else None
        if skill is None:
            raise ToolError(_not_usable(ctx.skills, args.name))
        text = await asyncio.to_thread(skill_text, skill)
        summary = loaded_summary(skill.name, skill.source, skill.folder)
        return ToolOutput.text(text, summary=summary)


def _not_usable(skills: SkillSet | None, name: str) -> str:
    found = next((s for s in skills.skills if s.name == name), None) if skills else None
    usable = ", ".join(s.name for s in skills.usable) if skills else ""
    offer = f"The skills you can load: {usable}." if usable else "No skill can be loaded now."
    if found is None:
        return f"There is no skill named {name!r}. {offer}"
    where = f"{found.source}, {found.folder}"
    return f"The skill {name!r} ({where}) cannot be used: {found.state}. {offer}"


def skill_path(ctx: ToolContext, raw: str) -> tuple[Path, str] | None:
    """``raw``'s real path and how to show it, when it is a file inside a usable skill's
    folder (links resolved first: one out of the folder is not inside); else ``None``."""
    if ctx.skills is None:
        return None
    given = Path(raw).expanduser()
    candidate = given if given.is_absolute() else ctx.notebook_dir / given
    try:
        real = candidate.resolve()
    except (OSError, RuntimeError, ValueError):
        return None
    skill = ctx.skills.holding(real)
    if skill is None:
        return None
    return real, f"{real} (the {skill.source} skill {skill.name})"
