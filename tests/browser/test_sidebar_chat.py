"""The Loom chat sidebar in a real JupyterLab, against the fake Messages API.

One JupyterLab server for the session, one JupyterLab page for the module, a fresh notebook
(and kernel) per test; everything is driven through the pinned ``data-loom`` attributes
and waited on by condition.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
from typing import TYPE_CHECKING

import pytest
from lab_harness import LabPage, write_notebook
from playwright.sync_api import expect
from sidebar_page import (
    ANSWER_TIMEOUT_MS,
    ASSISTANT,
    STATUS,
    STOP,
    USER,
    env_cell,
    kernel_run,
    open_chat,
    send,
    sidebar,
    wait_answer,
    wait_kernel_idle,
    wait_state,
)

from loom_jupyter.archive import Archive, archive_path_for
from loom_jupyter.messages import TurnDraft
from loom_jupyter.testing import FakeAnthropic

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from playwright.sync_api import Error, Locator

pytestmark = pytest.mark.browser

MARKDOWN = (
    "Here is **bold text** and a list:\n\n- first item\n- second item\n\n"
    "See [the notes](notes.md).\n\n"
    "```python\nanswer = 6 * 7\n```\n\n" + " ".join(f"word{n}" for n in range(120)) + " THE-END"
)
# Every way a model answer could try to run script in the page.
HOSTILE = (
    "Look <img src=x onerror=\"window.__loomPwned='img'\"> here.\n\n"
    "<script>window.__loomPwned = 'script'</script>\n\n"
    "[click me](javascript:window.__loomPwned='link') and "
    "<a href=\"javascript:window.__loomPwned='a'\">raw link</a>\n\n"
    "<svg onload=\"window.__loomPwned='svg'\"></svg>\n\n"
    "<iframe src=\"javascript:window.__loomPwned='frame'\"></iframe>\n\n"
    "SAFE-END"
)
# Counts distinct text lengths an assistant message shows while it streams.
WATCH_STREAM = """() => {
    window.__loomLengths = new Set();
    const root = document.querySelector('[data-loom="sidebar"]');
    const observer = new MutationObserver(() => {
        const node = root.querySelector('[data-role="assistant"][data-streaming="true"]');
        if (node) { window.__loomLengths.add(node.textContent.length); }
    });
    observer.observe(root, {subtree: true, childList: true, characterData: true, attributes: true});
    (window.__loomObservers ??= []).push(observer);  // the shared page's reset ends it
}"""
RELEASE_CELL = (
    "import os, time\n"
    "for _ in range(1200):  # until the test releases it (two minutes at most)\n"
    "    if os.path.exists('release.flag'):\n"
    "        break\n"
    "    time.sleep(0.1)\n"
    "print('cell finished')"
)


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        yield server


def new_notebook(lab: LabPage, folder: Path, name: str, sources: list[str]) -> str:
    path = write_notebook(folder, name, sources)
    return path.relative_to(lab.server.root_dir).as_posix()


def chat(
    lab: LabPage, folder: Path, fake: FakeAnthropic, *cells: str, name: str = "chat.ipynb"
) -> Locator:
    return open_chat(lab, new_notebook(lab, folder, name, [env_cell(fake.base_url), *cells]))


def test_send_streams_rendered_markdown_and_inserts_code(
    lab: LabPage, notebook_dir: Path, fake: FakeAnthropic
) -> None:
    fake.add({"content": [{"type": "text", "text": MARKDOWN}], "delay": 0.03})
    panel = chat(lab, notebook_dir, fake)
    lab.page.evaluate(WATCH_STREAM)

    send(panel, "Show me some markdown")

    expect(panel.locator(USER)).to_have_text(["Show me some markdown"])
    message = wait_answer(panel, "THE-END")
    assert lab.page.evaluate("window.__loomLengths.size") >= 2  # painted while streaming
    expect(message.locator("strong", has_text="bold text")).to_be_visible()
    expect(message.locator("li")).to_have_text(["first item", "second item"])
    expect(message.get_by_text("**bold text**")).to_have_count(0)
    expect(message.locator("pre code")).to_have_text("answer = 6 * 7")
    wait_state(panel, "idle")

    message.locator('[data-loom="insert-cell"]').click()
    cells = lab.app_eval(
        "(app) => app.shell.currentWidget.content.model.sharedModel.cells.map(c => c.getSource())"
    )
    assert "answer = 6 * 7" in cells

    (notebook_dir / "notes.md").write_text("# Notes\n")
    message.get_by_text("the notes").click()  # a workspace file opens in JupyterLab
    lab.page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget?.context?.path?.endsWith('/notes.md')"
    )


def test_hostile_markdown_executes_nothing(
    lab: LabPage, notebook_dir: Path, fake: FakeAnthropic
) -> None:
    fake.add(HOSTILE)
    panel = chat(lab, notebook_dir, fake)

    send(panel, "Try to break out")
    message = wait_answer(panel, "SAFE-END")

    link = message.get_by_text("click me")
    expect(link).to_be_visible()
    assert not (link.get_attribute("href") or "").lower().startswith("javascript")
    link.click()
    message.get_by_text("raw link").click()
    dangerous = "[onerror], [onload], script, iframe, [href^='javascript' i], [src^='javascript' i]"
    expect(panel.locator(dangerous)).to_have_count(0)
    assert lab.page.evaluate("window.__loomPwned") is None


def test_run_python_approval_click_changes_the_namespace(
    lab: LabPage, notebook_dir: Path, fake: FakeAnthropic
) -> None:
    tool = {"type": "tool_use", "name": "run_python", "input": {"code": "answer = 6 * 7"}}
    fake.add({"content": [{"type": "text", "text": "I will compute it."}, tool]}, "Done: 42.")
    panel = chat(lab, notebook_dir, fake)

    send(panel, "Put six times seven in answer")
    approval = panel.locator('[data-loom="approval"]')
    expect(approval.locator('[data-loom="approval-input"]')).to_have_text(
        "answer = 6 * 7", timeout=ANSWER_TIMEOUT_MS
    )
    wait_state(panel, "waiting-approval")
    panel.locator('[data-loom="approve"][data-decision="allow"]').click()

    wait_answer(panel, "Done: 42.")
    card = panel.locator('[data-loom="tool-card"][data-tool="run_python"]')
    expect(card).to_have_attribute("data-state", "done")
    expect(card.locator('[data-loom="tool-input"]')).to_have_text("answer = 6 * 7")
    assert kernel_run(lab, "print(answer)").strip() == "42"


STREAMED_CODE = "streamed_total = 0\n" + "".join(
    f"streamed_total += {n}  # step {n} of the sum\n" for n in range(40)
)
# Notes whether the run_python card ever showed the code's first line, still streaming,
# while no approve button existed (each comm message is its own task, so no race).
WATCH_TOOL_DRAFT = """() => {
    window.__loomDraftSeen = false;
    const root = document.querySelector('[data-loom="sidebar"]');
    const observer = new MutationObserver(() => {
        const card = root.querySelector('[data-loom="tool-card"][data-tool="run_python"]');
        const input = card?.querySelector('[data-loom="tool-input"]');
        if (card?.dataset.state === 'streaming'
            && input?.textContent.startsWith('streamed_total = 0\\n')
            && !root.querySelector('[data-loom="approve"]')) {
            window.__loomDraftSeen = true;
        }
    });
    observer.observe(root, {subtree: true, childList: true, characterData: true, attributes: true});
    (window.__loomObservers ??= []).push(observer);  // the shared page's reset ends it
}"""


def test_tool_input_shows_in_its_card_while_it_streams(
    lab: LabPage, notebook_dir: Path, fake: FakeAnthropic
) -> None:
    tool = {"type": "tool_use", "name": "run_python", "input": {"code": STREAMED_CODE}}
    fake.add({"content": [tool], "delay": 0.05}, "Summed.")
    panel = chat(lab, notebook_dir, fake)
    lab.page.evaluate(WATCH_TOOL_DRAFT)

    send(panel, "Sum the steps")
    approval = panel.locator('[data-loom="approval"]')
    expect(approval.locator('[data-loom="approval-input"]')).to_have_text(
        STREAMED_CODE.rstrip("\n"), timeout=ANSWER_TIMEOUT_MS
    )
    assert lab.page.evaluate("window.__loomDraftSeen") is True
    card = panel.locator('[data-loom="tool-card"][data-tool="run_python"]')
    expect(card).to_have_count(1)
    panel.locator('[data-loom="approve"][data-decision="allow"]').click()

    wait_answer(panel, "Summed.")
    expect(card).to_have_count(1)
    expect(card).to_have_attribute("data-state", "done")
    expect(card.locator('[data-loom="tool-input"]')).to_have_text(STREAMED_CODE)
    assert kernel_run(lab, "print(streamed_total)").strip() == str(sum(range(40)))


def test_stop_mid_stream(lab: LabPage, notebook_dir: Path, fake: FakeAnthropic) -> None:
    words = " ".join(f"w{n}" for n in range(400)) + " NEVER-SHOWN"
    fake.add({"content": [{"type": "text", "text": words}], "delay": 0.1})
    panel = chat(lab, notebook_dir, fake)

    send(panel, "Talk for a long time")
    expect(panel.locator(STOP)).to_be_enabled(timeout=ANSWER_TIMEOUT_MS)
    streaming = panel.locator(f'{ASSISTANT}[data-streaming="true"]')
    expect(streaming).to_contain_text("w3", timeout=ANSWER_TIMEOUT_MS)
    panel.locator(STOP).click()

    wait_state(panel, "idle")
    expect(panel.locator(f'{ASSISTANT}[data-streaming="true"]')).to_have_count(0)
    expect(panel.locator(ASSISTANT).last).not_to_contain_text("NEVER-SHOWN")
    expect(panel.locator(STOP)).to_be_disabled()


def test_answer_arrives_while_a_cell_runs(
    lab: LabPage, notebook_dir: Path, fake: FakeAnthropic
) -> None:
    fake.add("Answered while your cell runs.")
    path = new_notebook(lab, notebook_dir, "busy.ipynb", [env_cell(fake.base_url), RELEASE_CELL])
    lab.open(path)
    wait_kernel_idle(lab)
    panel = sidebar(lab)
    wait_state(panel, "idle")
    run_cell(lab, 0)
    run_cell(lab, 1)
    prompt = lab.page.locator(".jp-Notebook .jp-Cell").nth(1).locator(".jp-InputPrompt")
    expect(prompt).to_have_text("[*]:")

    send(panel, "Are you there?")
    wait_answer(panel, "Answered while your cell runs.")

    expect(prompt).to_have_text("[*]:")  # the cell is still running
    (notebook_dir / "release.flag").write_text("done")
    expect(prompt).to_have_text("[2]:", timeout=ANSWER_TIMEOUT_MS)


def test_cowork_cell_turn_and_task_progress_show_in_the_sidebar(
    lab: LabPage, notebook_dir: Path, fake: FakeAnthropic
) -> None:
    fake.add("Paris is the capital of France.")
    panel = chat(lab, notebook_dir, fake, "%cowork What is the capital of France?")

    expect(panel.locator(USER)).to_have_text(["What is the capital of France?"])
    wait_answer(panel, "Paris is the capital of France.")

    kernel_run(lab, PUBLISH_TASK)
    task = panel.locator('[data-loom="task"]')
    expect(task).to_contain_text("Clean the data")
    expect(task.locator('[data-loom="subtask"][data-status="passed"]')).to_have_count(1)
    expect(task.locator('[data-loom="subtask"][data-status="running"]')).to_have_count(1)


PUBLISH_TASK = """
from loom_jupyter.jupyter.coworker.registry import current
from loom_jupyter.host.wire.protocol import SubtaskItem, TaskView
current(get_ipython()).floor.publish_task(TaskView(
    task_id="t1", goal="Clean the data", status="running",
    subtasks=(SubtaskItem("load", "Load the CSV", "passed"),
              SubtaskItem("dedupe", "Drop duplicates", "running", last_tool="run_python"))))
