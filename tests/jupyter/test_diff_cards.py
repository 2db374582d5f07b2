"""Notebook edits as compact diff cards in the panel (the cell's card is tested in a kernel)."""

from __future__ import annotations

from loom_jupyter.engine.events import ToolFinished
from loom_jupyter.host.services.panel_data import PanelData
from loom_jupyter.jupyter.cell.diffs import diff_html
from loom_jupyter.jupyter.panel.render import panel_html, panel_text
from loom_jupyter.tools.cells import CHANGE_MARK, cell_diff, change_of

EDIT = f"Edited cell a1 (at position 3, in turn 4). {CHANGE_MARK}{cell_diff('x = 1', 'x = <2>')}"


def finished(name: str, result: str, *, is_error: bool = False) -> ToolFinished:
    return ToolFinished("c1", name, f"{name} done", is_error, 7, {}, result)


def test_an_edit_becomes_a_card_with_its_diff_escaped() -> None:
    data = PanelData().apply(finished("edit_cell", EDIT))
    assert data.edits == (("edit_cell done", "@@ -1 +1 @@\n-x = 1\n+x = <2>"),)
    page = panel_html(data)
    assert 'data-loom="edit-card"' in page
    assert "+x = &lt;2&gt;" in page  # model text is never raw HTML
    assert "<2>" not in page
    assert "Notebook: edit_cell done" in panel_text(data)


def test_failed_calls_and_other_tools_make_no_card_and_only_the_last_five_stay() -> None:
    data = PanelData().apply(finished("edit_cell", "refused", is_error=True))
    data = data.apply(finished("run_python", "ok"))
    assert data.edits == ()
    for n in range(7):
        data = data.apply(ToolFinished(f"c{n}", "insert_cell", f"inserted {n}", False, n))
    assert [summary for summary, _ in data.edits] == [f"inserted {n}" for n in range(2, 7)]


def test_the_diff_is_found_and_drawn_line_by_line() -> None:
    diff = change_of(EDIT)
    assert diff is not None
    assert diff.splitlines()[1:] == ["-x = 1", "+x = <2>"]
    assert change_of("Inserted code cell b2 at position 1.") is None
    drawn = diff_html(diff)
    assert drawn.count("<span") == 3
    assert "#ffeef0" in drawn  # removed lines red
    assert "#e6ffed" in drawn  # added lines green
