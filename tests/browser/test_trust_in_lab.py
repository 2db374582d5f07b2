"""Folder trust in a real JupyterLab and Notebook 7 (DESIGN §12), against the fake API.

A test's folder is a cloned project: a ``loom.yaml`` whose MCP server is a command that
leaves a marker file when it runs, ``approval: auto``, and an ``AGENTS.md``. Until the
person trusts the folder none of it is used — the command never runs, the instructions
are not sent, the approval stays the default ``ask`` — and the sidebar's trust card says
so; the card's Allow turns on the servers and instructions, and its own checkbox
``[data-loom="trust-approval"]`` (unticked by default) the looser approval; Deny keeps
it all off. An answer is bound to what the card showed: a ``loom.yaml`` swapped while
the card is open is not trusted by the click, the card shows it instead. The server's
(and so the kernels') ``XDG_CONFIG_HOME`` is an empty folder of its own
(``lab_harness``): no developer's settings or trust reach these tests, and the person's
trust goes there, never into the project. Every wait is on a condition.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING

import pytest
from lab_harness import LabPage, write_notebook
from playwright.sync_api import expect
from sidebar_page import (
    ANSWER_TIMEOUT_MS,
    KERNEL_RUN,
    env_cell,
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

MARKER = "MCP_RAN_ON_FIRST_MESSAGE"
AGENTS_TEXT = "Project rule 7f3a: every answer ends with the word KUMQUAT."
LOOM_YAML = f"""\
approval: auto
mcp_servers:
  tools:
    command: sh
    args: ["-c", "id > {MARKER}"]
"""
TRUST = '[data-loom="trust"]'
ALLOW = '[data-loom="trust-allow"]'
DENY = '[data-loom="trust-deny"]'
LATER = '[data-loom="trust-close"]'
LOOSEN_BOX = '[data-loom="trust-approval"]'
NOTE = '[data-loom="trust-note"]'
CHANGED_NOTE = "The folder changed after it was shown to you, so nothing was recorded"
APPROVAL_MODE = '[data-loom="approval-mode"]'
MARKER_WAIT_S = 60.0


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        yield server


def cloned_project(lab: LabPage, folder: Path, fake: FakeAnthropic, name: str) -> str:
    """A notebook in a folder that asks for an MCP server, auto approval and its
    instructions; its path as the server serves it."""
    (folder / "loom.yaml").write_text(LOOM_YAML)
    (folder / "AGENTS.md").write_text(f"# How to work here\n\n{AGENTS_TEXT}\n")
    path = write_notebook(folder, name, [env_cell(fake.base_url)])
    return path.relative_to(lab.server.root_dir).as_posix()


def nothing_configured(lab: LabPage, folder: Path) -> None:
    """The kernels' config home holds no settings of the person, and no trust for
    ``folder``."""
    config = lab.server.config_home / "loom"
    assert not (config / "loom.yaml").exists()
    store = config / "trust.json"
    assert not store.exists() or str(folder.resolve()) not in store.read_text()


def system_prompts(fake: FakeAnthropic, words: str) -> list[str]:
    """The system prompt of each request sent for ``words``, as JSON text."""
    return [
        json.dumps(r.body.get("system"))
        for r in fake.message_requests
        if r.body is not None and words in json.dumps(r.body)
    ]


def wait_for_file(path: Path, timeout_s: float = MARKER_WAIT_S) -> None:
    """Poll the file system until ``path`` exists (the server writes it on its own)."""
    deadline = time.monotonic() + timeout_s
    while not path.exists():
        if time.monotonic() > deadline:
            pytest.fail(f"{path.name} did not appear within {timeout_s:.0f} s", pytrace=False)
        time.sleep(0.1)


def expect_untrusted_card(panel: Locator, folder: Path) -> Locator:
    """The trust card is open and shows the folder and everything it asks for, whole."""
    card = panel.locator(TRUST)
    expect(card).to_be_visible(timeout=ANSWER_TIMEOUT_MS)
    expect(card).to_have_attribute("data-status", "untrusted")
    expect(card.locator('[data-loom="trust-root"]')).to_have_text(str(folder.resolve()))
    asks = card.locator('[data-loom="trust-asks"]')
    expect(asks).to_contain_text(f"MCP server tools: runs `sh -c 'id > {MARKER}'`")
    expect(asks).to_contain_text("approval: auto")
    expect(asks).to_contain_text("instruction file: AGENTS.md")
    for button in (ALLOW, DENY):
        expect(card.locator(button)).to_be_enabled()
    return card


def expect_mode(panel: Locator, mode: str, source: str) -> None:
    footer_mode = panel.locator(APPROVAL_MODE)
    expect(footer_mode).to_have_attribute("data-source", source, timeout=ANSWER_TIMEOUT_MS)
    expect(footer_mode).to_have_attribute("data-mode", mode)
    expect(footer_mode).to_have_text(f"approval: {mode} ({source})")


def expect_nothing_ran(folder: Path, fake: FakeAnthropic) -> None:
    """The folder's MCP command never ran and its instructions were never sent."""
    assert not (folder / MARKER).exists()
    bodies = [json.dumps(request.body) for request in fake.message_requests]
    assert bodies, "the fake API got no request"
    assert all(AGENTS_TEXT not in body for body in bodies)


