"""Agent Skills (DESIGN §15) on real folders: found, checked, settled by name, offered.

The person's folders come from ``HOME`` and ``XDG_CONFIG_HOME`` (set per test); the
project's from a real repository in ``tmp_path``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from loom_jupyter.skills import (
    LISTED_FILES_MAX,
    SKILL_MAX_BYTES,
    SkillSet,
    find_skills,
    person_skill_roots,
    project_skill_roots,
    read_skill_files,
    skill_text,
    skills_block,
)

if TYPE_CHECKING:
    from pathlib import Path

    from loom_jupyter.folders import FolderFile
    from loom_jupyter.skills import Skill


def write_skill(
    parent: Path,
    folder: str,
    name: str | None = None,
    description: str = "Does a thing.",
    *,
    extra: str = "",
    body: str = "# Steps\n\n1. Do it.\n",
) -> Path:
    """A skill folder under ``parent`` holding SKILL.md (``name`` defaults to the folder's)."""
    where = parent / folder
    where.mkdir(parents=True, exist_ok=True)
    front = f"name: {name or folder}\ndescription: {description}\n{extra}"
    (where / "SKILL.md").write_text(f"---\n{front}---\n{body}", encoding="utf-8")
    return where


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The person's home and config folder, both in the test's tmp_path."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "xdg"))
    return home


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A project: ``repo`` holds ``.git``; the notebook is in ``repo/analysis``."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "analysis").mkdir()
    return root


def project_files(repo: Path) -> tuple[FolderFile, ...]:
    roots = project_skill_roots(repo, repo / "analysis")
    return read_skill_files(roots, inside=repo.resolve(), base=repo)


def by_name(found: SkillSet) -> dict[str, Skill]:
    return {s.name: s for s in found.skills}


def test_the_persons_folders_honour_xdg_and_home(home: Path) -> None:
    assert person_skill_roots() == (
        home / "xdg" / "loom" / "skills",
        home / ".claude" / "skills",
        home / ".agents" / "skills",
    )


def test_skills_are_found_in_every_folder(home: Path, repo: Path) -> None:
    write_skill(home / "xdg" / "loom" / "skills", "plot-style")
    write_skill(home / ".claude" / "skills", "warehouse")
    write_skill(home / ".agents" / "skills", "clean-sales")
    write_skill(repo / ".claude" / "skills", "team-report")
    write_skill(repo / "analysis" / ".agents" / "skills", "local-notes")
    (repo / ".claude" / "skills" / "not-a-skill").mkdir()  # no SKILL.md: not a skill
    found = find_skills(project_files(repo), trusted=True)
    assert [(s.name, s.source, s.status) for s in found.skills] == [
        ("plot-style", "user", "usable"),
        ("warehouse", "user", "usable"),
        ("clean-sales", "user", "usable"),
        ("local-notes", "project", "usable"),  # nearest folder first
        ("team-report", "project", "usable"),
    ]
    assert by_name(found)["team-report"].folder == (repo / ".claude/skills/team-report").resolve()


def test_project_skills_need_trust(home: Path, repo: Path) -> None:
    write_skill(repo / ".claude" / "skills", "team-report")
    found = find_skills(project_files(repo), trusted=False)
    (skill,) = found.skills
    assert (skill.status, skill.state, skill.usable) == ("needs-trust", "needs trust", False)
    assert found.usable == ()
    assert found.get("team-report") is None
    assert skills_block(found) == ""


def test_the_persons_skill_wins_over_the_projects(home: Path, repo: Path) -> None:
    mine = write_skill(home / ".claude" / "skills", "plot-style", description="Mine.")
    write_skill(repo / ".claude" / "skills", "plot-style", description="The team's.")
    write_skill(repo / ".agents" / "skills", "other-folder", name="plot-style")
    found = find_skills(project_files(repo), trusted=True)
    winner, *shadowed = found.skills
    assert (winner.source, winner.description, winner.status) == ("user", "Mine.", "usable")
    assert [s.status for s in shadowed] == ["shadowed", "shadowed"]
    assert all(str(mine.resolve()) in s.reason for s in shadowed)
    assert found.get("plot-style") == winner
    assert "shadowed: the user skill in" in shadowed[0].state


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("no front matter at all\n", "no front matter"),
        ("---\nname: x\ndescription: y\n", "no closing --- line"),
        ("---\nname: [unclosed\n---\n", "front matter: not valid YAML"),
        ("---\n- a list\n---\n", "not a mapping"),
        ("---\ndescription: What it does.\n---\n", "no name"),
        ("---\nname: Plot Style\ndescription: d\n---\n", "bad name 'Plot Style'"),
        ("---\nname: " + "a" * 65 + "\ndescription: d\n---\n", "at most 64 characters"),
        ("---\nname: ok-name\n---\n", "no description"),
        ("---\nname: ok-name\ndescription: [1, 2]\n---\n", "description is not text"),
        ("---\nname: ok-name\ndescription: " + "d" * 1025 + "\n---\n", "longer than 1,024"),
        ("---\na: &x [1]\nb: *x\nname: n\ndescription: d\n---\n", "anchors and aliases"),
    ],
)
def test_invalid_skills_say_why(home: Path, text: str, reason: str) -> None:
    folder = home / ".claude" / "skills" / "broken"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(text, encoding="utf-8")
    (skill,) = find_skills(trusted=True).skills
    assert skill.status == "invalid"
    assert reason in skill.reason
    assert skill.state.startswith("invalid: ")
    assert skill.name in ("broken", "ok-name")


