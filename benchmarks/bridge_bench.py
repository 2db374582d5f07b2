"""An outside agent's ``run_python`` through ``loom-jupyter mcp`` vs the same code through
Jupyter Server's own execute request (issue 32; goal: at most 1.5x plus 10 ms).

    python benchmarks/bridge_bench.py           # 40 round trips each way
    python benchmarks/bridge_bench.py --quick   # 8 (CI)

A real ``jupyter server`` on 127.0.0.1 with a token (the rig of ``tests/outside/``), one
notebook opened through its REST API with Loom's approval mode ``auto`` in the kernel's
environment. Baseline: an ``execute_request`` on the kernel's websocket, timed to its
``execute_reply`` and the kernel's ``idle`` (what a page waits for). Bridge: the MCP SDK's own
stdio client calling ``run_python`` on ``loom-jupyter mcp`` (``mode="legacy"``, as Claude Code
connects), timed to the tool result; the call runs through the kernel's host as the agent's
own would: the floor, the approval policy, the registry, the execution record and the archive
row, the sidebar's broadcast. Both run ``x = globals().get('x', 0) + 1`` after a warm-up.
Nothing here is a test; it prints a table.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "outside"))

from jupyter_rig import JupyterRig, start_rig

from loom_jupyter.outside.kernel_channels import jupyter_message

CODE = "x = globals().get('x', 0) + 1"
NOTEBOOK = "bench.ipynb"


async def baseline(rig: JupyterRig, kernel_id: str, rounds: int) -> list[float]:
    """Execute requests on the kernel's websocket: ms to execute_reply and idle."""
    from tornado.httpclient import HTTPRequest
    from tornado.websocket import websocket_connect

    session = uuid.uuid4().hex
    url = (
        f"ws://127.0.0.1:{rig.port}{rig.base}api/kernels/{kernel_id}/channels?session_id={session}"
    )
    ws = await websocket_connect(HTTPRequest(url, headers={"Authorization": f"token {rig.token}"}))
    times: list[float] = []
    try:
        for _ in range(rounds + 2):
            content = {
                "code": CODE,
                "silent": False,
                "store_history": True,
                "user_expressions": {},
                "allow_stdin": False,
                "stop_on_error": True,
            }
            message = jupyter_message(
                "shell", "execute_request", content, session=session, username="bench"
            )
            msg_id = message["header"]["msg_id"]
            started = time.perf_counter()
            ws.write_message(json.dumps(message))
            replied = idle = False
            while not (replied and idle):
                raw = await ws.read_message()
                assert isinstance(raw, str), "the websocket closed"
                msg = json.loads(raw)
                if (msg.get("parent_header") or {}).get("msg_id") != msg_id:
                    continue
                replied = replied or msg["msg_type"] == "execute_reply"
                idle = idle or (
                    msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle"
                )
            times.append((time.perf_counter() - started) * 1000)
    finally:
        ws.close()
    return times[2:]  # the first two warm up


async def bridge(rig: JupyterRig, rounds: int) -> tuple[list[float], float]:
    """run_python through loom-jupyter mcp: ms per call; and the first call (loads Loom)."""
    times: list[float] = []
    async with rig.bridge("--notebook", NOTEBOOK) as client:
        started = time.perf_counter()
        first = await client.call_tool("run_python", {"code": CODE})
        first_ms = (time.perf_counter() - started) * 1000
        assert not first.is_error, first
        for _ in range(rounds + 2):
            started = time.perf_counter()
            result = await client.call_tool("run_python", {"code": CODE})
            times.append((time.perf_counter() - started) * 1000)
            assert not result.is_error, result
    return times[2:], first_ms


def row(label: str, times: list[float]) -> str:
    times = sorted(times)
    p90 = times[min(len(times) - 1, int(len(times) * 0.9))]
    return (
        f"| {label:<54} | {statistics.median(times):>8.1f} | {p90:>8.1f} | "
        f"{min(times):>8.1f} | {len(times):>3} |"
    )


async def run(quick: bool) -> None:
    rounds = 8 if quick else 40
    with tempfile.TemporaryDirectory(prefix="loom-bridge-bench-") as folder:
        rig = start_rig(Path(folder), LOOM_APPROVAL="auto")  # its kernels inherit it
        try:
            rig.notebook(NOTEBOOK, "x = 0")
            kernel_id = rig.open(NOTEBOOK)
            base = await baseline(rig, kernel_id, rounds)
            through, first = await bridge(rig, rounds)
            base2 = await baseline(rig, kernel_id, rounds)  # the kernel, now with Loom loaded
        finally:
            rig.stop()
    med = statistics.median
    goal = 1.5 * med(base2) + 10.0
    print("Bridge round trip: an MCP run_python vs Jupyter Server's execute request (ms)")
    print(f"| {'path':<54} | {'median':>8} | {'p90':>8} | {'min':>8} |   n |")
    print(f"|{'-' * 56}|{'-' * 10}|{'-' * 10}|{'-' * 10}|-----|")
    print(row("execute_request on the kernel websocket (no Loom)", base))
    print(row("execute_request on the kernel websocket (Loom loaded)", base2))
    print(row("run_python through loom-jupyter mcp (MCP stdio)", through))
    print(
        f"goal: bridge median <= 1.5 x {med(base2):.1f} + 10 = {goal:.1f} ms -> "
        f"{med(through):.1f} ms: {'met' if med(through) <= goal else 'NOT met'}"
    )
    print(f"first call (finds the server, opens websocket and comm, loads Loom): {first:.0f} ms")
    print(f"(machine load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="8 round trips each way (CI)")
    asyncio.run(run(parser.parse_args().quick))


if __name__ == "__main__":
    main()
