"""The sidebar's slash commands are one table: ``/help`` lists it, the kernel dispatches
every command it answers, and the front's generated table is the same rows."""

from __future__ import annotations

import json
from pathlib import Path

from loom_jupyter.buildtools import contract
from loom_jupyter.host.commands.registry import COMMANDS, handler
from loom_jupyter.host.commands.slash import SLASH_COMMANDS, help_text, run_command

ROOT = Path(__file__).resolve().parents[2]


def test_help_is_the_table_line_for_line() -> None:
    lines = [line for line in help_text().splitlines() if line.startswith("- ")]
    assert lines == [f"- `{c.usage}` — {c.description}" for c in SLASH_COMMANDS]
    assert [c.name for c in SLASH_COMMANDS if c.front] == ["new", "fork", "sessions", "search"]
    assert next(c for c in SLASH_COMMANDS if c.name == "rebuild").usage == (
        "/rebuild NAME [NAME ...] [--yes]"
    )


def test_every_command_the_kernel_answers_has_a_handler_and_only_those() -> None:
    kernel_side = {c.name for c in SLASH_COMMANDS if not c.front}
    for spec in COMMANDS:
        kernel_answers = set(spec.fronts) - set(spec.by_front)
        if spec.name in kernel_side or kernel_answers:
            assert callable(handler(spec)), spec.name
        else:  # answered by every front that offers it: no handler to keep in step
            assert spec.handler is None, spec.name


async def test_a_front_command_that_reaches_the_kernel_gets_its_usage() -> None:
    result = await run_command(None, "search", "")  # type: ignore[arg-type]  # no host needed
    assert not result.ok
    assert result.text.startswith("Usage: `/search WORDS` — search every conversation")


def test_the_fronts_test_table_is_the_kernels() -> None:
    """The page completes from ``welcome.commands``; its jest tests (and a 1.0 kernel's
    page) use today's table, generated into ``lists.ts``: the kernel's rows."""
    lists = (ROOT / contract.LISTS_PATH).read_text()
    assert lists == contract.lists(), f"{contract.LISTS_PATH} is stale: run the contract"
    table = lists.split("export const SLASH_COMMANDS: readonly SlashCommand[] = ", 1)[1]
    copy = json.loads(table.rstrip().removesuffix(";"))
    assert copy == [
        {"name": c.name, "args": c.args, "description": c.description, "front": c.front}
        for c in SLASH_COMMANDS
    ]


def test_the_protocol_pages_table_is_generated_from_the_registry() -> None:
    page = (ROOT / contract.DOC_PATH).read_text()
    table = contract.tables(contract.schema())["slash-commands"]
    assert table in page
    for c in SLASH_COMMANDS:
        by = "the front" if c.front else "the kernel (`command`)"
        assert f"| `{c.usage}` | {by} | {c.description} |" in table
