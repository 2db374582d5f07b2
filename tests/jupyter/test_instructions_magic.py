"""``%cowork instructions`` on a real in-process IPython shell, against the fake Messages API."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from loom_jupyter.testing import FakeAnthropic

pytest_plugins = ["loom_jupyter.testing.pytest_plugin"]


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
def cowork_env() -> dict[str, str]:
    return {"LOOM_INSTRUCTIONS_MAX_CHARS": "50"}


def test_instructions_shows_what_is_loaded_and_the_model_gets_it(
    cowork: Callable[[str], str], fake_anthropic: FakeAnthropic, notebook: Path
) -> None:
    assert "No project instructions" in cowork("instructions")
    assert "%cowork instructions" in cowork("instructions --help")

    root = notebook.parents[1]
    (root / "AGENTS.md").write_text("Plot with seaborn.\n", encoding="utf-8")
    (notebook.parent / "CLAUDE.md").write_text("Revenue is in EUR. " * 3, encoding="utf-8")
    (notebook.parent / ".loom").mkdir(exist_ok=True)
    (notebook.parent / ".loom" / "instructions.md").write_bytes(b"\x00\x01binary")
    untrusted = cowork("instructions")  # a folder not trusted yet: listed, nothing sent
    assert untrusted.count("not sent: the folder is not trusted") == 3
    assert "0 in the prompt" in untrusted
    assert "Trusted" in cowork("trust --yes")

    table = cowork("instructions")
    lines = table.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("file"))
    rows = lines[header + 2 :]  # after the header and its rule
    assert [row.split()[0] for row in rows] == [
        "AGENTS.md",
        "analysis/CLAUDE.md",
        "analysis/.loom/instructions.md",
        "total",
    ]
    assert "included" in rows[0]
    assert "cut: first 31" in rows[1]
    assert "skipped: a binary file" in rows[2]
    assert "76" in rows[3]
    assert "50 in the prompt" in rows[3]
    assert str(root) in table

    fake_anthropic.add("Noted.")
    answer = cowork("what currency?")
    system = fake_anthropic.message_requests[-1].body["system"][0]["text"]
    assert "Plot with seaborn." in system
    assert "Revenue is in EUR." in system
    assert "binary" not in system.split("# Project instructions")[1]
    assert "instructions_max_chars (50)" in answer  # the person is told of the cut
    assert "analysis/.loom/instructions.md was skipped" in answer
