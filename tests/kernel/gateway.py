"""A loopback Jupyter Kernel Gateway, a Jupyter Server in front of it, and a kernel client
over their websockets (``tests/kernel/test_gateway.py``).

Both servers are real processes on free ports of 127.0.0.1; each is ready when it prints
the line saying where it listens (read from its log as it comes, never slept on). A kernel
started through the gateway gets the environment a gateway gives: ``PATH``, the variables
the gateway's ``KG_ENV_PROCESS_WHITELIST`` names, and the ``KERNEL_*`` variables the client
sent — never ``JPY_SESSION_NAME``.
"""

from __future__ import annotations

import contextlib
import json
import queue
import socket
import subprocess
import sys
import threading
import time
import urllib.request
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import websocket
from jupyter_client.jsonutil import json_default
from jupyter_client.session import Session

from loom_jupyter.jupyter.cell.render import ANSWER_MIME

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping
    from pathlib import Path

TIMEOUT = 120.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Served:
    """A server process and the address it answers on."""

    process: subprocess.Popen[str]
    url: str
    token: str = ""
    lines: list[str] = field(default_factory=list)

    def request(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method)
        request.add_header("Content-Type", "application/json")
        if self.token:
            request.add_header("Authorization", f"token {self.token}")
        with urllib.request.urlopen(request, timeout=TIMEOUT) as answer:
            text = answer.read().decode()
        return json.loads(text) if text else None

    def channels(self, kernel_id: str) -> WsKernel:
        """A client on the kernel's websocket."""
        ws_url = self.url.replace("http://", "ws://", 1)
        headers = [f"Authorization: token {self.token}"] if self.token else []
        url = f"{ws_url}/api/kernels/{kernel_id}/channels?session_id={uuid.uuid4().hex}"
        return WsKernel(websocket.create_connection(url, header=headers, timeout=TIMEOUT))

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=30)


@contextlib.contextmanager
def serve(
    args: list[str], *, url: str, cwd: Path, env: Mapping[str, str], ready: str, token: str = ""
) -> Iterator[Served]:
    """Run ``python -m ARGS``, answering at ``url``, until the end of the block; ready once
    its log has a line holding ``ready``."""
    process = subprocess.Popen(
        [sys.executable, "-m", *args],
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[str | None] = queue.Queue()
    seen: list[str] = []

    def read() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            seen.append(line)
            lines.put(line)
        lines.put(None)

    threading.Thread(target=read, daemon=True, name="gateway-log").start()
    served = Served(process, url, token, seen)
    try:
        _wait_for(lines, ready, seen)
        _accepting(url, process)
        yield served
    finally:
        served.stop()


def _wait_for(lines: queue.Queue[str | None], ready: str, seen: list[str]) -> None:
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        line = lines.get(timeout=max(deadline - time.monotonic(), 0.01))
        if line is None:
            raise RuntimeError("the server exited:\n" + "".join(seen[-30:]))
        if ready in line:
            return
    raise TimeoutError("the server did not start:\n" + "".join(seen[-30:]))


def _accepting(url: str, process: subprocess.Popen[str]) -> None:
    """Until the server's socket accepts: Jupyter Server logs its address first and binds on
    its loop's first turn."""
    address = url.removeprefix("http://").split(":")
    deadline = time.monotonic() + TIMEOUT
    while process.poll() is None and time.monotonic() < deadline:
        try:
            socket.create_connection((address[0], int(address[1])), timeout=TIMEOUT).close()
        except ConnectionRefusedError:
            time.sleep(0.02)  # the bind is one loop turn away
        else:
            return
    raise RuntimeError(f"{url} never accepted a connection")


@dataclass
class WsKernel:
    """A kernel's channels over one websocket (Jupyter's JSON protocol, a ``channel`` field)."""

    ws: websocket.WebSocket
    session: Session = field(default_factory=lambda: Session(key=uuid.uuid4().hex.encode()))
    log: list[dict[str, Any]] = field(default_factory=list)

    def send(self, channel: str, msg_type: str, content: dict[str, Any]) -> str:
        msg = self.session.msg(msg_type, content)
        msg["channel"] = channel
        msg["buffers"] = []
        self.ws.send(json.dumps(msg, default=json_default))
        return str(msg["header"]["msg_id"])

    def wait(self, found: Callable[[], Any], what: str) -> Any:
        """Read messages until ``found()`` is truthy."""
        deadline = time.monotonic() + TIMEOUT
        while not (value := found()):
            if time.monotonic() > deadline:
                raise TimeoutError(f"waited for {what}")
            self.log.append(json.loads(self.ws.recv()))
        return value

    def execute(self, code: str) -> str:
        """Run a cell; what it showed (streams, errors, displays: an answer's markdown) once
        the kernel is idle."""
        content = {
            "code": code,
            "silent": False,
            "store_history": False,
            "user_expressions": {},
            "allow_stdin": False,
            "stop_on_error": True,
        }
        msg_id = self.send("shell", "execute_request", content)

        def mine(msg: dict[str, Any]) -> bool:
            return bool(msg.get("parent_header", {}).get("msg_id") == msg_id)

        self.wait(
            lambda: any(
                mine(m) and m["msg_type"] == "status" and m["content"]["execution_state"] == "idle"
                for m in self.log
            ),
            f"the end of {code!r}",
        )
        parts = []
        for msg in self.log:
            if mine(msg) and msg["msg_type"] == "stream":
                parts.append(msg["content"]["text"])
            elif mine(msg) and msg["msg_type"] == "error":
                parts.append("\n".join(msg["content"]["traceback"]))
            elif mine(msg) and msg["msg_type"] in ("display_data", "update_display_data"):
                data = msg["content"]["data"]
                parts.append(
                    data.get(ANSWER_MIME, {}).get("markdown") or data.get("text/plain", "")
                )
        return "".join(parts)

    def open_comm(self, target: str, data: dict[str, Any]) -> str:
        comm_id = uuid.uuid4().hex
        self.send("shell", "comm_open", {"comm_id": comm_id, "target_name": target, "data": data})
        return comm_id

    def comm_message(self, comm_id: str, kind: str) -> dict[str, Any]:
        """The first message of ``type`` ``kind`` the kernel sent on the comm."""

        def found() -> dict[str, Any] | None:
            for msg in self.log:
                content = msg.get("content", {})
                if msg["msg_type"] == "comm_msg" and content.get("comm_id") == comm_id:
                    data = content.get("data", {})
                    if data.get("type") == kind:
                        return dict(data)
            return None

        value: dict[str, Any] = self.wait(found, f"a {kind!r} on the comm")
        return value

    def close(self) -> None:
        self.ws.close()
