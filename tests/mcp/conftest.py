"""The ``http_server`` fixture: the toolbox over streamable HTTP on 127.0.0.1."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from typing import TYPE_CHECKING

import pytest
from mcp_rig import START_DEADLINE, TOOLBOX

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[Callable[..., str]]:
    """``url = http_server(env={...})`` starts the toolbox over streamable HTTP on a free
    127.0.0.1 port (the server binds port 0 and writes it to a file); stopped by its pid."""
    started: list[subprocess.Popen[bytes]] = []

    def start(env: dict[str, str] | None = None) -> str:
        port_file = tmp_path / f"port-{len(started)}"
        proc = subprocess.Popen(
            [sys.executable, str(TOOLBOX), "http", str(port_file)],
            env={**os.environ, **(env or {})},
            stderr=subprocess.DEVNULL,
        )
        started.append(proc)
        end = time.monotonic() + START_DEADLINE
        while not port_file.exists():
            if proc.poll() is not None or time.monotonic() > end:
                raise AssertionError("the HTTP toolbox did not start")
            time.sleep(0.05)
        return f"http://127.0.0.1:{port_file.read_text()}/mcp"

    yield start
    for proc in started:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
