"""The first minute in a real JupyterLab (issue 27, point 4; DESIGN §12, "The key").

The key field saves the key outside the notebook and the next message works with it; a
message sent without a key comes back to the message box and the status says ready; an
empty conversation suggests prompts built from the notebook's own variables; a person's
``%load_ext`` after the sidebar's auto-load shows Loom's banner; the panel opens by itself
once after install. The lab server's kernels share an ``XDG_CONFIG_HOME`` of their own
(``lab_harness``): a test that saves a key removes it again.
"""

from __future__ import annotations

import json
import stat
import urllib.request
from typing import TYPE_CHECKING

import pytest
from lab_harness import SIDEBAR_ID, LabPage, write_notebook
from playwright.sync_api import expect
from sidebar_page import (
    INPUT,
    STATUS,
    USER,
    open_chat,
    send,
    wait_answer,
    wait_kernel_idle,
    wait_state,
)

from loom_jupyter.apikey import KEY_FILE_NAME
from loom_jupyter.testing import FakeAnthropic

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from lab_harness import LabServer

pytestmark = pytest.mark.browser

KEY = "sk-ant-api03-BROWSERCANARY-" + "k9Wm" * 8
KEY_FIELD = '[data-loom="api-key"]'
KEY_CARD = '[data-loom="key-card"]'
GUIDE = '[data-loom="guide"]'
EXAMPLE = '[data-loom="example"]'
NOTEBOOK_TEXT = """(app) => JSON.stringify(app.shell.currentWidget.context.model.toJSON())"""
ALL_INPUT_VALUES = """() => Array.from(document.querySelectorAll('input, textarea'))
    .map((node) => node.value).join('\\n')"""


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        yield server


@pytest.fixture
def no_key(lab_server: LabServer) -> Iterator[Path]:
    """The kernels' key file: absent at the start, removed at the end."""
    path = lab_server.config_home / "loom" / KEY_FILE_NAME
    path.unlink(missing_ok=True)
    yield path
    path.unlink(missing_ok=True)


def base_url_cell(base_url: str) -> str:
    """The fake Messages API for the kernel's SDK, and no key anywhere in the notebook."""
    return f"import os\nos.environ['ANTHROPIC_BASE_URL'] = {base_url!r}"


def new_notebook(lab: LabPage, folder: Path, name: str, sources: list[str]) -> str:
    return write_notebook(folder, name, sources).relative_to(lab.server.root_dir).as_posix()


def test_the_key_field_keeps_the_key_out_of_the_page_and_the_notebook(
    lab: LabPage, notebook_dir: Path, fake: FakeAnthropic, no_key: Path
) -> None:
    path = new_notebook(lab, notebook_dir, "key.ipynb", [base_url_cell(fake.base_url)])
    panel = open_chat(lab, path)
    field = panel.locator(KEY_FIELD)
    expect(field).to_be_visible()  # the kernel said: no key
    assert field.get_attribute("type") == "password"
    field.fill(KEY)
    panel.locator('[data-loom="api-key-save"]').click()
    expect(field).to_have_value("")  # cleared at once, before the kernel answers
    expect(panel.locator(KEY_CARD)).to_be_hidden()  # the kernel has a key now
    assert stat.S_IMODE(no_key.stat().st_mode) == 0o600
    saved = panel.locator('[data-loom="notice"]', has_text="Key saved in")  # and where it went
    expect(saved).to_contain_text(f"{no_key} (readable by you only)")

    fake.add("Hello with the saved key.")
    send(panel, "hello")
    wait_answer(panel, "Hello with the saved key.")
    assert fake.message_requests[-1].headers.get("authorization") == f"Bearer {KEY}"

    assert KEY not in lab.page.content()
    assert KEY not in lab.page.evaluate(ALL_INPUT_VALUES)
    assert KEY not in lab.app_eval(NOTEBOOK_TEXT)
    lab.app_eval("async (app) => { await app.commands.execute('docmanager:save'); }")
    files = [p for p in notebook_dir.rglob("*") if p.is_file()]  # the .ipynb, .loom/ archive
    assert any(p.name == "key.ipynb" for p in files)
    assert KEY.encode() not in b"".join(p.read_bytes() for p in files)


