"""A cloned folder's skills are part of what it asks for (DESIGN §12, §15).

The real trust store under the test's own ``XDG_CONFIG_HOME``; a cloned repository with a
project skill. Until the person trusts the folder its skills are listed, hashed and
``needs trust``; a changed skill asks again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from loom_jupyter.trust import decide, folder_trust, read_request, skills_for

if TYPE_CHECKING:
    from pathlib import Path

SKILL = "---\nname: team-report\ndescription: How we write the weekly report.\n---\nRun it.\n"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cloned repository whose only request is a skill; the person has none."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    root = tmp_path / "cloned"
    (root / ".git").mkdir(parents=True)
    (root / "analysis").mkdir()
    skill = root / ".claude" / "skills" / "team-report"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(SKILL)
    return root


def test_a_project_skill_is_asked_for_listed_and_hashed(repo: Path) -> None:
    request = read_request(repo / "analysis" / "sales.ipynb")
    assert request.asks
    assert [f.name for f in request.skills] == [".claude/skills/team-report/SKILL.md"]
    assert request.skills[0].data == SKILL.encode()
    assert request.lines() == [
        "skill team-report: .claude/skills/team-report/SKILL.md",
        "  How we write the weekly report.",
    ]
    report = folder_trust(repo / "analysis" / "sales.ipynb").report()
    assert "  - skill team-report: .claude/skills/team-report/SKILL.md" in report
    assert "    How we write the weekly report." in report
    assert "skills are not offered" in report


def test_untrusted_project_skills_are_never_usable(repo: Path) -> None:
    notebook = repo / "analysis" / "sales.ipynb"
    trust = folder_trust(notebook)
    assert trust.status == "untrusted"
    found = skills_for(trust)
    assert [s.state for s in found.skills] == ["needs trust"]
    assert found.usable == ()
    decide(notebook, "trust", shown=trust.request.digest)
    trusted = folder_trust(notebook)
    assert trusted.status == "trusted"
    assert [s.name for s in skills_for(trusted).usable] == ["team-report"]


def test_a_changed_skill_asks_again(repo: Path) -> None:
    notebook = repo / "analysis" / "sales.ipynb"
    decide(notebook, "trust", shown=read_request(notebook).digest)
    assert folder_trust(notebook).status == "trusted"
    (repo / ".claude" / "skills" / "team-report" / "SKILL.md").write_text(SKILL + "Also rm -rf.\n")
    changed = folder_trust(notebook)
    assert changed.status == "changed"
    assert skills_for(changed).usable == ()
    (repo / ".agents" / "skills" / "new-one").mkdir(parents=True)
    (repo / ".agents" / "skills" / "new-one" / "SKILL.md").write_text(
        "---\nname: new-one\ndescription: d\n---\n"
    )
    assert read_request(notebook).digest != changed.request.digest  # a new skill counts too


def test_the_skills_offered_are_the_bytes_that_were_hashed(repo: Path) -> None:
    notebook = repo / "analysis" / "sales.ipynb"
    decide(notebook, "trust", shown=read_request(notebook).digest)
    trust = folder_trust(notebook)
    (repo / ".claude" / "skills" / "team-report" / "SKILL.md").write_text(
        "---\nname: team-report\ndescription: Swapped after the check.\n---\n"
    )
    skill = skills_for(trust).get("team-report")
    assert skill is not None
    assert skill.description == "How we write the weekly report."
    assert skill.body() == SKILL


def test_an_invalid_project_skill_is_shown_with_why(repo: Path) -> None:
    broken = repo / ".agents" / "skills" / "broken"
    broken.mkdir(parents=True)
    (broken / "SKILL.md").write_text("---\nname: Broken One\ndescription: d\n---\n")
    lines = read_request(repo / "analysis" / "sales.ipynb").lines()
    assert any(
        line.startswith("skill file .agents/skills/broken/SKILL.md cannot be used: bad name")
        for line in lines
    )


def test_a_folder_without_skills_hashes_as_before(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    (root / ".git").mkdir(parents=True)
    (root / "AGENTS.md").write_text("Be brief.")
    before = read_request(root / "nb.ipynb").digest
    (root / ".claude" / "skills").mkdir(parents=True)  # an empty skills folder asks nothing
    assert read_request(root / "nb.ipynb").digest == before
