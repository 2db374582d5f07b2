"""``loom-jupyter show`` names the skills each exchange loaded (DESIGN §15, issue 42).

The archive is a real one: a CoworkSession on the in-process kernel, the real anthropic
SDK against the fake Messages API, a person's skill in the test's ``XDG_CONFIG_HOME`` and a
project's in the trusted project's ``.claude/skills``. The model loads skills in two of
three exchanges (one load fails); then the real ``loom-jupyter show`` reads the archive.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anthropic
import pytest
from clirun import run_cli

from loom_jupyter.models.anthropic import AnthropicModel
from loom_jupyter.session.conversation import CoworkSession
from loom_jupyter.settings import Settings
from loom_jupyter.testing.fake_anthropic import FakeAnthropic
from loom_jupyter.tools.registry import default_registry
from loom_jupyter.trust import decide, read_request

if TYPE_CHECKING:
    from loom_jupyter.archive import Archive
    from loom_jupyter.tools.local_kernel import LocalKernel


@pytest.fixture
def notebook(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A notebook one folder down in a project (its root holds ``.git``), HOME apart."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    (root / "work").mkdir()
    path = root / "work" / "analysis.ipynb"
    path.write_text(json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    return path


def _skill(folder: Path, name: str, description: str) -> Path:
    folder = folder / name
    folder.mkdir(parents=True)
    text = f"---\nname: {name}\ndescription: {description}\n---\nDo it our way.\n"
    (folder / "SKILL.md").write_text(text, encoding="utf-8")
    return folder.resolve()


def _load(*names: str) -> dict[str, Any]:
    calls = [
        {"type": "tool_use", "id": f"toolu_{n.replace('-', '_')}", "name": "load_skill"}
        | {"input": {"name": n}}
        for n in names
    ]
    return {"content": calls}


async def test_show_names_the_skills_each_exchange_loaded(
    notebook: Path, archive: Archive, kernel: LocalKernel
) -> None:
    person = _skill(
        Path(os.environ["XDG_CONFIG_HOME"]) / "loom" / "skills", "plot-style", "Our plot look."
    )
    project = _skill(notebook.parents[1] / ".claude" / "skills", "warehouse", "Our warehouse.")
    decide(notebook, "trust", shown=read_request(notebook).digest)
    script: list[Any] = [
        _load("plot-style", "warehouse"),
        "Plotted.",
        "No skill needed.",
        _load("no-such-skill"),
        _load("plot-style"),
        "Plotted again.",
    ]
    with FakeAnthropic(script, default="error") as server:
        client = anthropic.AsyncAnthropic(
            api_key="sk-ant-cli-tests-0000000000",
            base_url=server.base_url,
            _strict_response_validation=True,
        )
        model = AnthropicModel(Settings(), client=client, retry_backoff_seconds=0.01)
        session = await CoworkSession.open(
            archive,
            notebook_path=notebook,
            settings=Settings(approval="auto"),
            model=model,
            kernel=kernel,
            tools=default_registry(),
        )
        try:
            for text in ("plot sales our way", "what is 2 + 2", "plot it again"):
                async for _ in session.send(text):
                    pass
        finally:
            await session.close()
            await client.close()

    shown = run_cli("show", str(notebook))

    assert shown.code == 0, shown.err
    out = shown.out
    both = f"skills loaded: plot-style (user, {person}), warehouse (project, {project})"
    again = f"skills loaded: plot-style (user, {person})"
    assert out.count("skills loaded:") == 2  # the exchange that loaded none has no line
    first, second, third = (out.index(t) for t in ("plot sales", "what is 2 + 2", "plot it"))
    assert first < out.index(both) < second  # at the end of the exchange that loaded them
    assert third < out.rindex(again)
    assert "There is no skill named 'no-such-skill'" in out  # the failed load, not named
    assert "no-such-skill (" not in out
    ranged = run_cli("show", str(notebook), "--range", "1:3")  # a part of an exchange
    assert "skills loaded: plot-style (user, " in ranged.out
