"""The agent works on the open notebook (DESIGN §9) in a real JupyterLab and Notebook 7.

The fake Messages API scripts the model's cell tool calls; the page applies them to the
live notebook. Everything is driven and checked through the pinned ``data-loom``
attributes and the notebook model, and waited on by condition.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from lab_harness import LabPage, write_notebook
from playwright.sync_api import expect
from sidebar_page import (
    ANSWER_TIMEOUT_MS,
    USER,
    env_cell,
    kernel_run,
    open_chat,
    open_notebook7,
    run_all,
    send,
    wait_answer,
    wait_state,
)

from loom_jupyter.testing import FakeAnthropic

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from playwright.sync_api import Locator

pytestmark = pytest.mark.browser

CELLS = "(app) => app.shell.currentWidget.content.model.sharedModel.cells"
SOURCES = f"{CELLS}.map(c => c.getSource())"
IDS = f"{CELLS}.map(c => c.getId())"
METADATA = (
    "(app, i) => app.shell.currentWidget.content.model.sharedModel.cells[i]"
    ".getMetadata('loom') ?? null"
)
SOURCE_IS = (
    "([i, text]) => window.jupyterapp.shell.currentWidget.content.model.sharedModel"
    ".cells[i]?.getSource() === text"
)
UNDO = """(app) => {
    const notebook = app.shell.currentWidget.content;
    notebook.mode = 'command';
    return app.commands.execute('notebook:undo-cell-action');
}"""
AUTO = "%cowork approval auto"
ASK = "%cowork approval ask"


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        yield server


def tool(name: str, **input: Any) -> dict[str, Any]:
    return {"content": [{"type": "tool_use", "name": name, "input": input}]}


def notebook(lab: LabPage, folder: Path, fake: FakeAnthropic, *cells: str, mode: str = AUTO) -> str:
    path = write_notebook(folder, "edit.ipynb", [env_cell(fake.base_url), mode, *cells])
    return path.relative_to(lab.server.root_dir).as_posix()


def sources(lab: LabPage) -> list[str]:
    found: list[str] = lab.app_eval(SOURCES)
    return found


def ids(lab: LabPage) -> list[str]:
    found: list[str] = lab.app_eval(IDS)
    return found


def cell(lab: LabPage, index: int) -> Locator:
    return lab.page.locator(".jp-Notebook .jp-Cell").nth(index)


def wait_source(lab: LabPage, index: int, text: str) -> None:
    lab.page.wait_for_function(SOURCE_IS, arg=[index, text], timeout=ANSWER_TIMEOUT_MS)


def saved_sources(path: Path) -> list[str]:
    return ["".join(c["source"]) for c in json.loads(path.read_text())["cells"]]


def test_auto_edit_shows_a_diff_marks_the_cell_and_undoes_with_the_notebook(
    lab: LabPage, notebook_dir: Path, fake: FakeAnthropic
) -> None:
    panel = open_chat(lab, notebook(lab, notebook_dir, fake, "x = 1\nprint(x)"))
    target = ids(lab)[2]
    on_disk = saved_sources(notebook_dir / "edit.ipynb")
    fake.add(
        tool("read_notebook", history=0),
        tool("edit_cell", cell_id=target, source="x = 2\nprint(x)"),
        "Edited the cell.",
    )
    send(panel, "make x two")
    wait_answer(panel, "Edited the cell.")

    assert sources(lab)[2] == "x = 2\nprint(x)"
    diff = lab.page.locator(f'[data-loom="cell-diff"][data-cell-id="{target}"]')
    expect(diff).to_be_visible()
    expect(diff).to_contain_text("x = 2")
    # CodeMirror's unified merge view: the removed line above the line that replaces it
    expect(diff.locator(".cm-deletedChunk .cm-deletedLine")).to_have_text(["x = 1"])
    expect(diff.locator(".cm-line.cm-changedLine")).to_have_text(["x = 2"])
    expect(diff.locator(".loom-CellDiff-head")).to_contain_text("(+1 −1)")
    expect(cell(lab, 2).locator('[data-loom="cell-provenance"]')).to_be_visible()
    mark = lab.app_eval(METADATA, 2)
    assert mark["action"] == "edited"
    assert isinstance(mark["turn"], int)
    assert saved_sources(notebook_dir / "edit.ipynb") == on_disk  # never the file behind

    diff.locator('[data-loom="diff-dismiss"]').click()
    expect(diff).to_have_count(0)
    cell(lab, 2).locator(".jp-InputArea").click()  # select it, then undo in command mode
    lab.app_eval(UNDO)
    wait_source(lab, 2, "x = 1\nprint(x)")


def test_under_ask_accept_in_the_cell_applies_and_reject_changes_nothing(
    lab: LabPage, notebook_dir: Path, fake: FakeAnthropic
) -> None:
    path = notebook(lab, notebook_dir, fake, "y = 1", "z = 1", mode=ASK)
    panel = open_chat(lab, path)
    first, second = ids(lab)[2], ids(lab)[3]
    fake.add(
        tool("read_notebook", history=0),
        tool("edit_cell", cell_id=first, source="y = 10"),
        "Accepted one.",
    )
    send(panel, "bump y")
    diff = lab.page.locator(f'[data-loom="cell-diff"][data-cell-id="{first}"]')
    expect(diff).to_be_visible(timeout=ANSWER_TIMEOUT_MS)
    expect(diff).to_contain_text("y = 10")
    assert sources(lab)[2] == "y = 1"  # nothing applied while it asks
    diff.locator('[data-loom="diff-accept"]').click()
    wait_answer(panel, "Accepted one.")
    assert sources(lab)[2] == "y = 10"

    fake.add(tool("edit_cell", cell_id=second, source="z = 99"), "Rejected one.")
    send(panel, "bump z")
    diff = lab.page.locator(f'[data-loom="cell-diff"][data-cell-id="{second}"]')
    expect(diff).to_be_visible(timeout=ANSWER_TIMEOUT_MS)
    diff.locator('[data-loom="diff-reject"]').click()
    wait_answer(panel, "Rejected one.")
    assert sources(lab)[3] == "z = 1"
    card = panel.locator('[data-loom="tool-card"][data-tool="edit_cell"]').last
    expect(card).to_contain_text("rejected")
    expect(lab.page.locator('[data-loom="cell-diff"]')).to_have_count(0)


def test_fix_starts_a_turn_with_the_error_and_the_fix_edits_that_cell(
    lab: LabPage, notebook_dir: Path, fake: FakeAnthropic
) -> None:
    panel = open_chat(lab, notebook(lab, notebook_dir, fake, "result = 1 / 0"))
    broken = ids(lab)[2]
    fix = cell(lab, 2).locator('[data-loom="fix-error"]')
    expect(fix).to_be_visible()
    fake.add(tool("edit_cell", cell_id=broken, source="result = 1 / 1"), "Fixed it.")
    fix.click()
    wait_answer(panel, "Fixed it.")
    prompt = fake.message_requests[-2].body or {}
    asked = json.dumps(prompt["messages"][-1])
    assert broken in asked
    assert "ZeroDivisionError" in asked
    assert "result = 1 / 0" in asked
    assert sources(lab)[2] == "result = 1 / 1"
    lab.app_eval(
        "(app) => { const nb = app.shell.currentWidget.content; nb.activeCellIndex = 2;"
        " return app.commands.execute('notebook:run-cell'); }"
    )
    expect(fix).to_have_count(0, timeout=ANSWER_TIMEOUT_MS)  # the rerun no longer raises


def test_provenance_marker_jumps_to_its_turn_and_revert_undoes_the_turn(
    lab: LabPage, notebook_dir: Path, fake: FakeAnthropic
) -> None:
    panel = open_chat(lab, notebook(lab, notebook_dir, fake, "a = 1", "b = 2"))
    first, second = ids(lab)[2], ids(lab)[3]
    fake.add(
        tool("read_notebook", history=0),
        tool("edit_cell", cell_id=first, source="a = 100"),
        tool("insert_cell", source="c = 3", after_cell_id=second),
        "Two changes.",
    )
    send(panel, "change the notebook")
    wait_answer(panel, "Two changes.")
    assert sources(lab)[2:] == ["a = 100", "b = 2", "c = 3"]

    lab.page.locator('[data-loom="cell-diff"] [data-loom="diff-dismiss"]').first.click()
    marker = cell(lab, 4).locator('[data-loom="cell-provenance"]')
    expect(marker).to_be_visible()
    marker.click()
    turn = lab.app_eval(METADATA, 4)["turn"]
    expect(panel.locator(f'{USER}[data-turn="{turn}"]')).to_be_in_viewport()

    revert = panel.locator(f'[data-loom="revert-turn"][data-turn="{turn}"]')
    revert.click()
    lab.page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.content.model.sharedModel.cells.length === 4",
        timeout=ANSWER_TIMEOUT_MS,
    )
    assert sources(lab)[2:] == ["a = 1", "b = 2"]


def test_a_revert_refuses_when_the_person_changed_the_cell_since(
    lab: LabPage, notebook_dir: Path, fake: FakeAnthropic
) -> None:
    panel = open_chat(lab, notebook(lab, notebook_dir, fake, "k = 1"))
    target = ids(lab)[2]
    fake.add(
        tool("read_notebook", history=0), tool("edit_cell", cell_id=target, source="k = 2"), "Ok."
    )
    send(panel, "set k")
    wait_answer(panel, "Ok.")
    lab.app_eval(
        "(app) => app.shell.currentWidget.content.model.sharedModel.cells[2]"
        ".setSource('k = 2  # and mine')"
    )
    panel.locator('[data-loom="revert-turn"]').last.click()
    notice = panel.get_by_text("was not reverted")
    expect(notice).to_be_visible(timeout=ANSWER_TIMEOUT_MS)
    expect(notice).to_contain_text(target)
    assert sources(lab)[2] == "k = 2  # and mine"


def test_an_edit_lands_while_the_person_types_in_another_cell(
    lab: LabPage, notebook_dir: Path, fake: FakeAnthropic
) -> None:
    panel = open_chat(lab, notebook(lab, notebook_dir, fake, "p = 1", "q = 1"))
    target = ids(lab)[2]
    fake.add(
        tool("read_notebook", history=0),
        {**tool("edit_cell", cell_id=target, source="p = 2"), "delay": 0.2},
        "Done while you typed.",
    )
    send(panel, "set p")
    editor = cell(lab, 3).locator(".jp-InputArea-editor")
    editor.click()
    lab.page.keyboard.press("End")
    lab.page.keyboard.type("  # typing here", delay=20)
    wait_answer(panel, "Done while you typed.")
    assert sources(lab)[2] == "p = 2"
    lab.page.keyboard.type(" and more", delay=10)
    wait_source(lab, 3, "q = 1  # typing here and more")


def test_a_300_cell_notebook_reads_and_edits(
    lab: LabPage, notebook_dir: Path, fake: FakeAnthropic
) -> None:
    many = [f"v{n} = {n}\nprint(v{n})" for n in range(300)]
    panel = open_chat(lab, notebook(lab, notebook_dir, fake, *many))
    target = ids(lab)[252]
    fake.add(
        tool("read_notebook", include_outputs=True, history=0),
        tool("edit_cell", cell_id=target, source="v250 = 'edited'"),
        "Edited one of three hundred.",
    )
    send(panel, "edit cell 250")
    wait_answer(panel, "Edited one of three hundred.")
    assert sources(lab)[252] == "v250 = 'edited'"
    read = fake.message_requests[1].body or {}
    assert "302 cells" in json.dumps(read["messages"])


def test_notebook7_accept_reject_and_auto_in_the_cell(
    fresh_lab: LabPage, notebook_dir: Path, fake: FakeAnthropic
) -> None:
    lab = fresh_lab  # a page of its own: Notebook 7 is another app than the shared JupyterLab
    path = notebook(lab, notebook_dir, fake, "w = 1", "v = 1", mode=ASK)
    panel = open_notebook7(lab, path)
    run_all(lab)
    wait_state(panel, "idle")
    first, second = ids(lab)[2], ids(lab)[3]

    fake.add(tool("edit_cell", cell_id=first, source="w = 7"), "Seven.")
    send(panel, "make w seven")
    diff = lab.page.locator(f'[data-loom="cell-diff"][data-cell-id="{first}"]')
    expect(diff).to_be_visible(timeout=ANSWER_TIMEOUT_MS)
    diff.locator('[data-loom="diff-accept"]').click()
    wait_answer(panel, "Seven.")
    assert sources(lab)[2] == "w = 7"

    fake.add(tool("edit_cell", cell_id=second, source="v = 0"), "Not zero then.")
    send(panel, "zero v")
    diff = lab.page.locator(f'[data-loom="cell-diff"][data-cell-id="{second}"]')
    expect(diff).to_be_visible(timeout=ANSWER_TIMEOUT_MS)
    diff.locator('[data-loom="diff-reject"]').click()
    wait_answer(panel, "Not zero then.")
    assert sources(lab)[3] == "v = 1"

    kernel_run(lab, "%cowork approval auto")
    fake.add(tool("edit_cell", cell_id=second, source="v = 2"), "Two, at once.")
    send(panel, "make v two")
    wait_answer(panel, "Two, at once.")
    assert sources(lab)[3] == "v = 2"
    applied = lab.page.locator(f'[data-loom="cell-diff"][data-cell-id="{second}"]')
    expect(applied.locator('[data-loom="diff-dismiss"]')).to_be_visible()
