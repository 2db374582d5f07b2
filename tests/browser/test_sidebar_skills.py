"""Agent Skills in the Loom sidebar, in a real JupyterLab (DESIGN §15, issue 42).

The person has a skill (in the server's ``XDG_CONFIG_HOME/loom/skills``, which its kernels
share) and the notebook's folder has one in ``.claude/skills``, untrusted. The sidebar's
``/`` completion offers ``/skills``; running it shows the table (name, description,
source, path, state: ``needs trust`` for the project's) and sends the model nothing. A
``load_skill`` call's tool card says which skill and from where, live and after a reload
(from the archive). Every wait is on a condition.
"""

from __future__ import annotations

import json
import shutil
from typing import TYPE_CHECKING, Any

import pytest
from lab_harness import LabPage, LabServer, write_notebook
from playwright.sync_api import expect
from sidebar_page import INPUT, USER, env_cell, open_chat, send, sidebar, wait_answer, wait_state

from loom_jupyter.testing import FakeAnthropic

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from playwright.sync_api import Locator

pytestmark = pytest.mark.browser

COMPLETIONS = '[data-loom="completions"]'
COMPLETION = '[data-loom="completion"]'
SKILLS_CARD = '[data-loom="command-result"][data-command="skills"]'
LOAD_CARD = '[data-loom="tool-card"][data-tool="load_skill"]'
PERSON = ("plot-style", "Our team's matplotlib look: palette, fonts, figure sizes.")
PROJECT = ("warehouse-sql", "How to query the analytics warehouse <b>read-only</b>.")


def write_skill(skills: Path, name: str, description: str) -> Path:
    folder = skills / name
    folder.mkdir(parents=True)
    front = f"---\nname: {name}\ndescription: {json.dumps(description)}\n---\n"
    (folder / "SKILL.md").write_text(front + "Use the palette in palette.json.\n")
    (folder / "palette.json").write_text('{"revenue": "#1b5e20"}\n')
    return folder.resolve()


@pytest.fixture
def person_skill(lab_server: LabServer) -> Iterator[Path]:
    """The person's skill, in the config home every kernel of the server reads; removed
    afterwards (other tests' prompts list no skill)."""
    skills = lab_server.config_home / "loom" / "skills"
    made = not skills.exists()
    folder = write_skill(skills, *PERSON)
    try:
        yield folder
    finally:
        shutil.rmtree(skills if made else folder)


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        yield server


def chat(lab: LabPage, folder: Path, fake: FakeAnthropic) -> Locator:
    path = write_notebook(folder, "skills.ipynb", [env_cell(fake.base_url)])
    return open_chat(lab, path.relative_to(lab.server.root_dir).as_posix())


def system_text(fake: FakeAnthropic) -> str:
    body: Any = fake.message_requests[-1].body
    system = body["system"]
    return system if isinstance(system, str) else "".join(b["text"] for b in system)


def test_slash_offers_skills_and_skills_lists_the_persons_and_the_projects(
    lab: LabPage, notebook_dir: Path, fake: FakeAnthropic, person_skill: Path
) -> None:
    project_skill = write_skill(notebook_dir / ".claude" / "skills", *PROJECT)
    panel = chat(lab, notebook_dir, fake)
    expect(panel.locator('[data-loom="trust"]')).to_have_attribute("data-status", "untrusted")

    box = panel.locator(INPUT)
    box.click()
    box.press_sequentially("/")
    items = panel.locator(COMPLETIONS).locator(COMPLETION)
    offered = items.filter(has_text="/skills")
    expect(offered).to_have_attribute("data-label", "skills")
    expect(offered).to_contain_text("the skills found")
    box.press_sequentially("sk")
    expect(items).to_have_count(1)
    box.press("Tab")
    expect(box).to_have_value("/skills ")
    box.press("Enter")

    card = panel.locator(SKILLS_CARD)
    table = card.locator("table")
    expect(table).to_have_count(1)  # markdown, rendered
    expect(table.locator("th")).to_have_text(["name", "description", "source", "path", "state"])
    rows = table.locator("tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.nth(0).locator("td")).to_have_text(
        [PERSON[0], PERSON[1], "user", str(person_skill), "usable"]
    )
    expect(rows.nth(1).locator("td")).to_have_text(
        [PROJECT[0], PROJECT[1], "project", str(project_skill), "needs trust"]
    )
    expect(card.locator("b")).to_have_count(0)  # a description's markup stays text
    expect(card).to_contain_text("needs the folder's trust")
    expect(panel.locator(USER)).to_have_count(0)  # the command was no message
    assert fake.message_requests == []


def test_a_loaded_skill_shows_on_its_tool_card_live_and_after_a_reload(
    lab: LabPage, notebook_dir: Path, fake: FakeAnthropic, person_skill: Path
) -> None:
    write_skill(notebook_dir / ".claude" / "skills", *PROJECT)  # untrusted: not offered
    load = {"type": "tool_use", "name": "load_skill", "input": {"name": PERSON[0]}}
    fake.add({"content": [{"type": "text", "text": "Loading our plot style."}, load]}, "Styled.")
    panel = chat(lab, notebook_dir, fake)

    send(panel, "Plot revenue our way")
    wait_answer(panel, "Styled.")

    said = f"loaded skill {PERSON[0]} (user: {person_skill})"
    card = panel.locator(LOAD_CARD)
    expect(card).to_have_attribute("data-state", "done")
    expect(card.locator("summary")).to_contain_text(said)
    expect(card).to_contain_text("Use the palette in palette.json.")  # the result, when opened
    system = system_text(fake)
    assert f"{PERSON[0]}: {PERSON[1]}" in system
    assert PROJECT[0] not in system

    lab.reload()  # the card again, from the archive
    panel = sidebar(lab)
    wait_state(panel, "idle")
    expect(panel.locator(LOAD_CARD).locator("summary")).to_contain_text(said)
