"""Where the time between the kernel and the page goes: the same requests straight over
ZMQ and through Jupyter Server's kernel websocket, split at the kernel.

    python benchmarks/comm_path_bench.py           # 40 round trips each way
    python benchmarks/comm_path_bench.py --quick   # 3, the three paths at once (CI)

No browser: a websocket client on 127.0.0.1 speaks to a real ``jupyter server``
exactly as JupyterLab's kernel connection does (JSON messages on
``/api/kernels/<id>/channels``). Each reply's header ``date`` is stamped by the kernel
as it answers, which splits a round trip into "request reaches the kernel and is
answered" and "answer reaches the client". Requests: ``kernel_info`` (no Loom code
at all) and a ``sessions`` request on the ``loom`` comm (the sidebar's own round trip).
The server runs twice: with Loom's server extension (``loom_jupyter/jupyter/server.py``,
``TCP_NODELAY`` on the kernel websocket) and with it switched off, as Jupyter Server
ships. Nothing here is a test; it prints a table.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from jupyter_client.manager import start_new_kernel
from tornado.httpclient import AsyncHTTPClient, HTTPRequest
from tornado.websocket import WebSocketClientConnection, websocket_connect

LOAD = "%load_ext loom_jupyter"
SERVER_START_S = 180.0  # a busy 2-core machine can take a minute to import and start one
SESSIONS = {"type": "sessions"}


@dataclass
class Trips:
    """Round trips of one kind: total, to the kernel's answer, and back to the client."""

    total: list[float] = field(default_factory=list)
    there: list[float] = field(default_factory=list)
    back: list[float] = field(default_factory=list)

    def add(self, started: float, wall: datetime, stamped: str) -> None:
        answered = datetime.fromisoformat(stamped.replace("Z", "+00:00"))
        arrived = datetime.now(timezone.utc)
        self.total.append((time.perf_counter() - started) * 1000)
        self.there.append((answered - wall).total_seconds() * 1000)
        self.back.append((arrived - answered).total_seconds() * 1000)

    def row(self, label: str) -> str:
        med = statistics.median
        return (
            f"| {label:<56} | {med(self.total):>8.1f} | {med(self.there):>10.1f} "
            f"| {med(self.back):>11.1f} | {len(self.total):>3} |"
        )


