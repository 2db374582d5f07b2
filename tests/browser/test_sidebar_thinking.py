"""The sidebar's thinking block and its thinking / effort controls, in a real JupyterLab.

The fake Messages API streams signed thinking (``testing/fake_thinking.py``); the kernel
asks for it only once thinking is on, which the footer's control turns on here (the
default model, ``claude-sonnet-5-5``, takes adaptive thinking and every effort level).
Every wait is on a condition; whether the block streamed is read from a
MutationObserver's record of its ``data-state`` changes, not from a moment in time.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import pytest
from lab_harness import LabPage, write_notebook
from playwright.sync_api import expect
from sidebar_page import (
    ASSISTANT,
    KERNEL_TIMEOUT_MS,
    env_cell,
    kernel_run,
    open_chat,
    send,
    sidebar,
    wait_answer,
    wait_state,
)

from loom_jupyter.testing import FakeAnthropic

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from playwright.sync_api import Locator

pytestmark = pytest.mark.browser

THINKING = '[data-loom="thinking"]'
TOGGLE = '[data-loom="thinking-toggle"]'
EFFORT = '[data-loom="effort"]'
THOUGHT = "First I compare <b>a</b> & b, then I answer. THOUGHT-END"
# Records every data-state change of a thinking block (old value -> new value).
WATCH_THINKING = """() => {
    window.__loomThinking = [];
    const root = document.querySelector('[data-loom="sidebar"]');
    const observer = new MutationObserver((records) => {
        for (const r of records) {
            if (r.target.dataset?.loom === 'thinking' && r.attributeName === 'data-state') {
                window.__loomThinking.push(`${r.oldValue}->${r.target.dataset.state}`);
            }
        }
    });
    observer.observe(root, {
        subtree: true, attributes: true, attributeOldValue: true,
        attributeFilter: ['data-state'],
    });
    (window.__loomObservers ??= []).push(observer);  // the shared page's reset ends it
}"""


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        yield server


def chat(lab: LabPage, folder: Path, fake: FakeAnthropic) -> Locator:
    path = write_notebook(folder, "thinking.ipynb", [env_cell(fake.base_url)])
    return open_chat(lab, path.relative_to(lab.server.root_dir).as_posix())


def kernel_options_once(lab: LabPage, *wanted: str) -> str:
    """``%cowork effort``'s answer once it holds every piece of ``wanted``, or its last answer
    after KERNEL_TIMEOUT_MS. A control's ``set_options`` reaches the kernel on the sidebar's
    comm, beside (not before) the page's next execute request, so it may land after it."""
    deadline = time.monotonic() + KERNEL_TIMEOUT_MS / 1000
    while True:
        shown = kernel_run(lab, "get_ipython().run_line_magic('cowork', 'effort')")
        if all(piece in shown for piece in wanted) or time.monotonic() > deadline:
            return shown
        time.sleep(0.1)


def is_open(block: Locator) -> bool:
    opened: bool = block.evaluate("(node) => node.open")
    return opened


def test_thinking_streams_collapsed_and_the_controls_set_the_options(
    lab: LabPage, notebook_dir: Path, fake: FakeAnthropic
) -> None:
    fake.add(
        {
            "content": [
                {"type": "redacted_thinking"},
                {"type": "thinking", "thinking": THOUGHT},
                {"type": "text", "text": "The answer is b. ANSWER-END"},
            ]
        }
    )
    panel = chat(lab, notebook_dir, fake)
    toggle, effort = panel.locator(TOGGLE), panel.locator(EFFORT)

    # The footer shows the kernel's options: thinking off, effort default, both usable.
    expect(toggle).not_to_be_checked()
    expect(toggle).to_be_enabled()
    expect(effort).to_have_value("default")
    expect(effort).to_be_enabled()

    # Each control sends set_options; the kernel's `options` message is what they show.
    toggle.check()
    expect(toggle).to_be_checked()
    effort.select_option("low")
    expect(effort).to_have_value("low")
    shown = kernel_options_once(lab, "Thinking: on (adaptive)", "Effort: low.")
    assert "Thinking: on (adaptive)" in shown
    assert "Effort: low." in shown

    lab.page.evaluate(WATCH_THINKING)
    send(panel, "Which is larger?")
    wait_answer(panel, "ANSWER-END")

    # The request carried what the controls set.
    body = fake.message_requests[-1].body or {}
    assert body.get("thinking") == {"type": "adaptive"}
    assert body.get("output_config") == {"effort": "low"}

    # One block, before the answer, streamed then done, collapsed.
    block = panel.locator(THINKING)
    expect(block).to_have_count(1)
    expect(block).to_have_attribute("data-state", "done")
    assert "streaming->done" in lab.page.evaluate("window.__loomThinking")
    expect(block.locator("summary")).to_have_text("thinking")
    order = panel.locator(f"{THINKING}, {ASSISTANT}").evaluate_all(
        "(nodes) => nodes.map((n) => n.dataset.loom)"
    )
    assert order == ["thinking", "message"]
    assert not is_open(block)
    expect(block.get_by_text("THOUGHT-END")).to_be_hidden()

    # A click opens it: plain text (the tag shows as text), and the encrypted part is named.
    block.locator("summary").click()
    assert is_open(block)
    text = block.locator('[data-loom="thinking-text"]')
    expect(text).to_be_visible()
    expect(text).to_have_text(THOUGHT)
    expect(block.locator("b")).to_have_count(0)
    expect(block).to_have_attribute("data-redacted", "true")
    expect(block.get_by_text("encrypted by the API")).to_be_visible()

    # %cowork effort changes it too, and the footer follows.
    kernel_run(lab, "get_ipython().run_line_magic('cowork', 'effort default')")
    expect(effort).to_have_value("default")

    # A reloaded page shows the archived thinking, collapsed, before its answer.
    lab.reload()
    panel = sidebar(lab)
    wait_state(panel, "idle")
    expect(panel.locator(ASSISTANT)).to_have_text(["The answer is b. ANSWER-END"])
    block = panel.locator(THINKING)
    expect(block).to_have_count(1)
    expect(block).to_have_attribute("data-state", "done")
    expect(block).to_have_attribute("data-redacted", "true")
    assert not is_open(block)
    block.locator("summary").click()
    expect(block.locator('[data-loom="thinking-text"]')).to_have_text(THOUGHT)
    expect(panel.locator(TOGGLE)).to_be_checked()
    expect(panel.locator(EFFORT)).to_have_value("default")
