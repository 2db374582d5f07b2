"""``%cowork skills`` on a real in-process IPython shell (DESIGN §15): every skill found,
with its source, folder and state, and the folder's trust deciding the project's."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from loom_jupyter.host.commands.folder import SKILL_HEADERS, skill_rows
from loom_jupyter.skills import find_skills

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from loom_jupyter.testing import FakeAnthropic

pytest_plugins = ["loom_jupyter.testing.pytest_plugin"]


def write_skill(folder: Path, front: str) -> Path:
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\n{front}\n---\nSteps.\n", encoding="utf-8")
    return folder.resolve()


@pytest.fixture
def notebook(tmp_path: Path) -> Path:
    """A notebook in ``project/analysis``; ``project`` holds ``.git``."""
    folder = tmp_path / "project" / "analysis"
    folder.mkdir(parents=True)
    (tmp_path / "project" / ".git").mkdir()
    return folder / "sales.ipynb"


@pytest.fixture
def cowork_notebook(notebook: Path) -> Path:
    return notebook


@pytest.fixture
def cowork_env(tmp_path: Path) -> dict[str, str]:
    return {"HOME": str(tmp_path / "home")}


def test_skills_lists_every_skill_and_follows_trust(
    cowork: Callable[[str], str], fake_anthropic: FakeAnthropic, notebook: Path, tmp_path: Path
) -> None:
    assert "No skills found" in cowork("skills")
    assert "%cowork skills" in cowork("skills --help")

    mine = write_skill(
        tmp_path / "home" / ".claude" / "skills" / "plot-style",
        "name: plot-style\ndescription: Our plot style.",
    )
    root = notebook.parents[1]
    theirs = write_skill(
        root / ".claude" / "skills" / "team-report",
        "name: team-report\ndescription: The weekly report.",
    )
    write_skill(root / ".agents" / "skills" / "broken", "name: Broken\ndescription: d")
    table = cowork("skills")
    assert "plot-style" in table
    assert str(mine) in table
    assert "team-report" in table
    assert str(theirs) in table
    assert "needs trust" in table
    assert "invalid: bad name 'Broken'" in table
    assert "Trusted" in cowork("trust --yes")
    trusted = cowork("skills")
    assert "needs trust" not in trusted
    assert trusted.count("usable") >= 2


def test_the_table_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    folder = write_skill(
        tmp_path / ".agents" / "skills" / "clean-sales",
        'name: clean-sales\ndescription: "Clean the \\e[31msales extract."',  # an escape
    )
    rows = skill_rows(find_skills(trusted=True))
    assert SKILL_HEADERS == ("name", "description", "source", "path", "state")
    assert rows == (
        ("clean-sales", "Clean the ␛[31msales extract.", "user", str(folder), "usable"),
    )