def test_an_untrusted_folder_runs_nothing_until_the_card_trusts_it(
    lab: LabPage, notebook_dir: Path, fake: FakeAnthropic
) -> None:
    nothing_configured(lab, notebook_dir)
    fake.add("First answer. FIRST-END", "Second answer. SECOND-END")
    panel = open_chat(lab, cloned_project(lab, notebook_dir, fake, "cloned.ipynb"))
    card = expect_untrusted_card(panel, notebook_dir)
    expect_mode(panel, "ask", "default")  # the folder's `approval: auto` does not apply

    send(panel, "hi")
    wait_answer(panel, "FIRST-END")
    wait_state(panel, "idle")
    expect_nothing_ran(notebook_dir, fake)
    expect(card).to_be_visible()
    expect_mode(panel, "ask", "default")

    box = card.locator(LOOSEN_BOX)  # `approval: auto` is looser than yours: asked apart
    expect(box).not_to_be_checked()
    box.check()
    card.locator(ALLOW).click()
    expect(card).to_be_hidden(timeout=ANSWER_TIMEOUT_MS)
    expect_mode(panel, "auto", "project")  # a trusted project fills in what you left unset
    trust = json.loads((lab.server.config_home / "loom" / "trust.json").read_text())
    assert str(notebook_dir.resolve()) in json.dumps(trust)  # kept outside the project

    send(panel, "and now?")
    wait_answer(panel, "SECOND-END")
    wait_for_file(notebook_dir / MARKER)  # the MCP server's command ran
    assert any(AGENTS_TEXT in system for system in system_prompts(fake, "and now?"))
    expect(card).to_be_hidden()


def test_slash_trust_reopens_the_card_and_deny_keeps_the_folder_off(
    lab: LabPage, notebook_dir: Path, fake: FakeAnthropic
) -> None:
    nothing_configured(lab, notebook_dir)
    fake.add("Still plain. DENIED-END")
    panel = open_chat(lab, cloned_project(lab, notebook_dir, fake, "denied.ipynb"))
    card = expect_untrusted_card(panel, notebook_dir)
    card.locator(LATER).click()
    expect(card).to_be_hidden()

    send(panel, "/trust")
    result = panel.locator('[data-loom="command-result"][data-command="trust"]')
    expect(result).to_contain_text("Folder trust", timeout=ANSWER_TIMEOUT_MS)
    expect_untrusted_card(panel, notebook_dir)
    card.locator(DENY).focus()  # the buttons are reachable from the keyboard
    lab.page.keyboard.press("Enter")
    expect(card).to_be_hidden()

    send(panel, "/trust")  # the decision is kept: the card now says so
    expect(card).to_have_attribute("data-status", "denied", timeout=ANSWER_TIMEOUT_MS)
    expect(card.locator('[data-loom="trust-status"]')).to_contain_text("not to trust")
    card.locator(LATER).click()
    expect(card).to_be_hidden()

    send(panel, "hi after deny")
    wait_answer(panel, "DENIED-END")
    wait_state(panel, "idle")
    expect_nothing_ran(notebook_dir, fake)
    expect_mode(panel, "ask", "default")