"""


def test_reload_shows_the_history(lab: LabPage, notebook_dir: Path, fake: FakeAnthropic) -> None:
    fake.add("Remembered answer.")
    panel = chat(lab, notebook_dir, fake)
    send(panel, "Remember this")
    wait_answer(panel, "Remembered answer.")

    lab.reload()
    panel = sidebar(lab)
    wait_state(panel, "idle")

    expect(panel.locator(USER)).to_have_text(["Remember this"])
    expect(panel.locator(ASSISTANT)).to_have_text(["Remembered answer."])


def test_new_session_and_resume(lab: LabPage, notebook_dir: Path, fake: FakeAnthropic) -> None:
    fake.add("First answer.", "Second answer.")
    panel = chat(lab, notebook_dir, fake)
    send(panel, "first session question")
    wait_answer(panel, "First answer.")

    picker = panel.locator('[data-loom="sessions"]')
    picker.locator("summary").click()
    picker.locator('[data-loom="session-new"]').click()
    expect(panel.locator(USER)).to_have_count(0)
    send(panel, "second session question")
    wait_answer(panel, "Second answer.")

    picker.locator("summary").click()
    rows = picker.locator('[data-loom="session"]')
    expect(rows).to_have_count(2)
    picker.locator('[data-loom="session"][data-current="false"]').click()
    expect(panel.locator(USER)).to_have_text(["first session question"])


def test_fork_makes_a_new_session_that_keeps_the_history(
    lab: LabPage, notebook_dir: Path, fake: FakeAnthropic
) -> None:
    fake.add("Answer before the fork.")
    panel = chat(lab, notebook_dir, fake)
    send(panel, "question before the fork")
    wait_answer(panel, "Answer before the fork.")

    picker = panel.locator('[data-loom="sessions"]')
    picker.locator("summary").click()
    current = picker.locator('[data-loom="session"][data-current="true"]')
    expect(current).to_have_count(1)
    original = current.get_attribute("data-session")
    picker.locator('[data-loom="session-fork"]').click()

    picker.locator("summary").click()
    expect(picker.locator('[data-loom="session"]')).to_have_count(2)
    expect(current).not_to_have_attribute("data-session", original or "")
    expect(panel.locator(USER)).to_have_text(["question before the fork"])


def test_code_block_copy_button_raises_nothing(
    lab: LabPage, notebook_dir: Path, fake: FakeAnthropic
) -> None:
    fake.add("Try this:\n\n```python\nanswer = 6 * 7\n```\n\nCOPY-END")
    panel = chat(lab, notebook_dir, fake)
    errors: list[str] = []

    def record(error: Error) -> None:
        errors.append(str(error))

    lab.page.on("pageerror", record)
    try:
        send(panel, "Give me code to copy")
        message = wait_answer(panel, "COPY-END")
        copy = message.locator('[data-loom="copy-code"]')
        expect(copy).to_have_count(1)
        copy.click()
        wait_state(panel, "idle")
    finally:
        lab.page.remove_listener("pageerror", record)  # the page serves the next test
    assert errors == []


def test_switching_notebooks_switches_the_chat(
    lab: LabPage, notebook_dir: Path, fake: FakeAnthropic
) -> None:
    fake.add("First notebook answer.", "Second notebook answer.")
    first = new_notebook(lab, notebook_dir, "first.ipynb", [env_cell(fake.base_url)])
    second = new_notebook(lab, notebook_dir, "second.ipynb", [env_cell(fake.base_url)])
    panel = open_chat(lab, first)
    send(panel, "about the first notebook")
    wait_answer(panel, "First notebook answer.")

    panel = open_chat(lab, second, more=True)
    expect(panel.locator(USER)).to_have_count(0)
    send(panel, "about the second notebook")
    wait_answer(panel, "Second notebook answer.")

    lab.activate_tab(first)
    expect(panel.locator('[data-loom="notebook"]')).to_have_text("first.ipynb")
    expect(panel.locator(USER)).to_have_text(["about the first notebook"])
    expect(panel.locator(ASSISTANT)).to_have_text(["First notebook answer."])
    lab.activate_tab(second)
    expect(panel.locator(USER)).to_have_text(["about the second notebook"])


def test_kernel_restart_keeps_history_and_a_dead_kernel_shows_offline(
    lab: LabPage, notebook_dir: Path, fake: FakeAnthropic
) -> None:
    fake.add("Before the restart.")
    panel = chat(lab, notebook_dir, fake)
    send(panel, "hello before restart")
    wait_answer(panel, "Before the restart.")

    lab.app_eval(
        "async (app) => { await app.shell.currentWidget.sessionContext.session.kernel.restart(); }"
    )

    expect(
        panel.locator('[data-loom="notice"]', has_text="kernel restarted — history intact")
    ).to_be_visible(timeout=ANSWER_TIMEOUT_MS)
    wait_state(panel, "idle")
    expect(panel.locator(USER)).to_have_text(["hello before restart"])

    lab.app_eval(
        "async (app) => { await app.shell.currentWidget.sessionContext.session.kernel.shutdown(); }"
    )
    wait_state(panel, "offline")
    expect(panel.locator(STATUS)).not_to_have_text("ready")


def run_cell(lab: LabPage, index: int) -> None:
    """Run one cell (as Shift+Enter on it would, without moving on)."""
    lab.app_eval(
        """(app, index) => {
            app.shell.currentWidget.content.activeCellIndex = index;
            void app.commands.execute('notebook:run-cell');
        }""",
        index,
    )


def test_load_button_when_auto_load_is_off(
    fresh_lab: LabPage, notebook_dir: Path, fake: FakeAnthropic
) -> None:
    # A page of its own: the page reads autoLoad (from the file below) when it loads, and
    # keeps it; a shared page would have read it before, or keep it off after.
    lab = fresh_lab
    settings = (
        lab.server.root_dir.parent
        / "user-settings"
        / "loom-jupyter"
        / "sidebar.jupyterlab-settings"
    )
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"autoLoad": False}))
    try:
        lab.open(new_notebook(lab, notebook_dir, "manual.ipynb", [env_cell(fake.base_url)]))
        wait_kernel_idle(lab)
        panel = sidebar(lab)
        load = panel.locator('[data-loom="load"]')
        expect(load).to_be_visible(timeout=ANSWER_TIMEOUT_MS)
        wait_state(panel, "offline")
    finally:
        settings.unlink()
    load.click()
    wait_state(panel, "idle")
    # Loaded, but not through %load_ext: IPython does not list it, so the person's own
    # %load_ext loom_jupyter reaches Loom (its banner) instead of "already loaded".
    shown = kernel_run(
        lab,
        "ip = get_ipython()\n"
        "print('cowork' in ip.magics_manager.magics['line'])\n"
        "print('loom_jupyter' in ip.extension_manager.loaded)",
    )
    assert shown.split() == ["True", "False"]


def test_search_finds_a_turn_and_jumps_to_it(
    lab: LabPage, notebook_dir: Path, fake: FakeAnthropic
) -> None:
    fake.add("Zebras have stripes.", "Something else entirely.")
    panel = chat(lab, notebook_dir, fake)
    send(panel, "tell me about zebras")
    wait_answer(panel, "Zebras have stripes.")
    send(panel, "and now a different topic")
    wait_answer(panel, "Something else entirely.")

    search = panel.locator('[data-loom="search"]')
    search.fill("zebras")
    search.press("Enter")
    hits = panel.locator('[data-loom="search-hit"]')
    expect(hits.first).to_be_visible(timeout=ANSWER_TIMEOUT_MS)
    expect(hits.first).to_contain_text("ebras")
    hits.first.click()

    target = panel.locator('[data-loom="message"].loom-mod-target')
    expect(target).to_have_count(1)
    expect(target).to_contain_text("ebras")


async def seed_archive(notebook: Path, pairs: int) -> None:
    """A session of ``pairs`` questions and answers, as a past kernel left it."""
    async with Archive.open(archive_path_for(notebook)) as archive:
        sid = await archive.create_session(notebook_path=str(notebook), model="claude-sonnet-5-5")
        for n in range(1, pairs + 1):
            await archive.append_turn(sid, TurnDraft(role="user", content=f"old question {n}"))
            await archive.append_turn(sid, TurnDraft(role="assistant", content=f"old answer {n}"))


def test_load_more_pages_back_through_a_long_history(
    lab: LabPage, notebook_dir: Path, fake: FakeAnthropic
) -> None:
    notebook = write_notebook(notebook_dir, "long.ipynb", [env_cell(fake.base_url)])
    # The sync playwright API marks this thread's loop as running: seed from another thread.
    seeding = threading.Thread(target=asyncio.run, args=(seed_archive(notebook, 40),))
    seeding.start()
    seeding.join()
    panel = open_chat(lab, notebook.relative_to(lab.server.root_dir).as_posix())

    users = panel.locator(USER)
    expect(users.last).to_have_text("old question 40")
    expect(users.first).not_to_have_text("old question 1")  # only the newest page came
    more = panel.locator('[data-loom="load-more"]')
    while more.is_visible():
        shown = users.count()
        more.click()
        expect(users).not_to_have_count(shown)
    expect(users).to_have_count(40)
    expect(users.first).to_have_text("old question 1")


def test_a_message_sent_during_a_turn_queues_and_can_be_cancelled(
    lab: LabPage, notebook_dir: Path, fake: FakeAnthropic
) -> None:
    words = " ".join(f"q{n}" for n in range(400))
    fake.add({"content": [{"type": "text", "text": words}], "delay": 0.1})
    panel = chat(lab, notebook_dir, fake)
    send(panel, "a long first answer please")
    expect(panel.locator(f'{ASSISTANT}[data-streaming="true"]')).to_contain_text(
        "q3", timeout=ANSWER_TIMEOUT_MS
    )

    send(panel, "this one waits")
    chip = panel.locator('[data-loom="queued"]', has_text="this one waits")
    expect(chip).to_be_visible()
    chip.locator('[data-loom="cancel-queued"]').click()
    expect(chip).to_have_count(0)
    panel.locator(STOP).click()

    wait_state(panel, "idle")
    expect(panel.locator(USER)).to_have_text(["a long first answer please"])
    assert len(fake.message_requests) == 1  # the cancelled message never reached the model


def test_renaming_the_notebook_moves_its_conversation_along(
    lab: LabPage, notebook_dir: Path, fake: FakeAnthropic
) -> None:
    fake.add("Noted: the launch code is tulip.")
    panel = chat(lab, notebook_dir, fake, name="Untitled.ipynb")
    send(panel, "remember the launch code tulip")
    wait_answer(panel, "Noted: the launch code is tulip.")
    wait_state(panel, "idle")

    old = notebook_dir / "Untitled.ipynb"
    new = notebook_dir / "analysis.ipynb"
    paths = [p.relative_to(lab.server.root_dir).as_posix() for p in (old, new)]
    lab.rename(*paths)
    notice = panel.locator('[data-loom="notice"]', has_text="This notebook is now analysis.ipynb")
    expect(notice).to_be_visible(timeout=ANSWER_TIMEOUT_MS)
    assert archive_path_for(new).exists()
    assert not archive_path_for(old).exists()

    fake.add("Still the same conversation.")
    send(panel, "after the rename")
    wait_answer(panel, "Still the same conversation.")
    expect(panel.locator(USER)).to_have_text(["remember the launch code tulip", "after the rename"])
    prompts = _prompts(archive_path_for(new))
    assert prompts == ["remember the launch code tulip", "after the rename"]


def _prompts(path: Path) -> list[str]:
    """The person's messages in an archive, oldest first (plain sqlite3, read-only)."""
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        rows = db.execute("SELECT content FROM conversation_turns WHERE role = 'user' ORDER BY id")
        return [content for (content,) in rows]
