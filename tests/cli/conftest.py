"""CLI fixtures: a notebook whose archive holds two sessions."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from clirun import Notebook

from loom_jupyter.archive import Archive, archive_path_for
from loom_jupyter.messages import TextBlock, ToolResultBlock, ToolUseBlock, TurnDraft, Usage

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture
async def notebook(tmp_path: Path) -> Notebook:
    path = tmp_path / "sales analysis.ipynb"
    path.write_text("{}")
    code = {"code": "df = pd.read_csv('sales.csv')"}
    async with Archive.open(archive_path_for(path)) as archive:
        older = await archive.create_session(notebook_path=str(path), model="claude-sonnet")
        await archive.append_turn(
            older, TurnDraft(role="user", content="Load sales.csv and plot revenue")
        )
        await archive.append_turn(
            older,
            TurnDraft(
                role="assistant",
                content="Loading it.",
                blocks=(TextBlock("Loading it."), ToolUseBlock("tu_1", "run_python", code)),
            ),
        )
        await archive.append_turn(
            older,
            TurnDraft(
                role="tool",
                content="KeyError: 'revenue'",
                tool_name="run_python",
                tool_call_id="tu_1",
                tool_input=code,
                is_error=True,
                blocks=(ToolResultBlock("tu_1", (TextBlock("KeyError: 'revenue'"),), True),),
            ),
        )
        await archive.append_turn(
            older, TurnDraft(role="assistant", content="The column is `Revenue`.")
        )
        await archive.record_model_call(
            older,
            model="claude-sonnet",
            usage=Usage(1200, 300),
            stop_reason="end_turn",
            latency_ms=800.0,
            cost_usd=0.0125,
        )
        newer = await archive.create_session(notebook_path=str(path), model="claude-sonnet")
        await archive.append_turn(newer, TurnDraft(role="user", content="Find outliers in revenue"))
    return Notebook(path, older, newer)
