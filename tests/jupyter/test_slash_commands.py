"""The sidebar's slash commands are one table: ``/help`` lists it, the kernel dispatches
every command it answers, and the front's generated table is the same rows."""

from __future__ import annotations

import json
import re

from loom_jupyter.buildtools import contract
from loom_jupyter.host import commands
from loom_jupyter.host.commands import SLASH_COMMANDS, help_text, run_command


def test_help_is_the_table_line_for_line() -> None:
    lines = [line for line in help_text().splitlines() if line.startswith("- ")]
    assert lines == [f"- `{c.usage}` — {c.description}" for c in SLASH_COMMANDS]
    assert [c.name for c in SLASH_COMMANDS if c.front] == ["new", "fork", "sessions", "search"]
    assert next(c for c in SLASH_COMMANDS if c.name == "rebuild").usage == (
        "/rebuild NAME [NAME ...] [--yes]"
    )


def test_every_command_the_kernel_answers_has_a_handler_and_only_those() -> None:
    kernel_side = {c.name for c in SLASH_COMMANDS if not c.front}
    assert set(commands._HANDLERS) == kernel_side


async def test_a_front_command_that_reaches_the_kernel_gets_its_usage() -> None:
    result = await run_command(None, "search", "")  # type: ignore[arg-type]  # no host needed
    assert not result.ok
    assert result.text.startswith("Usage: `/search WORDS` — search every conversation")


def test_the_fronts_generated_table_has_the_same_rows() -> None:
    ts = contract.commands_ts()
    rows = re.findall(r"^  \{ (.*) \},?$", ts, re.MULTILINE)
    parsed = [json.loads("{" + re.sub(r"(\w+): ", r'"\1": ', row) + "}") for row in rows]
    assert parsed == [
        {
            "name": c.name,
            "args": c.args,
            "description": c.description,
            "front": c.front,
            "usage": c.usage,
        }
        for c in SLASH_COMMANDS
    ]
