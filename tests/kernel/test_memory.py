"""Memory beyond one conversation, in a real ipykernel against the fake Messages API:
a restart's lost variables, the person's cells between turns, other notebooks' facts."""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

import pytest

from loom_jupyter.archive import Archive, archive_path_for
from loom_jupyter.messages import TurnDraft

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from loom_jupyter.testing import FakeAnthropic

    from .conftest import Kernel

pytestmark = pytest.mark.kernel


def _messages(fake: FakeAnthropic) -> str:
    return json.dumps(fake.message_requests[-1].body["messages"])


def _tool_use(name: str, **tool_input: Any) -> dict[str, Any]:
    return {"content": [{"type": "tool_use", "name": name, "input": tool_input}]}


def test_after_a_restart_the_first_request_says_which_variables_are_gone(
    start_kernel: Callable[..., Kernel], fake: FakeAnthropic
) -> None:
    kernel = start_kernel()
    kernel.run("%load_ext loom_jupyter")
    fake.add(_tool_use("run_python", code="made_before = 7"), "Set.")
    kernel.run("%cowork set made_before")
    assert kernel.value("made_before") == "7"

    kernel.km.restart_kernel(now=False)
    kernel.kc.wait_for_ready(timeout=60)
    kernel.run("%load_ext loom_jupyter")
    fake.add("It is gone.")
    kernel.run("%cowork is made_before still there?")
    request = _messages(fake)
    assert "the kernel restarted" in request
    assert "variables_gone:\\n- 'made_before: int" in request

    kernel.run("made_before = 8")  # the person makes it again in a cell: live from then on
    fake.add("Back.")
    kernel.run("%cowork and now?")
    request = _messages(fake)
    assert "variables:\\n- 'made_before: int" in request
    assert "variables_gone:\\n- 'made_before" not in request


def test_the_request_after_the_person_ran_cells_mentions_them(
    start_kernel: Callable[..., Kernel], fake: FakeAnthropic
) -> None:
    kernel = start_kernel()
    kernel.run("%load_ext loom_jupyter")
    fake.add("Hello.")
    kernel.run("%cowork hello")
    kernel.run("df_between = 123")
    assert kernel.run("1/0").status == "error"
    fake.add("I see.")
    kernel.run("%cowork what did I just do?")
    request = _messages(fake)
    assert "df_between: int" in request
    assert "ZeroDivisionError: division by zero" in request


async def _other_notebook(notebook: Path, fact: str) -> None:
    notebook.parent.mkdir(parents=True, exist_ok=True)
    async with Archive.open(archive_path_for(notebook)) as archive:
        sid = await archive.create_session(notebook_path=str(notebook), model="m")
        await archive.append_turn(sid, TurnDraft(role="user", content=fact))
        await archive.append_turn(sid, TurnDraft(role="assistant", content="Noted."))


def test_a_fact_from_another_notebook_is_found_and_names_its_notebook(
    start_kernel: Callable[..., Kernel], fake: FakeAnthropic, notebook: Path
) -> None:
    (notebook.parent / ".git").mkdir()
    other = notebook.parent / "prep" / "cleaning.ipynb"
    asyncio.run(_other_notebook(other, "The churn cut-off we agreed on is 0.37."))
    kernel = start_kernel()
    kernel.run("%load_ext loom_jupyter")
    recall = _tool_use(
        "conversation_recall", action="search", query="churn cut-off", scope="all_notebooks"
    )
    fake.add(recall, "It is 0.37, from prep/cleaning.ipynb.")
    kernel.run("%cowork what churn cut-off did we agree on in the other notebook?")
    results = [
        block
        for message in fake.message_requests[-1].body["messages"]
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]
    text = json.dumps(results[-1])
    assert "prep/cleaning.ipynb" in text
    assert "0.37" in text
    assert not results[-1].get("is_error")