def test_not_utf8_is_invalid(home: Path) -> None:
    folder = home / ".claude" / "skills" / "latin"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_bytes(b"---\nname: latin\ndescription: caf\xe9\n---\n")
    (skill,) = find_skills(trusted=True).skills
    assert "not UTF-8" in skill.reason


def test_an_oversized_skill_is_refused_by_its_size(home: Path) -> None:
    folder = write_skill(home / ".claude" / "skills", "huge")
    with (folder / "SKILL.md").open("ab") as handle:
        handle.truncate(SKILL_MAX_BYTES + 1)  # sparse: its size alone refuses it
    (skill,) = find_skills(trusted=True).skills
    assert skill.status == "invalid"
    assert "larger than 256 KiB" in skill.reason
    assert skill.file is not None
    assert skill.file.data is None
    write_skill(home / ".claude" / "skills", "just-fits", body="x" * (SKILL_MAX_BYTES - 200))
    assert find_skills(trusted=True).get("just-fits") is not None


def test_a_skill_file_linking_out_of_its_folder_is_not_read(home: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text("---\nname: stolen\ndescription: secret text\n---\n")
    folder = home / ".claude" / "skills" / "sneaky"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").symlink_to(secret)
    (skill,) = find_skills(trusted=True).skills
    assert skill.status == "invalid"
    assert "a link out of" in skill.reason
    assert skill.file is not None
    assert skill.file.data is None
    assert "secret text" not in skill_text(skill)


def test_a_link_inside_the_folder_is_read(home: Path) -> None:
    folder = home / ".claude" / "skills" / "linked"
    folder.mkdir(parents=True)
    (folder / "real.md").write_text("---\nname: linked\ndescription: Inside.\n---\n")
    (folder / "SKILL.md").symlink_to(folder / "real.md")
    assert find_skills(trusted=True).get("linked") is not None


def test_a_project_skill_folder_linking_out_of_the_project_is_not_read(
    home: Path, repo: Path, tmp_path: Path
) -> None:
    outside = write_skill(tmp_path / "elsewhere", "outside")
    (repo / ".claude" / "skills").mkdir(parents=True)
    (repo / ".claude" / "skills" / "outside").symlink_to(outside)
    (repo / ".agents").mkdir()
    (repo / ".agents" / "skills").symlink_to(tmp_path / "elsewhere")
    assert project_files(repo) == ()


def test_the_order_is_fixed_whatever_the_folder_listing(home: Path) -> None:
    for name in ("zeta", "alpha", "mid-one"):
        write_skill(home / ".claude" / "skills", name)
    found = find_skills(trusted=True)
    assert [s.name for s in found.skills] == ["alpha", "mid-one", "zeta"]
    assert found == find_skills(trusted=True)


def test_the_block_lists_usable_skills_by_name_and_stays_the_same(home: Path) -> None:
    write_skill(home / ".agents" / "skills", "b-skill", description="Second\n  one.")
    write_skill(home / ".claude" / "skills", "a-skill", description="First one.")
    write_skill(home / ".claude" / "skills", "broken", name="Bad Name")
    block = skills_block(find_skills(trusted=True))
    lines = block.splitlines()
    assert lines[1:] == ["a-skill: First one.", "b-skill: Second one."]
    assert "load_skill" in lines[0]
    assert skills_block(find_skills(trusted=True)) == block  # byte for byte, turn after turn
    assert skills_block(SkillSet()) == ""
    assert skills_block([]) == ""


def test_skill_text_is_the_whole_file_and_its_other_files(home: Path) -> None:
    folder = write_skill(
        home / ".claude" / "skills",
        "plot-style",
        extra="allowed-tools: shell\n",
        body="Use the team palette.\n",
    )
    (folder / "scripts").mkdir()
    (folder / "scripts" / "palette.py").write_text("COLORS = []\n")
    (folder / "reference.md").write_text("x" * 1234)
    (folder / ".hidden").mkdir()
    (folder / ".hidden" / "skip.txt").write_text("no")
    (folder / "outside-link").symlink_to("/etc/hostname")
    skill = find_skills(trusted=True).get("plot-style")
    assert skill is not None
    assert skill.keys == ("allowed-tools",)
    text = skill_text(skill)
    real = folder.resolve()
    assert text.startswith(f"Skill plot-style (user skill, {real}/SKILL.md)")
    assert "allowed-tools are shown, not obeyed" in text
    assert "---\nname: plot-style\ndescription: Does a thing.\nallowed-tools: shell\n---\n" in text
    assert "Use the team palette." in text
    assert "  reference.md  (1,234 bytes)" in text
    assert "  scripts/palette.py  (12 bytes)" in text
    assert "skip.txt" not in text
    assert "outside-link" not in text
    assert f"read_file at {real}/NAME" in text


def test_skill_text_lists_a_bounded_number_of_files(home: Path) -> None:
    folder = write_skill(home / ".claude" / "skills", "many")
    for i in range(LISTED_FILES_MAX + 5):
        (folder / f"f{i:04}.txt").write_text("")
    skill = find_skills(trusted=True).get("many")
    assert skill is not None
    text = skill_text(skill)
    assert text.count(" bytes)") == LISTED_FILES_MAX
    assert "... and 5 more not listed" in text


def test_a_skill_with_no_other_files_says_so(home: Path) -> None:
    write_skill(home / ".claude" / "skills", "alone")
    skill = find_skills(trusted=True).get("alone")
    assert skill is not None
    assert skill_text(skill).endswith("It has no other files.")


def test_holding_is_only_inside_a_usable_skill(home: Path, repo: Path) -> None:
    mine = write_skill(home / ".claude" / "skills", "mine").resolve()
    theirs = write_skill(repo / ".claude" / "skills", "theirs").resolve()
    found = find_skills(project_files(repo), trusted=False)
    assert found.holding(mine / "notes.md") is not None
    assert found.holding(mine) is None
    assert found.holding(theirs / "notes.md") is None  # needs trust
    assert found.holding(mine.parent / "other" / "x") is None


def test_no_skill_folders_no_skills(home: Path) -> None:
    assert find_skills(trusted=True) == SkillSet()
    (home / ".claude" / "skills").mkdir(parents=True)
    assert find_skills(trusted=True).skills == ()
