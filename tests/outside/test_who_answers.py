"""Outside agents know who can answer (issue 38.6; a newcomer's D1): through ``loom-jupyter
mcp`` and a real Jupyter Server, beside pages played over ZMQ (``raw_page.py``).

- Without ``--notebook`` the bridge works in the notebook on screen in JupyterLab, not the
  one whose kernel was active last, and ``list_notebooks`` says which and why.
- A write call under ``ask`` is refused at once, with the reason, when the notebook's page
  closed its comm or went silent (a tab that closed without closing it): pages that went
  away are noticed, not waited for.
- When the bridge's client goes away mid-call, the bridge ends quietly (status 0, nothing on
  stderr) and the kernel closes the card the call raised.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import TYPE_CHECKING, Any

import pytest
from jupyter_rig import CALL_SECONDS, JupyterRig, execute
from raw_page import RawPage

if TYPE_CHECKING:
    from collections.abc import Iterator

    from mcp.types import CallToolResult

pytestmark = pytest.mark.kernel

SHOWN, BUSY = "shown.ipynb", "busy.ipynb"
NO_PAGE = "no page with the Loom sidebar is open"


def text(result: CallToolResult) -> str:
    return "\n".join(getattr(part, "text", "") for part in result.content)


def line_of(listing: str, notebook: str) -> str:
    return next(line for line in listing.splitlines() if line.startswith(f"- {notebook} "))


@pytest.fixture(scope="module")
def kernels(rig: JupyterRig) -> dict[str, str]:
    """Two notebooks with Loom loaded; the kernel of ``busy.ipynb`` ran a cell last."""
    rig.notebook(SHOWN, "shown = 'on screen'")
    rig.notebook(BUSY, "busy = 'active last'")
    ids = {SHOWN: rig.open(SHOWN), BUSY: rig.open(BUSY)}
    for name, value in ((SHOWN, "shown = 'on screen'"), (BUSY, "busy = 'active last'")):
        kernel = rig.kernel(ids[name])
        assert "Error" not in execute(kernel, "%load_ext loom_jupyter")
        execute(kernel, value)
    return ids


@pytest.fixture
def page(rig: JupyterRig, kernels: dict[str, str]) -> Iterator[RawPage]:
    """A page on ``shown.ipynb`` that shows it, answering pings."""
    opened = RawPage(rig.kernel(kernels[SHOWN])).open()
    yield opened
    opened.close()
    opened.stop()


def last_active(rig: JupyterRig) -> dict[str, str]:
    sessions = rig.rest("GET", "api/sessions")
    return {s["path"]: s["kernel"]["last_activity"] for s in sessions}


async def test_without_notebook_the_bridge_works_in_the_notebook_on_screen(
    rig: JupyterRig, kernels: dict[str, str], page: RawPage
) -> None:
    execute(rig.kernel(kernels[BUSY]), "busy = 'active last'")  # after the page opened
    active = last_active(rig)
    assert active[BUSY] > active[SHOWN]  # what the bridge picked before: the wrong one

    async with rig.bridge() as client:
        listed = await client.call_tool("list_notebooks", {})
        assert listed.is_error is False, text(listed)
        listing = text(listed)
        assert line_of(listing, SHOWN).endswith("<- the tools work here"), listing
        assert "on screen, 1 page(s) open" in line_of(listing, SHOWN)
        assert "never on screen, no page open" in line_of(listing, BUSY)
        assert f"The tools work in {SHOWN}: it is on screen in JupyterLab." in listing
        looked = await client.call_tool("inspect_variables", {})
        assert looked.is_error is False, text(looked)
        assert "shown" in text(looked)
        assert "busy" not in text(looked)

    async with rig.bridge() as client:  # the first call chooses too, without list_notebooks
        read = await client.call_tool("read_notebook", {})
        assert read.is_error is False, text(read)
        assert "shown = 'on screen'" in text(read)


async def test_a_write_is_refused_at_once_when_the_page_closed_or_went_silent(
    rig: JupyterRig, kernels: dict[str, str], page: RawPage
) -> None:
    async with rig.bridge("--notebook", SHOWN) as client:
        page.decide = "deny"  # the page is there: it is asked, and says no
        asked = await client.call_tool("run_python", {"code": "wrote = 1"})
        assert asked.is_error is True
        assert NO_PAGE not in text(asked)
        assert page.of("approval"), "the live page was asked"

        page.close()  # the tab closed its comm
        closed = await client.call_tool("run_python", {"code": "wrote = 2"})
        assert closed.is_error is True
        assert NO_PAGE in text(closed)
        assert "%cowork approval auto" in text(closed)

        silent = RawPage(rig.kernel(kernels[SHOWN])).open()
        try:
            listed = await client.call_tool("list_notebooks", {})
            assert "on screen, 1 page(s) open" in line_of(text(listed), SHOWN)
            silent.answering = False  # its tab closed without closing the comm
            gone = await client.call_tool("run_python", {"code": "wrote = 3"})
            assert gone.is_error is True
            assert NO_PAGE in text(gone)
            assert silent.of("ping")
            assert not silent.of("approval")  # no card for a page that is gone
        finally:
            silent.close()
            silent.stop()
    assert "NameError" in execute(rig.kernel(kernels[SHOWN]), "wrote")


def mcp_message(process: subprocess.Popen[bytes], message: dict[str, Any]) -> None:
    assert process.stdin is not None
    process.stdin.write((json.dumps(message) + "\n").encode())
    process.stdin.flush()


def test_the_bridge_ends_quietly_when_its_client_goes_away(
    rig: JupyterRig, kernels: dict[str, str], page: RawPage
) -> None:
    """The client quits while a call waits for the person: no traceback, status 0, and the
    kernel closes the card nobody will wait for."""
    argv = [sys.executable, "-m", "loom_jupyter.cli", "mcp", "--notebook", SHOWN]
    process = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=rig.bridge_env(),
        cwd=str(rig.root.parent),
    )
    assert process.stdout is not None
    assert process.stderr is not None
    client = {"name": "claude-code", "version": "2.1.0"}
    params = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": client}
    mcp_message(process, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
    assert b'"id":1' in process.stdout.readline()
    mcp_message(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    call = {"name": "run_python", "arguments": {"code": "left_behind = 1"}}
    mcp_message(process, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call})
    card = page.wait(lambda: page.of("approval"), "the call's approval card")[-1]

    process.stdout.close()  # the client is gone: both of its pipe ends close
    process.stdin.close()  # type: ignore[union-attr]
    assert process.wait(timeout=CALL_SECONDS) == 0
    assert process.stderr.read().decode() == ""
    process.stderr.close()
    closed = page.wait(
        lambda: [e for e in page.of("approval_closed") if e["request_id"] == card["request_id"]],
        "the card closed by the kernel",
    )
    assert closed[-1]["decision"] == "deny"
    assert "NameError" in execute(rig.kernel(kernels[SHOWN]), "left_behind")