def test_notebook7_shows_the_card_and_runs_nothing(
    fresh_lab: LabPage, notebook_dir: Path, fake: FakeAnthropic
) -> None:
    lab = fresh_lab  # a page of its own: Notebook 7 is another app than the shared JupyterLab
    nothing_configured(lab, notebook_dir)
    fake.add("Notebook 7 answer. NB7-TRUST-END")
    served = cloned_project(lab, notebook_dir, fake, "nb7-cloned.ipynb")
    panel = open_notebook7(lab, served)
    run_all(lab)
    card = expect_untrusted_card(panel, notebook_dir)
    expect_mode(panel, "ask", "default")

    send(panel, "hi")
    wait_answer(panel, "NB7-TRUST-END")
    wait_state(panel, "idle")
    expect_nothing_ran(notebook_dir, fake)
    expect(card).to_be_visible()


# -- what the card showed is what gets trusted (security review R2) ------------------------

BENIGN_YAML = """\
mcp_servers:
  docs:
    command: echo
    args: ["benign docs server"]
"""
SWAPPED_MARKER = "PWNED_BY_SWAPPED_LOOM_YAML"
SWAPPED_YAML = f"""\
mcp_servers:
  docs:
    command: sh
    args: ["-c", "id > {SWAPPED_MARKER}"]
"""
# `%cowork trust` with no stdin: it shows the folder, then says nobody can answer here.
KERNEL_RUN_NO_STDIN = KERNEL_RUN.replace(
    "{ code, store_history: false }", "{ code, store_history: false, allow_stdin: false }"
)


def swap(path: Path, text: str) -> None:
    """Replace ``path`` in one step, as a ``git pull`` or a synced drive does."""
    fresh = path.with_name(f".{path.name}.new")
    fresh.write_text(text)
    fresh.replace(path)


def decisions_about(lab: LabPage, folder: Path) -> list[dict[str, object]]:
    """What the person's trust store holds about ``folder``'s project (none: [])."""
    store = lab.server.config_home / "loom" / "trust.json"
    if not store.exists():
        return []
    folders = json.loads(store.read_text()).get("folders", {})
    return list(folders.get(str(folder.resolve()), {}).values())


