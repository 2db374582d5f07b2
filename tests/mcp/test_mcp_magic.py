"""``%cowork mcp`` on a real in-process IPython shell: servers, state and tools."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import pytest
from mcp_rig import TOOLBOX

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from IPython.core.interactiveshell import InteractiveShell

    from loom_jupyter.testing import FakeAnthropic

pytest_plugins = ["loom_jupyter.testing.pytest_plugin"]


@pytest.fixture
def shell() -> Iterator[InteractiveShell]:
    from IPython.core.interactiveshell import InteractiveShell

    ip = InteractiveShell.instance()
    ip.reset(new_session=False)
    yield ip
    ip.reset(new_session=False)


def test_cowork_mcp_lists_servers_state_and_tools(
    shell: InteractiveShell,
    fake_anthropic: FakeAnthropic,
    notebook: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (notebook.parent / "loom.yaml").write_text(
        "mcp_servers:\n"
        f"  box:\n    command: {sys.executable}\n    args: [{TOOLBOX}, stdio]\n"
        f"  broken:\n    command: {sys.executable}\n    args: [{TOOLBOX}, broken]\n"
        "    approval: read-only\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("JPY_SESSION_NAME", str(notebook))
    shell.run_line_magic("load_ext", "loom_jupyter")
    try:
        capsys.readouterr()
        shell.run_line_magic("cowork", "mcp")  # the folder is not trusted: nothing starts
        untrusted = capsys.readouterr().out
        assert "needs trust" in untrusted
        assert "running" not in untrusted
        shell.run_line_magic("cowork", "trust --yes")
        assert "Trusted" in capsys.readouterr().out
        shell.run_line_magic("cowork", "mcp --help")
        assert "%cowork mcp" in capsys.readouterr().out
        shell.run_line_magic("cowork", "mcp")
        table = capsys.readouterr().out
        lines = table.splitlines()
        box = next(line for line in lines if line.startswith("box "))
        assert "stdio:" in box
        assert "running" in box
        assert "echo, add, big" in box
        broken = next(line for line in lines if line.startswith("broken "))
        assert "failed: could not start" in broken
        assert "read-only" in broken
        assert "mcp__SERVER__TOOL" in table
        shell.run_line_magic("cowork", "mcp --restart nosuch")
        assert "No MCP server named 'nosuch'" in capsys.readouterr().out
    finally:
        shell.run_line_magic("unload_ext", "loom_jupyter")
