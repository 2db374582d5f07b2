"""Bad input that needs real kernels (jupyter_client): fresh kernels, interrupts, two kernels, HTML.

One kernel (``first``) is shared by the tests of this module, in file order;
each test still ends by checking the archive is intact.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from contextlib import closing
from typing import TYPE_CHECKING, Any

import pytest

from loom_jupyter.testing import FakeAnthropic

from .cases import BAD_INPUTS
from .kernels import Kernel

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

pytestmark = pytest.mark.kernel

CASES = {case.id: case for case in BAD_INPUTS}
SEED = "remember the word OKAPI"


def expect(case_id: str) -> str:
    return CASES[case_id].expect


def kernel_env(fake: FakeAnthropic, notebook: Path, **extra: str) -> dict[str, str]:
    """A clean kernel environment: the fake API, the notebook, no real key or config."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "LOOM_", "JPY_"))}
    env.update(
        JPY_SESSION_NAME=str(notebook),
        ANTHROPIC_BASE_URL=fake.base_url,
        ANTHROPIC_API_KEY="test-key-reliability",
        XDG_CONFIG_HOME=str(notebook.parent / ".config-home"),
        **extra,
    )
    return env


def rows(archive: Path, sql: str) -> list[tuple[Any, ...]]:
    with closing(sqlite3.connect(f"file:{archive}?mode=ro", uri=True)) as db:
        return db.execute(sql).fetchall()


def assert_intact(archive: Path) -> None:
    assert rows(archive, "PRAGMA integrity_check") == [("ok",)]
    assert (SEED,) in rows(archive, "SELECT content FROM conversation_turns")


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        yield server


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("kernels")