def _env(folder: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LOOM_", "JPY_"))}
    env.update(JPY_SESSION_NAME=str(folder / "bench.ipynb"), XDG_CONFIG_HOME=str(folder / "cfg"))
    return env


def direct(folder: Path, runs: int) -> tuple[Trips, Trips]:
    """``kernel_info`` and a comm ``sessions`` request straight over ZMQ (jupyter_client)."""
    km, kc = start_new_kernel(kernel_name="python3", env=_env(folder), cwd=str(folder))
    try:
        kc.execute_interactive(LOAD, timeout=60)
        info, comm = Trips(), Trips()
        for _ in range(runs):
            started, wall = time.perf_counter(), datetime.now(timezone.utc)
            reply = kc.kernel_info(reply=True, timeout=30)
            info.add(started, wall, str(reply["header"]["date"]))
        comm_id = uuid.uuid4().hex
        open_msg = {"comm_id": comm_id, "target_name": "loom", "data": {"type": "hello"}}
        kc.shell_channel.send(kc.session.msg("comm_open", open_msg))
        _iopub_comm(kc, "welcome")
        for _ in range(runs):
            started, wall = time.perf_counter(), datetime.now(timezone.utc)
            data = {"comm_id": comm_id, "data": SESSIONS}
            kc.shell_channel.send(kc.session.msg("comm_msg", data))
            comm.add(started, wall, str(_iopub_comm(kc, "sessions")["header"]["date"]))
        return info, comm
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def _iopub_comm(kc: Any, kind: str) -> dict[str, Any]:
    while True:
        msg: dict[str, Any] = kc.get_iopub_msg(timeout=30)
        if msg["msg_type"] == "comm_msg" and msg["content"]["data"].get("type") == kind:
            return msg


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Server:
    """A ``jupyter server`` on 127.0.0.1 with a token, in a temp root; stopped by its PID."""

    def __init__(self, folder: Path, loom_extension: bool) -> None:
        self.port, self.token = _free_port(), uuid.uuid4().hex
        command = [
            sys.executable,
            "-m",
            "jupyter_server",
            "--no-browser",
            "--allow-root",
            "--ip=127.0.0.1",
            f"--port={self.port}",
            f"--IdentityProvider.token={self.token}",
            f"--ServerApp.root_dir={folder}",
            f"--ServerApp.jpserver_extensions=loom_jupyter={loom_extension}",
        ]
        self.process = subprocess.Popen(
            command, env=_env(folder), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        self.base = f"127.0.0.1:{self.port}"

    def url(self, path: str, scheme: str = "http") -> str:
        return f"{scheme}://{self.base}{path}?token={self.token}"

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


async def through_server(folder: Path, runs: int, loom_extension: bool) -> tuple[Trips, Trips]:
    """The same requests over Jupyter Server's kernel websocket."""
    server, client = Server(folder, loom_extension), AsyncHTTPClient()
    try:
        await _ready(client, server)
        made = await client.fetch(
            HTTPRequest(server.url("/api/kernels"), method="POST", body='{"name": "python3"}')
        )
        kernel = json.loads(made.body)["id"]
        ws = await websocket_connect(server.url(f"/api/kernels/{kernel}/channels", "ws"))
        await _send(ws, "execute_request", _execute(LOAD))
        await _until(ws, lambda m: m["msg_type"] == "execute_reply")
        info, comm = Trips(), Trips()
        for _ in range(runs):
            started, wall = time.perf_counter(), datetime.now(timezone.utc)
            await _send(ws, "kernel_info_request", {})
            reply = await _until(ws, lambda m: m["msg_type"] == "kernel_info_reply")
            info.add(started, wall, reply["header"]["date"])
        comm_id = uuid.uuid4().hex
        hello = {"comm_id": comm_id, "target_name": "loom", "data": {"type": "hello"}}
        await _send(ws, "comm_open", hello)
        await _until(ws, _comm("welcome"))
        for _ in range(runs):
            started, wall = time.perf_counter(), datetime.now(timezone.utc)
            await _send(ws, "comm_msg", {"comm_id": comm_id, "data": SESSIONS})
            comm.add(started, wall, (await _until(ws, _comm("sessions")))["header"]["date"])
        ws.close()
        await client.fetch(HTTPRequest(server.url(f"/api/kernels/{kernel}"), method="DELETE"))
        return info, comm
    finally:
        server.stop()


async def _ready(client: AsyncHTTPClient, server: Server) -> None:
    deadline = time.monotonic() + SERVER_START_S
    while time.monotonic() < deadline and server.process.poll() is None:
        try:
            await client.fetch(server.url("/api/status"))
            return
        except (OSError, ConnectionError):
            await asyncio.sleep(0.1)
    raise RuntimeError(f"jupyter server did not start within {SERVER_START_S:.0f} s")


def _execute(code: str) -> dict[str, Any]:
    return {"code": code, "silent": False, "store_history": False, "user_expressions": {}}


async def _send(ws: WebSocketClientConnection, kind: str, content: dict[str, Any]) -> None:
    header = {
        "msg_id": uuid.uuid4().hex,
        "msg_type": kind,
        "username": "bench",
        "session": "bench",
        "date": datetime.now(timezone.utc).isoformat(),
        "version": "5.3",
    }
    message = {"header": header, "parent_header": {}, "metadata": {}, "content": content}
    await ws.write_message(json.dumps({**message, "channel": "shell", "buffers": []}))


def _comm(kind: str) -> Any:
    return lambda m: m["msg_type"] == "comm_msg" and m["content"]["data"].get("type") == kind


async def _until(ws: WebSocketClientConnection, wanted: Any) -> dict[str, Any]:
    while True:
        raw = await asyncio.wait_for(ws.read_message(), 60)
        if raw is None:
            raise RuntimeError("the kernel websocket closed")
        message: dict[str, Any] = json.loads(raw)
        if wanted(message):
            return message


async def _all_at_once(folder: Path, runs: int) -> list[tuple[Trips, Trips]]:
    """The three paths at the same time, each in a folder of its own (``--quick``: it shows
    the script still prints its table; the figures are not worth reading then)."""
    for name in ("zmq", "bare", "ws"):
        (folder / name).mkdir()
    return list(
        await asyncio.gather(
            asyncio.to_thread(direct, folder / "zmq", runs),
            through_server(folder / "bare", runs, loom_extension=False),
            through_server(folder / "ws", runs, loom_extension=True),
        )
    )


def main(quick: bool) -> None:
    runs = 3 if quick else 40
    with tempfile.TemporaryDirectory(prefix="loom-comm-path-") as tmp:
        folder = Path(tmp)
        if quick:
            paths = asyncio.run(_all_at_once(folder, runs))
            (zmq_info, zmq_comm), (bare_info, bare_comm), (ws_info, ws_comm) = paths
        else:
            zmq_info, zmq_comm = direct(folder, runs)
            bare_info, bare_comm = asyncio.run(through_server(folder, runs, loom_extension=False))
            ws_info, ws_comm = asyncio.run(through_server(folder, runs, loom_extension=True))
    print("Comm path: where a round trip's time goes (medians, ms)")
    print(f"| {'request':<56} | {'total':>8} | {'to answer':>10} | {'answer back':>11} |   n |")
    print(f"|{'-' * 58}|{'-' * 10}|{'-' * 12}|{'-' * 13}|-----|")
    print(zmq_info.row("kernel_info, straight over ZMQ"))
    print(zmq_comm.row("loom `sessions` on the comm, over ZMQ"))
    print(bare_info.row("kernel_info, Jupyter Server as shipped"))
    print(bare_comm.row("loom `sessions`, Jupyter Server as shipped"))
    print(ws_info.row("kernel_info, with Loom's server extension"))
    print(ws_comm.row("loom `sessions`, with Loom's server extension"))
    delay = statistics.median(bare_comm.back) - statistics.median(ws_comm.back)
    print(
        f"\nAs shipped, Jupyter Server's kernel websocket keeps Nagle's algorithm on: each frame "
        "after a burst's first (status busy → the answer → status idle) waits for the client's "
        "delayed ACK (up to 40 ms). Loom's server extension sets TCP_NODELAY and takes "
        f"{delay:.1f} ms off the answer's way back."
    )
    print(f"(machine load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="3 round trips each way, the paths at once (CI)"
    )
    main(parser.parse_args().quick)
