"""``loom-jupyter mcp`` end to end (DESIGN §14, issue 32): a real Jupyter Server with a token
and a base path, a notebook opened through its REST API, the MCP SDK's own stdio client.

The bridge finds the server in the runtime folder (or is given ``--server-url`` and
``--token``), loads Loom into the notebook's kernel, and every call runs through the kernel's
host under the session's approval mode (``ask`` unless the person says otherwise), is archived
marked with the client's name, and errors come back as tool results that say what to do.
The page's side (diffs, Accept) is ``tests/browser/test_outside_in_lab.py``.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import pytest
from jupyter_rig import CLIENT_SHOWN, JupyterRig, execute

from loom_jupyter.outside.tools import BRIDGE_TOOLS

if TYPE_CHECKING:
    from mcp.types import CallToolResult

pytestmark = pytest.mark.kernel

NOTEBOOK = "analysis.ipynb"


def text(result: CallToolResult) -> str:
    return "\n".join(getattr(part, "text", "") for part in result.content)


@pytest.fixture(scope="module")
def kernel_id(rig: JupyterRig) -> str:
    rig.notebook(NOTEBOOK, "base = 6", "print(base * 7)")
    return rig.open(NOTEBOOK)


async def test_lists_loom_tools_with_their_own_inputs(rig: JupyterRig, kernel_id: str) -> None:
    async with rig.bridge() as client:
        listed = (await client.list_tools()).tools
    assert [tool.name for tool in listed] == list(BRIDGE_TOOLS)
    by_name = {tool.name: tool for tool in listed}
    assert by_name["run_python"].input_schema["required"] == ["code"]
    assert by_name["variable_provenance"].input_schema["required"] == ["name"]
    assert "notebook" in (by_name["run_python"].description or "")
    assert "approves" in (by_name["edit_cell"].description or "")


async def test_calls_run_in_the_notebooks_kernel_and_are_archived_as_the_clients(
    rig: JupyterRig, kernel_id: str
) -> None:
    kernel = rig.kernel(kernel_id)
    async with rig.bridge() as client:  # found in the runtime folder; Loom loaded on demand
        read = await client.call_tool("read_notebook", {})
        assert read.is_error is False, text(read)
        assert "base = 6" in text(read)
        refused = await client.call_tool("run_python", {"code": "answer = base * 7"})
        assert refused.is_error is True  # `ask`, and no page open to ask on
        assert "%cowork approval" in text(refused)
        execute(kernel, "%cowork approval auto")  # the person's word, in the kernel
        try:
            ran = await client.call_tool("run_python", {"code": "base = 6\nanswer = base * 7"})
            assert ran.is_error is False, text(ran)
            assert execute(kernel, "answer") == "42"  # in the notebook's own namespace
            traced = await client.call_tool("variable_provenance", {"name": "answer"})
            assert traced.is_error is False, text(traced)
            assert "answer = base * 7" in text(traced)
            recalled = await client.call_tool(
                "conversation_recall", {"action": "tool_calls", "tool_name": "run_python"}
            )
            assert recalled.is_error is False, text(recalled)
            assert "answer = base * 7" in text(recalled)
        finally:
            execute(kernel, "%cowork approval ask")
    rows = rig.archive(
        NOTEBOOK,
        "SELECT o.client, t.tool_name, t.is_error FROM outside_calls o "
        "JOIN conversation_turns t USING (session_id, turn_number) ORDER BY t.turn_number",
    )
    assert [row[:2] for row in rows] == [
        (CLIENT_SHOWN, "read_notebook"),
        (CLIENT_SHOWN, "run_python"),
        (CLIENT_SHOWN, "run_python"),
        (CLIENT_SHOWN, "variable_provenance"),
        (CLIENT_SHOWN, "conversation_recall"),
    ]
    assert [row[2] for row in rows] == [0, 1, 0, 0, 0]  # the refusal is archived too


async def test_a_server_url_with_a_base_path_and_the_notebook_by_its_real_path(
    rig: JupyterRig, kernel_id: str
) -> None:
    for url in (rig.url, rig.url + "/"):
        args = ("--server-url", url, "--token", rig.token, "--notebook", str(rig.root / NOTEBOOK))
        async with rig.bridge(*args, env=rig.bridge_env(JUPYTER_RUNTIME_DIR="/nonexistent")) as c:
            listed = await c.call_tool("list_notebooks", {})
            assert listed.is_error is False, text(listed)
            assert f"{NOTEBOOK} (kernel python3" in text(listed)
            assert "<- the tools work here" in text(listed)
            looked = await c.call_tool("inspect_variables", {})
            assert looked.is_error is False, text(looked)


@pytest.mark.parametrize(
    ("args", "env", "tool", "arguments", "says"),
    [
        pytest.param((), {"JUPYTER_RUNTIME_DIR": "EMPTY"}, "inspect_variables", {},
                     "No running Jupyter Server was found", id="no server"),
        pytest.param(("--server-url", "URL", "--token", "wrong"), {}, "inspect_variables", {},
                     "refused the token", id="wrong token"),
        pytest.param(("--notebook", "missing.ipynb"), {}, "inspect_variables", {},
                     "missing.ipynb is not open", id="notebook not open"),
        pytest.param((), {}, "run_python", {"cod": "1"}, "Invalid input for run_python",
                     id="bad input"),
        pytest.param((), {}, "variable_provenance", {}, "Invalid input for variable_provenance",
                     id="bad provenance input"),
        pytest.param((), {}, "delete_everything", {}, "Unknown tool 'delete_everything'",
                     id="unknown tool"),
    ],
)  # fmt: skip
async def test_each_error_is_a_tool_result_that_says_what_to_do(
    rig: JupyterRig,
    kernel_id: str,
    tmp_path: Any,
    args: tuple[str, ...],
    env: dict[str, str],
    tool: str,
    arguments: dict[str, Any],
    says: str,
) -> None:
    args = tuple(rig.url if a == "URL" else a for a in args)
    extra = {k: str(tmp_path) if v == "EMPTY" else v for k, v in env.items()}
    async with rig.bridge(*args, env=rig.bridge_env(**extra)) as client:
        result = await client.call_tool(tool, arguments)
        assert result.is_error is True
        assert says in text(result)
        assert "Error executing tool" not in text(result)
        listed = await client.list_tools()  # the server keeps answering
        assert len(listed.tools) == len(BRIDGE_TOOLS)


async def test_a_kernel_restarted_mid_call_says_so_and_the_next_call_reattaches(
    rig: JupyterRig, tmp_path: Any
) -> None:
    name = "restarts.ipynb"
    rig.notebook(name, "x = 1")
    restarting = rig.open(name)
    kernel = rig.kernel(restarting)
    async with rig.bridge("--notebook", name) as client:
        first = await client.call_tool("inspect_variables", {})  # loads Loom
        assert first.is_error is False, text(first)
        execute(kernel, "%cowork approval auto")
        marker = tmp_path / "started"
        code = f"import pathlib, time\npathlib.Path({str(marker)!r}).touch()\ntime.sleep(600)"
        call = asyncio.ensure_future(client.call_tool("run_python", {"code": code}))
        await asyncio.to_thread(rig.wait, marker.exists, "the long call to start")
        await asyncio.to_thread(rig.rest, "POST", f"api/kernels/{restarting}/restart")
        result = await asyncio.wait_for(call, 240)
        assert result.is_error is True
        assert "restarted while the call ran" in text(result)
        again = await client.call_tool("read_notebook", {})  # Loom loaded again, same server
        assert again.is_error is False, text(again)
        assert "x = 1" in text(again)
