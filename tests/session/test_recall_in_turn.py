"""conversation_recall during a turn never offers the question being answered as a hit."""

from __future__ import annotations

from typing import TYPE_CHECKING

from loom_jupyter.messages import ToolResultBlock
from loom_jupyter.models.scripted import ScriptedModel, text, tool_call

from .conftest import OpenSession, collect

if TYPE_CHECKING:
    from loom_jupyter.models.base import ModelRequest

QUESTION = "Which holdout threshold did we settle on for the churn model?"


def _recall_result(request: ModelRequest) -> str:
    block = request.messages[-2].content[0]
    assert isinstance(block, ToolResultBlock)
    return block.text


async def test_recall_finds_the_earlier_answer_not_the_question(open_session: OpenSession) -> None:
    model = ScriptedModel(
        [
            text("Noted: the churn model uses a holdout threshold of 0.42."),
            tool_call("conversation_recall", {"action": "search", "query": QUESTION}),
            text("We settled on 0.42."),
        ]
    )
    session = await open_session(model)
    await collect(session, "Set the churn model's holdout threshold to 0.42.")
    await collect(session, QUESTION)
    result = _recall_result(model.requests[-1])
    assert "holdout threshold of 0.42" in result
    assert "(match) user: Which holdout threshold" not in result
    assert "[Turn 3]" not in result  # the question is turn 3 of the session


async def test_recall_with_only_the_question_matching_finds_nothing(
    open_session: OpenSession,
) -> None:
    model = ScriptedModel(
        [tool_call("conversation_recall", {"action": "search", "query": "zebrafish"}), text("-")]
    )
    session = await open_session(model)
    await collect(session, "Did we ever talk about zebrafish?")
    assert _recall_result(model.requests[-1]).startswith("No matches for 'zebrafish'")
