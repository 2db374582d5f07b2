"""A real Jupyter Server on 127.0.0.1 and ``loom-jupyter mcp`` under the SDK's own client.

The server runs with a token and a base path, its runtime folder of its own (where
``loom-jupyter mcp`` finds it, as ``jupyter server list`` does); notebooks are opened through
its REST API (``POST /api/sessions``), which starts their kernels as JupyterLab would. A test
reads the kernel back through its connection file with ``jupyter_client``, independently of
Loom. Nothing here sleeps for timing: every wait is on a condition, with generous deadlines.
"""

from __future__ import annotations

import json
import os
import queue
import secrets
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

    from jupyter_client.blocking.client import BlockingKernelClient
    from mcp import Client

START_SECONDS = 120.0
CALL_SECONDS = 240.0
CLIENT_NAME = "claude-code"  # what Claude Code sends as clientInfo.name
CLIENT_SHOWN = "Claude Code"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class JupyterRig:
    """One Jupyter Server and what a test needs around it."""

    root: Path
    runtime: Path
    token: str
    port: int
    base: str
    env: dict[str, str]
    args: tuple[str, ...] = ()  # more of the server's command-line options
    process: subprocess.Popen[bytes] | None = None
    log: Path | None = None
    clients: list[BlockingKernelClient] = field(default_factory=list)

    @property
    def url(self) -> str:
        """The server's base URL (with its base path, no trailing slash: as a person types it)."""
        return f"http://127.0.0.1:{self.port}{self.base.rstrip('/')}"

    # -- the server -------------------------------------------------------------------------

    def start(self) -> None:
        self.log = self.root.parent / "jupyter.log"
        argv = [
            sys.executable,
            "-m",
            "jupyter_server",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={self.port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={self.token}",
            f"--ServerApp.root_dir={self.root}",
            f"--ServerApp.base_url={self.base}",
            "--ServerApp.open_browser=False",
            "--allow-root",
            *self.args,
        ]
        with self.log.open("wb") as out:
            self.process = subprocess.Popen(
                argv, env=self.env, stdout=out, stderr=subprocess.STDOUT, cwd=self.root
            )
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the Jupyter Server exited:\n{self.log.read_text()[-3000:]}")
            if list(self.runtime.glob("jpserver-*.json")) and self._answers():
                return
            time.sleep(0.1)
        raise TimeoutError(f"the Jupyter Server did not start:\n{self.log.read_text()[-3000:]}")

    def _answers(self) -> bool:
        try:
            self.rest("GET", "api/status")
        except (OSError, urllib.error.URLError):
            return False
        return True

    def stop(self) -> None:
        for client in self.clients:
            client.stop_channels()
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=30)

    def rest(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            f"{self.url}/{path}",
            data=data,
            method=method,
            headers={"Authorization": f"token {self.token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=60) as response:
            text = response.read().decode()
        return json.loads(text) if text else None

    # -- notebooks and their kernels ----------------------------------------------------------

    def notebook(self, name: str, *sources: str) -> Path:
        """Write a notebook file with code cells ``sources`` (ids c1, c2, ...)."""
        cells = [
            {
                "cell_type": "code",
                "id": f"c{number}",
                "source": source,
                "metadata": {},
                "outputs": [],
                "execution_count": None,
            }
            for number, source in enumerate(sources, 1)
        ]
        path = self.root / name
        notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
        path.write_text(json.dumps(notebook))
        return path

    def open(self, name: str) -> str:
        """Open ``name`` through the REST API (its kernel starts); the kernel's id."""
        body = {"path": name, "type": "notebook", "name": name, "kernel": {"name": "python3"}}
        session = self.rest("POST", "api/sessions", body)
        kernel_id = str(session["kernel"]["id"])
        self.wait(lambda: self._kernel_ready(kernel_id), f"the kernel of {name}")
        return kernel_id

    def _kernel_ready(self, kernel_id: str) -> bool:
        # Jupyter Server says "starting" until the kernel first answers a request: the
        # connection file is what a client needs.
        return (self.runtime / f"kernel-{kernel_id}.json").exists()

    def kernel(self, kernel_id: str) -> BlockingKernelClient:
        """A client of the kernel through its connection file (not through Loom). A kernel
        just started may not beat its heartbeat yet, which the client takes for a death:
        it is asked again until it answers."""
        from jupyter_client.blocking.client import BlockingKernelClient

        deadline = time.monotonic() + START_SECONDS
        while True:
            client = BlockingKernelClient(
                connection_file=str(self.runtime / f"kernel-{kernel_id}.json")
            )
            client.load_connection_file()
            client.start_channels()
            try:
                client.wait_for_ready(timeout=START_SECONDS)
            except RuntimeError:
                client.stop_channels()
                if time.monotonic() > deadline:
                    raise
                continue
            self.clients.append(client)
            return client

    def archive(self, name: str, sql: str) -> list[tuple[Any, ...]]:
        path = self.root / ".loom" / f"{name}.sqlite"
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            return db.execute(sql).fetchall()

    @staticmethod
    def wait(found: Any, what: str, timeout: float = START_SECONDS) -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = found()
            if value:
                return value
            time.sleep(0.05)
        raise TimeoutError(f"waited {timeout:.0f} s for {what}")

    # -- the bridge ------------------------------------------------------------------------------

    def bridge_env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in self.env.items() if k != "JUPYTER_TOKEN"}
        env.update(extra)
        return env

    @asynccontextmanager
    async def bridge(
        self, *args: str, env: dict[str, str] | None = None, name: str = CLIENT_NAME
    ) -> AsyncIterator[Client]:
        """``loom-jupyter mcp ARGS`` under the SDK's stdio client, as Claude Code starts it."""
        from mcp import Client, StdioServerParameters
        from mcp.client.stdio import stdio_client
        from mcp.types import Implementation

        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "loom_jupyter.cli", "mcp", *args],
            env=env or self.bridge_env(),
            cwd=str(self.root.parent),
        )
        errlog = (self.root.parent / f"bridge-{secrets.token_hex(3)}.log").open("w")
        try:
            client = Client(
                stdio_client(params, errlog=errlog),
                mode="legacy",
                client_info=Implementation(name=name, version="2.1.0"),
                read_timeout_seconds=CALL_SECONDS,
            )
            async with client:
                yield client
        finally:
            errlog.close()


