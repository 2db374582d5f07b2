"""MCP tools in a real session: the model (the real SDK against the fake Messages API)
calls ``mcp__box__TOOL`` on a real stdio server; results, images and refusals are archived."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from typing import TYPE_CHECKING, Any

import pytest
from mcp_rig import stdio_server, wait_for

from loom_jupyter.engine.events import TurnDone
from loom_jupyter.models.anthropic import AnthropicModel
from loom_jupyter.session.conversation import CoworkSession
from loom_jupyter.settings import Settings
from loom_jupyter.testing.fake_anthropic import FakeAnthropic
from loom_jupyter.tools.registry import default_registry

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable
    from pathlib import Path

    from loom_jupyter.archive import Archive
    from loom_jupyter.tools.local_kernel import LocalKernel

SECRET = "mcp-env-secret-7f3a9"


@pytest.fixture
async def open_session(
    archive: Archive, notebook: Path, kernel: LocalKernel
) -> AsyncIterator[Callable[..., Any]]:
    """``session, fake = await open_session(script, **settings)``; closed at teardown."""
    import anthropic

    opened: list[tuple[CoworkSession, FakeAnthropic, Any]] = []

    async def factory(script: list[Any], **values: Any) -> tuple[CoworkSession, FakeAnthropic]:
        fake = FakeAnthropic(script, default="error").start()
        client = anthropic.AsyncAnthropic(
            api_key="sk-ant-mcp-tests-0000000000",
            base_url=fake.base_url,
            _strict_response_validation=True,
        )
        values.setdefault("approval", "auto")
        settings = Settings(**values)
        session = await CoworkSession.open(
            archive,
            notebook_path=notebook,
            settings=settings,
            model=AnthropicModel(settings, client=client, retry_backoff_seconds=0.01),
            kernel=kernel,
            tools=default_registry(),
        )
        opened.append((session, fake, client))
        return session, fake

    yield factory
    for session, fake, client in opened:
        await session.close()
        await client.close()
        fake.stop()


def call(tool: str, **args: Any) -> dict[str, Any]:
    return {"content": [{"type": "tool_use", "name": tool, "input": args}]}


async def test_the_model_calls_mcp_tools_and_the_results_are_archived(
    open_session: Callable[..., Any], archive: Archive
) -> None:
    script = [
        call("mcp__box__echo", text="hello from mcp"),
        call("mcp__box__picture"),
        call("mcp__box__env_value", name="PLAIN_NAME"),
        "All done.",
        "Still here.",
    ]
    server = stdio_server("box", env={"PLAIN_NAME": SECRET})
    session, fake = await open_session(script, mcp_servers=(server,))
    assert session.mcp is not None
    assert session.mcp.status()[0].state == "not started"  # nothing starts before first use

    events = [e async for e in session.send("Use the box.")]
    assert isinstance(events[-1], TurnDone), events[-1]
    assert events[-1].text.endswith("All done.")
    events = [e async for e in session.send("Again?")]
    assert isinstance(events[-1], TurnDone)

    assert session.session_id is not None
    turns = await archive.get_turns(session.session_id)
    tools = [t for t in turns if t.role == "tool"]
    assert [t.tool_name for t in tools] == [
        "mcp__box__echo",
        "mcp__box__picture",
        "mcp__box__env_value",
    ]
    assert "hello from mcp" in tools[0].content
    assert "[REDACTED]" in tools[2].content
    everything = json.dumps([[t.content, repr(t.blocks)] for t in turns])
    assert SECRET not in everything

    bodies = [r.body for r in fake.message_requests]
    builtin = [t.spec.name for t in default_registry()]
    for body in bodies:  # the same tools, in the same order, in every request
        assert [t["name"] for t in body["tools"]] == [t["name"] for t in bodies[0]["tools"]]
    names = [t["name"] for t in bodies[0]["tools"]]
    assert names[: len(builtin)] == builtin
    assert names[len(builtin) :][:2] == ["mcp__box__echo", "mcp__box__add"]
    add = next(t for t in bodies[0]["tools"] if t["name"] == "mcp__box__add")
    assert add["input_schema"]["required"] == ["a", "b"]

    results = [b for m in bodies[2]["messages"] for b in m["content"] if b["type"] == "tool_result"]
    result = results[-1]
    assert [b["type"] for b in result["content"]] == ["image"]
    assert result["content"][0]["source"]["media_type"] == "image/png"

    await session.close()
    await wait_for(lambda: session.mcp.status()[0].state == "stopped", "the server to stop")


async def test_a_read_only_session_refuses_every_mcp_tool(
    open_session: Callable[..., Any], archive: Archive
) -> None:
    server = stdio_server("box", approval="auto")
    session, _ = await open_session(
        [call("mcp__box__echo", text="x"), "Understood."],
        approval="read-only",
        mcp_servers=(server,),
    )
    events = [e async for e in session.send("Try it.")]
    assert isinstance(events[-1], TurnDone)
    assert session.session_id is not None
    (tool,) = [t for t in await archive.get_turns(session.session_id) if t.role == "tool"]
    assert tool.is_error
    assert "read-only" in tool.content


async def test_a_server_that_cannot_start_is_a_notice_and_the_turn_goes_on(
    open_session: Callable[..., Any],
) -> None:
    session, fake = await open_session(
        ["No tools then."], mcp_servers=(stdio_server("broken", mode="broken"),)
    )
    events = [e async for e in session.send("Hello")]
    notices = [e for e in events if e.kind == "notice"]
    assert any("MCP server broken could not start" in n.message for n in notices)
    assert isinstance(events[-1], TurnDone)
    names = [t["name"] for t in fake.message_requests[0].body["tools"]]
    assert not any(n.startswith("mcp__") for n in names)


def test_opening_a_session_with_mcp_servers_does_not_import_the_sdk(tmp_path: Path) -> None:
    code = textwrap.dedent(
        f"""
        import asyncio, sys
        from loom_jupyter.archive import Archive
        from loom_jupyter.models.scripted import ScriptedModel
        from loom_jupyter.session.conversation import CoworkSession
        from loom_jupyter.settings import Settings

        async def main():
            settings = Settings(mcp_servers={{"box": {{"command": "python", "args": ["x.py"]}}}})
            async with Archive.open({str(tmp_path / "a.sqlite")!r}) as archive:
                session = await CoworkSession.open(
                    archive, notebook_path={str(tmp_path / "n.ipynb")!r}, settings=settings,
                    model=ScriptedModel([]),
                )
                assert session.mcp is not None and len(session.mcp) == 1
                await session.close()
            assert "mcp" not in sys.modules, "the mcp SDK was imported"

        asyncio.run(main())
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
