"""The harness against the fake Messages API: scripted tasks, run by the real CLI.

Each task's prompt carries a marker (``TASK:name``); the fake's responder answers by it,
so tasks running at once (``--jobs 2``) never take each other's script entries.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from typing import TYPE_CHECKING, Any

import pytest

from loom_jupyter.testing import FakeAnthropic

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

Json = dict[str, Any]


def tool(name: str, **input: Any) -> Json:
    return {"content": [{"type": "tool_use", "name": name, "input": input}]}


# marker -> (first answer, answer once a tool result came back)
SCRIPTS: dict[str, tuple[Any, Any]] = {
    "pass": (tool("run_python", code="answer = 6 * 7"), "Done: answer is 42."),
    "fail": ("I will not do that.", "-"),
    "die": (tool("run_python", code="import os; os._exit(1)"), "-"),
    "apierror": ({"fault": "http", "status": 400, "message": "scripted bad request"}, "-"),
    "refuse": (tool("run_python", code="answer = 1"), "Then I cannot."),
    "edit": (tool("edit_cell", cell_id="cell-2", source="y = x + 2"), "Edited."),
    "hold": ({"content": ["Thinking", "about it"], "hold": "block"}, "-"),
}


def responder(body: Json) -> Any:
    text = json.dumps(body["messages"])
    for marker, (first, after) in SCRIPTS.items():
        if f"TASK:{marker}" in text:
            return after if '"tool_result"' in text else first
    return None  # the default: echo


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic(responder=responder) as server:
        yield server


def write_task(suite: Path, folder: str, yaml: str, **files: str) -> None:
    path = suite / folder
    path.mkdir(parents=True)
    (path / "task.yaml").write_text(textwrap.dedent(yaml).lstrip(), encoding="utf-8")
    for name, text in files.items():
        (path / name).write_text(text, encoding="utf-8")


def cli_env(fake: FakeAnthropic, home: Path) -> dict[str, str]:
    """The CLI's (and so its kernels') environment: the fake API, a config home of its own."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "LOOM_"))}
    env.update(
        ANTHROPIC_BASE_URL=fake.base_url,
        ANTHROPIC_API_KEY="test-key",
        XDG_CONFIG_HOME=str(home / "config"),
        PYTHONUNBUFFERED="1",
    )
    return env


def eval_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "loom_jupyter.cli", "eval", *args]


def run_eval(fake: FakeAnthropic, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        eval_command(*args),
        env=cli_env(fake, home),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