def test_a_message_without_a_key_comes_back_and_the_status_is_ready(
    lab: LabPage, notebook_dir: Path, fake: FakeAnthropic, no_key: Path
) -> None:
    path = new_notebook(lab, notebook_dir, "unsent.ipynb", [base_url_cell(fake.base_url)])
    panel = open_chat(lab, path)
    send(panel, "what is in my namespace?")
    notice = panel.locator('[data-loom="notice"]', has_text="%cowork login")
    expect(notice.first).to_be_visible()
    expect(panel.locator(INPUT)).to_have_value("what is in my namespace?")  # back in the box
    wait_state(panel, "idle")
    expect(panel.locator(STATUS)).to_contain_text("ready")
    expect(panel.locator('[data-loom="queued"]')).to_have_count(0)
    expect(panel.locator(USER)).to_have_count(0)  # it never became a turn
    expect(panel.locator(KEY_FIELD)).to_be_visible()
    assert "%env" not in notice.first.inner_text()
    assert fake.message_requests == []


def test_an_empty_conversation_suggests_prompts_from_the_notebooks_variables(
    lab: LabPage, notebook_dir: Path, fake: FakeAnthropic, no_key: Path
) -> None:
    sales = (
        "import pandas as pd\n"
        "sales = pd.DataFrame({'month': ['Jan', 'Feb', 'Mar'], 'revenue': [3, 5, 4]})"
    )
    path = new_notebook(lab, notebook_dir, "guide.ipynb", [base_url_cell(fake.base_url), sales])
    panel = open_chat(lab, path)
    guide = panel.locator(GUIDE)
    expect(guide).to_be_visible()
    expect(guide).to_contain_text("/ for commands")
    expect(guide).to_contain_text("@ to mention")
    example = guide.locator(EXAMPLE, has_text="Plot `sales` by month")
    expect(example).to_be_visible()  # asked again once the cell that made `sales` ran
    expect(guide.locator(EXAMPLE, has_text="Describe `sales`")).to_be_visible()
    example.click()
    expect(panel.locator(INPUT)).to_have_value("Plot `sales` by month")
    expect(panel.locator(KEY_FIELD)).to_be_visible()  # and how to give the key


def test_load_ext_after_the_auto_load_shows_looms_banner(
    lab: LabPage, notebook_dir: Path, fake: FakeAnthropic
) -> None:
    path = new_notebook(lab, notebook_dir, "banner.ipynb", ["%load_ext loom_jupyter"])
    open_chat(lab, path)  # the sidebar loaded Loom first; then the cell ran
    out = lab.app_eval(
        """(app) => app.shell.currentWidget.content.widgets[0].outputArea.node.innerText"""
    )
    assert "loom: banner.ipynb" in out
    assert "approval:" in out
    assert "already loaded" not in out


def _put_setting(server: LabServer, raw: dict[str, object]) -> None:
    body = json.dumps({"raw": json.dumps(raw)}).encode()
    request = urllib.request.Request(
        server.url("lab/api/settings/loom-jupyter:sidebar"),
        data=body,
        method="PUT",
        headers={"Content-Type": "application/json", "Authorization": f"token {server.token}"},
    )
    urllib.request.urlopen(request, timeout=30).close()


OPENED_SETTING = """async (app) => {
    const settings = await app.serviceManager.settings.fetch('loom-jupyter:sidebar');
    return settings.settings?.opened ?? null;
}"""


def test_the_panel_opens_by_itself_once_after_install(
    fresh_lab: LabPage, notebook_dir: Path, lab_server: LabServer
) -> None:
    # A page of its own: the first run after install is a browser's first JupyterLab page.
    lab = fresh_lab
    path = new_notebook(lab, notebook_dir, "first.ipynb", [""])
    _put_setting(lab_server, {"opened": False})  # as just installed
    try:
        lab.boot(path)
        expect(lab.page.locator(f"#{SIDEBAR_ID}")).to_be_visible()  # nobody clicked its tab
        lab.page.wait_for_function(
            f"async () => ({OPENED_SETTING})(window.jupyterapp).then((v) => v === true)"
        )
        lab.boot(path)  # a new page and workspace: the panel stays closed from now on
        wait_kernel_idle(lab)  # long after the settings were read
        expect(lab.page.locator(f"#{SIDEBAR_ID}")).to_be_hidden()
    finally:
        _put_setting(lab_server, {"opened": True})
