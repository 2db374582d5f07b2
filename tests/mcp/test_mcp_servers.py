"""The MCP client against real servers (stdio and streamable HTTP on 127.0.0.1): tools
with their schemas, results capped and redacted, images, timeouts, crashes and restarts."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from mcp_rig import context, http_config, process_gone, stdio_server, wait_for

from loom_jupyter.mcp.servers import McpServers
from loom_jupyter.messages import ImageBlock, TextBlock, ToolUseBlock
from loom_jupyter.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from loom_jupyter.settings import McpServerConfig
    from loom_jupyter.tools.base import ToolContext, ToolOutput


class Rig:
    """Servers, the registry they joined, and a context to run calls with."""

    def __init__(self, tmp_path: Path, *configs: McpServerConfig, **settings: Any) -> None:
        self.servers = McpServers(configs, cwd=tmp_path)
        self.registry = ToolRegistry()
        self.ctx: ToolContext = context(tmp_path, *configs, **settings)
        self._calls = 0

    async def start(self) -> list[str]:
        notices = await self.servers.start()
        self.servers.attach(self.registry)
        return notices

    async def call(self, tool: str, **args: Any) -> ToolOutput:
        self._calls += 1
        return await self.registry.run(ToolUseBlock(f"call{self._calls}", tool, args), self.ctx)


async def test_stdio_tools_with_their_schemas_run_and_stop_with_the_servers(
    tmp_path: Path,
) -> None:
    rig = Rig(tmp_path, stdio_server("box"))
    assert await rig.start() == []
    names = rig.registry.names()
    assert names[:3] == ("mcp__box__echo", "mcp__box__add", "mcp__box__big")
    add = rig.registry.get("mcp__box__add")
    assert add is not None
    assert add.spec.input_schema["required"] == ["a", "b"]
    assert add.spec.input_schema["properties"]["a"]["type"] == "integer"
    assert add.spec.description.startswith("[MCP server box, tool add] Add two integers.")

    out = await rig.call("mcp__box__add", a=2, b=40)
    assert not out.is_error
    assert out.text_content == "42"
    bad = await rig.call("mcp__box__add", a="two", b=40)  # the registry checks the schema
    assert bad.is_error
    assert "Invalid input" in bad.text_content
    failed = await rig.call("mcp__box__fails")
    assert failed.is_error
    assert "fails" in failed.text_content

    (status,) = rig.servers.status()
    assert (status.state, status.transport, status.tools[0]) == ("running", "stdio", names[0])
    pid = int((await rig.call("mcp__box__pid")).text_content)
    await rig.servers.close()
    await wait_for(lambda: process_gone(pid), "the stdio server to stop")
    assert rig.servers.status()[0].state == "stopped"


async def test_a_5_mb_result_is_capped_and_an_image_reaches_the_model_as_an_image(
    tmp_path: Path,
) -> None:
    rig = Rig(tmp_path, stdio_server("box"), tool_output_max_chars=20_000)
    await rig.start()
    try:
        out = await rig.call("mcp__box__big", size=5_000_000)
        assert not out.is_error
        (block,) = out.content
        assert isinstance(block, TextBlock)
        assert len(block.text) <= 20_000
        assert "characters cut" in block.text
        assert "5,000,000" in block.text
        assert (await rig.call("mcp__box__echo", text="still here")).text_content == "still here"

        picture = await rig.call("mcp__box__picture")
        assert [type(b) for b in picture.content] == [ImageBlock]
        image = picture.content[0]
        assert isinstance(image, ImageBlock)
        assert image.media_type == "image/png"
    finally:
        await rig.servers.close()


async def test_a_slow_tool_ends_within_its_timeout_or_is_reported(tmp_path: Path) -> None:
    rig = Rig(tmp_path, stdio_server("box", timeout=8))
    await rig.start()
    try:
        quick = await rig.call("mcp__box__slow", seconds=0.1)
        assert quick.text_content == "slept 0.1"
        late = await rig.call("mcp__box__slow", seconds=600)
        assert late.is_error
        assert "within its 8 s timeout" in late.text_content
        assert "keeps running" in late.text_content
        assert (await rig.call("mcp__box__echo", text="after")).text_content == "after"
        assert rig.servers.status()[0].state == "running"
    finally:
        await rig.servers.close()


async def test_a_server_that_dies_is_reported_restarted_once_then_reported_dead(
    tmp_path: Path,
) -> None:
    rig = Rig(tmp_path, stdio_server("box"))
    await rig.start()
    try:
        first_pid = int((await rig.call("mcp__box__pid")).text_content)
        died = await rig.call("mcp__box__die")
        assert died.is_error
        text = died.text_content
        assert "The MCP server box stopped during mcp__box__die" in text
        assert "restarted and runs again" in text
        second_pid = int((await rig.call("mcp__box__pid")).text_content)
        assert second_pid != first_pid
        await wait_for(lambda: process_gone(first_pid), "the dead server to be reaped")
        status = rig.servers.status()[0]
        assert (status.state, status.restarts) == ("running", 1)

        again = await rig.call("mcp__box__die")
        assert again.is_error
        assert "stopped again" in again.text_content
        assert "%cowork mcp --restart box" in again.text_content
        assert rig.servers.status()[0].state == "dead"
        refused = await rig.call("mcp__box__echo", text="x")
        assert refused.is_error
        assert "is dead" in refused.text_content

        await rig.servers.restart("box")  # what %cowork mcp --restart box does
        assert (await rig.call("mcp__box__echo", text="back")).text_content == "back"
    finally:
        await rig.servers.close()


async def test_a_server_that_cannot_start_is_reported_with_its_stderr(tmp_path: Path) -> None:
    rig = Rig(tmp_path, stdio_server("broken", mode="broken"), stdio_server("box"))
    notices = await rig.start()
    assert len(notices) == 1
    assert notices[0].startswith("MCP server broken could not start")
    assert "refusing to start" in notices[0]  # the tail of its stderr
    assert [s.state for s in rig.servers.status()] == ["failed", "running"]
    assert all(n.startswith("mcp__box__") for n in rig.registry.names())
    await rig.servers.close()


async def test_env_and_header_values_are_redacted_from_results(
    tmp_path: Path, http_server: Callable[..., str]
) -> None:
    secret = "s3cr3t-value-1234"
    url = http_server(env={"PLAIN_NAME": "http-side-secret-99"})
    rig = Rig(
        tmp_path,
        stdio_server("box", env={"PLAIN_NAME": secret}),
        http_config("web", url, headers={"Authorization": "Bearer http-side-secret-99"}),
    )
    await rig.start()
    try:
        out = await rig.call("mcp__box__env_value", name="PLAIN_NAME")
        assert secret not in out.text_content
        assert "[REDACTED]" in out.text_content
        echoed = await rig.call("mcp__web__echo", text=f"token http-side-secret-99 and {secret}")
        assert "secret" not in echoed.text_content.replace("[REDACTED]", "")
        inherited = await rig.call("mcp__box__env_value", name="XDG_CONFIG_HOME")
        assert inherited.text_content == "<unset>"  # stdio servers get a small environment
    finally:
        await rig.servers.close()


async def test_streamable_http_on_loopback_big_results_and_images(
    tmp_path: Path, http_server: Callable[..., str]
) -> None:
    url = http_server()
    rig = Rig(tmp_path, http_config("web", url, timeout=120), http_config("hasty", url, timeout=5))
    assert await rig.start() == []
    try:
        status = rig.servers.status()[0]
        assert (status.transport, status.state) == ("http", "running")
        assert (await rig.call("mcp__web__add", a=1, b=2)).text_content == "3"
        big = await rig.call("mcp__web__big", size=5_000_000)
        assert not big.is_error
        assert "characters cut" in big.text_content
        picture = await rig.call("mcp__web__picture")
        assert isinstance(picture.content[0], ImageBlock)
        late = await rig.call("mcp__hasty__slow", seconds=600)
        assert late.is_error
        assert "timeout" in late.text_content
        assert (await rig.call("mcp__web__echo", text="ok")).text_content == "ok"
    finally:
        await rig.servers.close()


async def test_an_http_server_that_dies_is_reported_and_its_restart_fails(
    tmp_path: Path, http_server: Callable[..., str]
) -> None:
    rig = Rig(tmp_path, http_config("web", http_server(), timeout=20))
    await rig.start()
    try:
        died = await rig.call("mcp__web__die")
        assert died.is_error
        assert "The MCP server web stopped during mcp__web__die" in died.text_content
        assert "restarting it failed" in died.text_content  # nothing listens there any more
        assert rig.servers.status()[0].state == "failed"
        refused = await rig.call("mcp__web__echo", text="x")
        assert refused.is_error
        assert "failed" in refused.text_content
    finally:
        await rig.servers.close()


def test_server_specs_are_plain_json(tmp_path: Path) -> None:
    # What reaches the model's prefix is plain JSON: byte-stable across runs.
    config = stdio_server("box")
    assert json.loads(json.dumps(config.args)) == list(config.args)