@pytest.fixture(scope="module")
def notebook(folder: Path) -> Path:
    path = folder / "nb.ipynb"
    path.write_text(json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    return path


@pytest.fixture(scope="module")
def first(fake: FakeAnthropic, notebook: Path) -> Iterator[Kernel]:
    """A kernel on ``notebook`` asking before write tools, with the seed turn archived."""
    kernel = Kernel.start(kernel_env(fake, notebook, LOOM_APPROVAL="ask"), notebook.parent)
    kernel.run("%load_ext loom_jupyter")
    fake.add("Noted: OKAPI.")
    assert "Noted: OKAPI." in kernel.run(f"%cowork {SEED}").text()
    yield kernel
    kernel.shutdown()


def archive_of(notebook: Path) -> Path:
    return notebook.parent / ".loom" / f"{notebook.name}.sqlite"


def test_fresh_kernel_in_read_only_folder(fake: FakeAnthropic, folder: Path) -> None:
    locked = folder / "read-only"
    locked.mkdir()
    root = os.geteuid() == 0
    locked.chmod(0o555)
    if root:  # chmod does not stop root
        subprocess.run(["chattr", "+i", str(locked)], check=True)
    kernel = Kernel.start(kernel_env(fake, locked / "nb.ipynb"), locked)
    try:
        before = kernel.run("%cowork hello")
        assert before.status == "error"
        assert expect("before-load") in before.text()
        loaded = kernel.run("%load_ext loom_jupyter").text() + kernel.run("%cowork hi").text()
        assert expect("read-only-folder") in loaded
        assert kernel.value("6 * 7") == "42"  # the kernel keeps working
    finally:
        kernel.shutdown()
        if root:
            subprocess.run(["chattr", "-i", str(locked)], check=True)
        locked.chmod(0o755)
    assert not (locked / ".loom").exists()


def test_html_in_model_output(first: Kernel, fake: FakeAnthropic, notebook: Path) -> None:
    hostile = '<script>alert("x")</script><img src=x onerror="alert(1)"> **bold**'
    call = {"type": "tool_use", "name": "read_file", "input": {"path": "<script>a.txt"}}
    fake.add({"content": [call]}, hostile)
    reply = first.run("%cowork show me something")
    displays = reply.displays()
    kind = expect("html-js-output")  # Loom's markdown type, sanitized by the front
    assert any(hostile in data.get(kind, {}).get("markdown", "") for data in displays)
    assert not [data for data in displays if "text/markdown" in data]  # never trusted markup
    html = [data["text/html"] for data in displays if "text/html" in data]
    assert html  # the tool card
    for body in html:
        assert "<script" not in body.lower()
        assert "onerror" not in body.lower() or "&lt;" in body
        assert "<img" not in body.lower()
    assert_intact(archive_of(notebook))


def test_interrupt_during_approval(first: Kernel, fake: FakeAnthropic, notebook: Path) -> None:
    call = {"type": "tool_use", "name": "run_python", "input": {"code": "ran = True"}}
    fake.add({"content": [call]})
    reply = first.run("%cowork set ran", interrupt_at_prompt=True)
    assert reply.prompts  # it did ask
    assert expect("interrupt-approval") in reply.text()
    assert first.value("'ran' in dir()") == "False"  # the code never ran
    archive = archive_of(notebook)
    result = rows(archive, "SELECT content, is_error FROM conversation_turns WHERE role = 'tool'")
    assert result[-1][1] == 1  # the call has an error result: denied or marked interrupted,
    assert "was not run" in result[-1][0] or "interrupted" in result[-1][0]  # by where it landed
    fake.add("Fine, I will not.")
    assert "Fine, I will not." in first.run("%cowork ok, never mind").text()
    last = fake.message_requests[-1].body["messages"]
    uses = [b["id"] for m in last for b in m["content"] if b.get("type") == "tool_use"]
    answered = [
        b["tool_use_id"] for m in last for b in m["content"] if b.get("type") == "tool_result"
    ]
    assert uses == answered  # the next request is valid: every call has its result
    assert_intact(archive)


def _running(tool: str) -> Callable[[dict[str, Any]], bool]:
    """True for the tool card that says ``tool`` is running."""

    def check(msg: dict[str, Any]) -> bool:
        plain = str(msg["content"].get("data", {}).get("text/plain", ""))
        return plain.startswith(f"[{tool}]") and "running" in plain

    return check


def test_interrupt_endless_python(first: Kernel, fake: FakeAnthropic, notebook: Path) -> None:
    call = {"type": "tool_use", "name": "run_python", "input": {"code": "while True: pass"}}
    fake.add({"content": [call]})
    reply = first.run(
        "%cowork approval auto\n%cowork spin forever", interrupt_when=_running("run_python")
    )
    assert expect("python-never-ends") in reply.text()
    assert first.value("6 * 7") == "42"  # the kernel is free again
    archive = archive_of(notebook)
    result = rows(archive, "SELECT content, is_error FROM conversation_turns WHERE role = 'tool'")
    assert result[-1][1] == 1
    fake.add("Stopped, as asked.")
    assert "Stopped, as asked." in first.run("%cowork ok").text()
    assert_intact(archive)
    first.run("%cowork approval ask")


def test_two_kernels(first: Kernel, fake: FakeAnthropic, notebook: Path) -> None:
    second = Kernel.start(kernel_env(fake, notebook, LOOM_APPROVAL="auto"), notebook.parent)
    try:
        banner = " ".join(second.run("%load_ext loom_jupyter").text().split())  # unwrapped
        assert expect("two-kernels") in banner
        fake.add("Second kernel here.")
        assert "Second kernel here." in second.run("%cowork hello from two").text()
        fake.add("First kernel here.")
        assert "First kernel here." in first.run("%cowork hello from one").text()
    finally:
        second.shutdown()
    archive = archive_of(notebook)
    sessions = rows(archive, "SELECT count(DISTINCT session_id) FROM conversation_turns")
    assert sessions == [(2,)]
    assert_intact(archive)


def test_renamed_notebook(first: Kernel, fake: FakeAnthropic, notebook: Path) -> None:
    renamed = notebook.with_name("renamed.ipynb")
    notebook.rename(renamed)
    try:
        fake.add(expect("renamed-notebook"))
        assert expect("renamed-notebook") in first.run("%cowork are we still talking?").text()
    finally:
        renamed.rename(notebook)
    archive = archive_of(notebook)
    turns = rows(archive, "SELECT content FROM conversation_turns ORDER BY id")
    assert ("are we still talking?",) in turns
    assert_intact(archive)
