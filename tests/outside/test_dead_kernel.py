"""A kernel that dies for good while an outside agent's call runs (DESIGN §14): Jupyter
Server is told not to restart it (``restart_limit=0``), so it is left dead. The call comes
back as an error that says what to do, and so does the next one; the bridge keeps answering.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from jupyter_rig import JupyterRig, execute, start_rig

if TYPE_CHECKING:
    from collections.abc import Iterator

    from mcp.types import CallToolResult

pytestmark = pytest.mark.kernel


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterRig]:
    started = start_rig(
        tmp_path_factory.mktemp("jupyter-dead"),
        "--KernelRestarter.restart_limit=0",
        LOOM_APPROVAL="auto",
    )
    yield started
    started.stop()


def text(result: CallToolResult) -> str:
    return "\n".join(getattr(part, "text", "") for part in result.content)


async def test_a_kernel_that_dies_mid_call_says_so_and_the_bridge_keeps_answering(
    rig: JupyterRig,
) -> None:
    rig.notebook("dies.ipynb", "x = 1")
    kernel_id = rig.open("dies.ipynb")
    assert execute(rig.kernel(kernel_id), "1 + 1") == "2"
    async with rig.bridge("--notebook", "dies.ipynb") as client:
        alive = await client.call_tool("inspect_variables", {})
        assert alive.is_error is False, text(alive)
        code = "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)"
        died = await client.call_tool("run_python", {"code": code})
        assert died.is_error is True
        assert "died while the call ran" in text(died)
        assert "Restart it in JupyterLab" in text(died)
        after = await client.call_tool("inspect_variables", {})
        assert after.is_error is True  # Jupyter Server dropped the dead kernel's session
        assert "dies.ipynb is not open with a running kernel" in text(after)
        assert "Kernel > Restart Kernel" in text(after)
        assert "Error executing tool" not in text(after)
        assert len((await client.list_tools()).tools) == 10
