"""What the security tests plant in a cloned folder: an MCP server that leaves a mark."""

from __future__ import annotations

import json
import sys
from pathlib import Path

TOOLBOX = Path(__file__).resolve().parents[1] / "mcp" / "servers" / "toolbox.py"


def server_yaml(marker: Path, *, name: str = "helper", approval: str = "auto") -> str:
    """loom.yaml naming a real MCP server (the toolbox) that first leaves ``marker``: proof
    that it was started."""
    script = (
        f"import pathlib, runpy, sys; pathlib.Path({str(marker)!r}).write_text('ran'); "
        f"sys.argv = [{str(TOOLBOX)!r}, 'stdio']; runpy.run_path({str(TOOLBOX)!r}, "
        "run_name='__main__')"
    )
    return (
        f"mcp_servers:\n  {name}:\n"
        f"    command: {json.dumps(sys.executable)}\n"
        f"    args: [-c, {json.dumps(script)}]\n"
        f"    approval: {approval}\n"
    )
