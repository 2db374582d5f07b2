"""``load_skill`` and ``read_file`` in a skill's folder, on real files (DESIGN §15)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import pytest

from loom_jupyter.skills import find_skills

from .conftest import Caller

if TYPE_CHECKING:
    from pathlib import Path

    from loom_jupyter.tools.base import ToolContext
    from loom_jupyter.tools.registry import ToolRegistry

PLOT = "---\nname: plot-style\ndescription: Our team's plot style.\nallowed-tools: shell\n---\n"


@pytest.fixture
def skill(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The person's skill ``plot-style`` in ``~/.claude/skills`` (outside the notebook's
    folder), with a script beside its SKILL.md; its real path."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    folder = home / ".claude" / "skills" / "plot-style"
    (folder / "scripts").mkdir(parents=True)
    (folder / "SKILL.md").write_text(PLOT + "Use palette.py.\n")
    (folder / "scripts" / "palette.py").write_text("COLORS = ['#123456']\n")
    return folder.resolve()


@pytest.fixture
def with_skills(ctx: ToolContext, registry: ToolRegistry, skill: Path) -> Caller:
    """A caller whose context holds the skills found (``call``'s has none)."""
    return Caller(registry, dataclasses.replace(ctx, skills=find_skills(trusted=True)))


async def test_load_skill_returns_the_file_its_files_and_where_from(
    with_skills: Caller, skill: Path
) -> None:
    out = await with_skills("load_skill", name="plot-style")
    assert not out.is_error
    real = skill
    text = out.text_content
    assert text.startswith(f"Skill plot-style (user skill, {real}/SKILL.md)")
    assert PLOT + "Use palette.py." in text
    assert "allowed-tools are shown, not obeyed" in text
    assert "  scripts/palette.py  (21 bytes)" in text
    assert out.summary == f"loaded skill plot-style (user: {real})"


async def test_load_skill_of_an_unknown_or_unusable_skill_says_what_there_is(
    with_skills: Caller, ctx: ToolContext, call: Caller, tmp_path: Path
) -> None:
    out = await with_skills("load_skill", name="nope")
    assert out.is_error
    assert "There is no skill named 'nope'. The skills you can load: plot-style." in (
        out.text_content
    )
    repo = tmp_path / "repo"
    theirs = repo / ".claude" / "skills" / "theirs"
    theirs.mkdir(parents=True)
    (theirs / "SKILL.md").write_text("---\nname: theirs\ndescription: d\n---\n")
    from loom_jupyter.skills import project_skill_roots, read_skill_files

    files = read_skill_files(project_skill_roots(repo, repo), inside=repo.resolve(), base=repo)
    with_skills.ctx = dataclasses.replace(ctx, skills=find_skills(files, trusted=False))
    out = await with_skills("load_skill", name="theirs")
    assert out.is_error
    assert "cannot be used: needs trust" in out.text_content
    plain = await call("load_skill", name="plot-style")  # a context without skills
    assert plain.is_error
    assert "No skill can be loaded now." in plain.text_content


async def test_read_file_reads_inside_a_usable_skills_folder(
    with_skills: Caller, call: Caller, skill: Path
) -> None:
    script = skill / "scripts" / "palette.py"
    out = await with_skills("read_file", path=str(script))
    assert not out.is_error
    assert "COLORS = ['#123456']" in out.text_content
    assert out.summary == f"read {script} (the user skill plot-style)"
    ranged = await with_skills("read_file", path=str(script), start_line=1, end_line=1)
    assert "COLORS" in ranged.text_content
    refused = await call("read_file", path=str(script))  # no skills in this context
    assert refused.is_error
    assert "outside the notebook folder" in refused.text_content


async def test_read_file_keeps_its_guards_in_a_skill_folder(
    with_skills: Caller, skill: Path, tmp_path: Path
) -> None:
    real = skill
    (real / "blob.bin").write_bytes(b"\x00\x01\x02")
    binary = await with_skills("read_file", path=str(real / "blob.bin"))
    assert binary.is_error
    assert "binary" in binary.text_content
    (tmp_path / "secret.txt").write_text("outside")
    (real / "escape.txt").symlink_to(tmp_path / "secret.txt")
    escaped = await with_skills("read_file", path=str(real / "escape.txt"))
    assert escaped.is_error
    assert "outside" not in escaped.text_content.replace("outside the notebook", "")
    beside = await with_skills("read_file", path=str(real.parent / "other.md"))
    assert beside.is_error  # the skills folder itself is not a skill's folder
    big = real / "big.txt"
    big.write_text("x" * (with_skills.ctx.settings.max_file_bytes + 1))
    too_big = await with_skills("read_file", path=str(big))
    assert too_big.is_error
    assert "limit" in too_big.text_content