def execute(client: BlockingKernelClient, code: str) -> str:
    """Run ``code`` in the kernel; its ``text/plain`` result or stdout (not through Loom)."""
    msg_id = client.execute(code)
    out: list[str] = []
    deadline = time.monotonic() + CALL_SECONDS
    while time.monotonic() < deadline:
        try:
            msg = client.get_iopub_msg(timeout=1)
        except queue.Empty:
            continue
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        kind, content = msg["msg_type"], msg["content"]
        if kind == "stream":
            out.append(content["text"])
        elif kind == "execute_result":
            out.append(content["data"].get("text/plain", ""))
        elif kind == "error":
            out.append(f"{content['ename']}: {content['evalue']}")
        elif kind == "status" and content["execution_state"] == "idle":
            return "".join(out)
    raise TimeoutError(f"no answer to {code!r}")


def start_rig(folder: Path, *args: str, **extra: str) -> JupyterRig:
    """A started server in ``folder`` with options ``args``; ``extra`` joins its (and its
    kernels') environment."""
    root = folder / "root"
    runtime = folder / "runtime"
    root.mkdir()
    runtime.mkdir()
    keep = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "ANTHROPIC_BASE_URL", "VIRTUAL_ENV")
    env = {k: v for k, v in os.environ.items() if k in keep or k.startswith("PYTHON")}
    env.update(
        JUPYTER_RUNTIME_DIR=str(runtime),
        JUPYTER_CONFIG_DIR=str(folder / "jupyter-config"),
        XDG_CONFIG_HOME=str(folder / "xdg-config"),
        ANTHROPIC_API_KEY="test-key",
        PYTHONUNBUFFERED="1",
    )
    env.update(extra)
    rig = JupyterRig(root, runtime, secrets.token_hex(16), free_port(), "/jbase/", env, args)
    rig.start()
    return rig