def test_a_loom_yaml_swapped_while_the_card_is_open_is_shown_not_trusted(
    lab: LabPage, notebook_dir: Path, fake: FakeAnthropic
) -> None:
    nothing_configured(lab, notebook_dir)
    fake.add("Nothing ran. SWAP-FIRST-END", "Now it runs. SWAP-SECOND-END")
    (notebook_dir / "loom.yaml").write_text(BENIGN_YAML)
    served = write_notebook(notebook_dir, "swapped.ipynb", [env_cell(fake.base_url)])
    panel = open_chat(lab, served.relative_to(lab.server.root_dir).as_posix())
    card = panel.locator(TRUST)
    expect(card).to_be_visible(timeout=ANSWER_TIMEOUT_MS)
    asks = card.locator('[data-loom="trust-asks"]')
    expect(asks).to_contain_text("MCP server docs: runs `echo 'benign docs server'`")
    expect(card.locator(NOTE)).to_have_count(0)
    expect(card.locator(LOOSEN_BOX)).to_have_count(0)  # it loosens nothing

    swap(notebook_dir / "loom.yaml", SWAPPED_YAML)  # while the person reads the card
    card.locator(ALLOW).click()

    # Nothing recorded: the card stays open on what the folder asks for now, and says why.
    expect(card.locator(NOTE)).to_contain_text(CHANGED_NOTE, timeout=ANSWER_TIMEOUT_MS)
    expect(card).to_be_visible()
    expect(card).to_have_attribute("data-status", "untrusted")
    expect(asks).to_contain_text(f"MCP server docs: runs `sh -c 'id > {SWAPPED_MARKER}'`")
    expect(asks).not_to_contain_text("benign docs server")
    for button in (ALLOW, DENY):
        expect(card.locator(button)).to_be_enabled()
    assert not any(d.get("trusted") for d in decisions_about(lab, notebook_dir))
    said = lab.app_eval(KERNEL_RUN_NO_STDIN, "%cowork trust")
    assert "Trust: not trusted" in said, said
    assert f"sh -c 'id > {SWAPPED_MARKER}'" in said, said

    send(panel, "hi")
    wait_answer(panel, "SWAP-FIRST-END")
    wait_state(panel, "idle")
    assert not (notebook_dir / SWAPPED_MARKER).exists()
    expect(card).to_be_visible()

    # The person has now seen the new command: the card's answer carries its new digest.
    card.locator(ALLOW).click()
    expect(card).to_be_hidden(timeout=ANSWER_TIMEOUT_MS)
    assert [d.get("trusted") for d in decisions_about(lab, notebook_dir)] == [True]
    send(panel, "and now?")
    wait_answer(panel, "SWAP-SECOND-END")
    wait_for_file(notebook_dir / SWAPPED_MARKER)  # the command that was shown and trusted


def test_trusting_a_folder_leaves_your_approval_mode_unless_its_box_is_ticked(
    lab: LabPage, notebook_dir: Path, fake: FakeAnthropic
) -> None:
    nothing_configured(lab, notebook_dir)
    (notebook_dir / "loom.yaml").write_text("approval: auto\n")
    served = write_notebook(notebook_dir, "loosen.ipynb", [env_cell(fake.base_url)])
    panel = open_chat(lab, served.relative_to(lab.server.root_dir).as_posix())
    card = panel.locator(TRUST)
    expect(card).to_be_visible(timeout=ANSWER_TIMEOUT_MS)
    expect(card).to_have_attribute("data-status", "untrusted")
    loosen = card.locator('[data-loom="trust-loosen"]')
    expect(loosen).to_contain_text(
        "Let this folder make Loom run code and commands without asking you"
    )
    expect(loosen.locator('[data-loom="trust-loosens"]')).to_contain_text(
        "approval: auto (yours is ask)"
    )
    expect(card.locator(LOOSEN_BOX)).not_to_be_checked()
    expect_mode(panel, "ask", "default")

    card.locator(ALLOW).click()  # the box left unticked
    expect(card).to_be_hidden(timeout=ANSWER_TIMEOUT_MS)
    expect_mode(panel, "ask", "default")  # trusted, and your mode stays
    assert [
        (d.get("trusted"), d.get("with_approval")) for d in decisions_about(lab, notebook_dir)
    ] == [(True, False)]

    send(panel, "/trust")  # ask again, and this time let it loosen
    expect(card).to_have_attribute("data-status", "trusted", timeout=ANSWER_TIMEOUT_MS)
    box = card.locator(LOOSEN_BOX)
    expect(box).not_to_be_checked()
    box.check()
    card.locator(ALLOW).click()
    expect(card).to_be_hidden(timeout=ANSWER_TIMEOUT_MS)
    expect_mode(panel, "auto", "project")
    assert [
        (d.get("trusted"), d.get("with_approval")) for d in decisions_about(lab, notebook_dir)
    ] == [(True, True)]
