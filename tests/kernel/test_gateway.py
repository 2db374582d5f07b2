"""Kernels behind a Jupyter Kernel Gateway (DESIGN §13): no JPY_SESSION_NAME reaches them,
so Loom writes nothing before it has said so; ``KERNEL_LOOM_ARCHIVE_DIR`` passes through
the gateway and is honoured; the sidebar's hello places the notebook.

One loopback Kernel Gateway and one Jupyter Server in front of it (``GatewayClient.url``)
serve the module; the server passes its ``KERNEL_LOOM_ARCHIVE_DIR`` on, as an operator
would set it. A second kernel is started at the gateway directly, the way the server does,
for a server folder this machine does not have.
"""

from __future__ import annotations

import os
import sqlite3
import uuid
from typing import TYPE_CHECKING

import pytest

from loom_jupyter.archive.paths import folder_key

from .gateway import Served, free_port, serve
from .sidebar_wire import hello

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from loom_jupyter.testing import FakeAnthropic

pytestmark = pytest.mark.kernel

PASSED_THROUGH = "ANTHROPIC_BASE_URL,ANTHROPIC_API_KEY,LOOM_APPROVAL,XDG_CONFIG_HOME,HOME"


@pytest.fixture(scope="module")
def places(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("gateway")
    found = {
        name: base / name for name in ("kernelhost", "serverroot", "archives", "config", "home")
    }
    for name in ("kernelhost", "serverroot", "config", "home"):
        found[name].mkdir()
    (found["serverroot"] / "work").mkdir()
    (found["serverroot"] / "work" / "analysis.ipynb").write_text("{}")
    return found


def _environment(places: dict[str, Path], fake: FakeAnthropic) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANTHROPIC_", "LOOM_", "JPY_", "KERNEL_", "JUPYTER_GATEWAY"))
    }
    env.update(
        ANTHROPIC_BASE_URL=fake.base_url,
        ANTHROPIC_API_KEY="test-key",
        LOOM_APPROVAL="auto",
        XDG_CONFIG_HOME=str(places["config"]),
        HOME=str(places["home"]),
    )
    return env


@pytest.fixture(scope="module")
def gateway(places: dict[str, Path], fake: FakeAnthropic) -> Iterator[Served]:
    """Jupyter Kernel Gateway on 127.0.0.1, started in its own folder (its kernels' cwd)."""
    env = {**_environment(places, fake), "KG_ENV_PROCESS_WHITELIST": PASSED_THROUGH}
    port = free_port()
    args = [
        "kernel_gateway",
        "--KernelGatewayApp.ip=127.0.0.1",
        f"--KernelGatewayApp.port={port}",
        "--KernelGatewayApp.port_retries=0",
        "--KernelGatewayApp.list_kernels=True",
    ]
    url = f"http://127.0.0.1:{port}"
    ready = f"is available at {url}"
    with serve(args, url=url, cwd=places["kernelhost"], env=env, ready=ready) as served:
        yield served


@pytest.fixture(scope="module")
def server(places: dict[str, Path], fake: FakeAnthropic, gateway: Served) -> Iterator[Served]:
    """Jupyter Server whose kernels run at the gateway; it passes KERNEL_LOOM_ARCHIVE_DIR on."""
    token = uuid.uuid4().hex
    env = {
        **_environment(places, fake),
        "KERNEL_LOOM_ARCHIVE_DIR": str(places["archives"]),
        "JUPYTER_CONFIG_DIR": str(places["config"] / "jupyter"),
    }
    port = free_port()
    args = [
        "jupyter_server",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.allow_root=True",
        "--ServerApp.port_retries=0",
        f"--ServerApp.root_dir={places['serverroot']}",
        f"--IdentityProvider.token={token}",
        "--ServerApp.open_browser=False",
        f"--GatewayClient.url={gateway.url}",
    ]
    url = f"http://127.0.0.1:{port}"
    ready = f"{url}/"  # the line after "is running at:"
    with serve(
        args, url=url, cwd=places["serverroot"], env=env, ready=ready, token=token
    ) as served:
        yield served


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) if folder.exists() else []


def test_kernel_loom_archive_dir_passes_the_gateway_and_holds_the_archive(
    server: Served, places: dict[str, Path], fake: FakeAnthropic
) -> None:
    model = {"path": "work/analysis.ipynb", "type": "notebook", "name": "analysis.ipynb"}
    session = server.request("POST", "/api/sessions", {**model, "kernel": {"name": "python3"}})
    kernel = server.channels(session["kernel"]["id"])
    root, work = places["serverroot"], places["serverroot"] / "work"
    try:
        seen = kernel.execute(
            "import os; print(os.environ.get('JPY_SESSION_NAME'), "
            "os.environ.get('KERNEL_WORKING_DIR'), os.getcwd(), sep='|')"
        )
        assert seen.strip() == f"None|{work}|{places['kernelhost']}"  # what a gateway gives

        banner = kernel.execute("%load_ext loom_jupyter").replace("\n", " ")
        assert "This kernel does not know its notebook" in banner
        assert f"a gateway started this kernel for the server's folder {work}" in banner
        assert str(places["archives"]) in banner  # where the first %cowork would write
        assert _files(places["archives"]) == []  # nothing written yet
        assert _files(places["kernelhost"]) == []

        comm = kernel.open_comm(
            "loom", hello(notebook_path="work/analysis.ipynb", server_root=str(root))
        )
        kernel.comm_message(comm, "welcome")  # the sidebar placed it
        archive = places["archives"] / folder_key(work) / "analysis.ipynb.sqlite"
        assert archive.is_file()
        fake.add("Through the gateway.")
        assert "Through the gateway." in kernel.execute("%cowork hello from a gateway kernel")
    finally:
        kernel.close()
        server.request("DELETE", f"/api/sessions/{session['id']}")
    with sqlite3.connect(f"file:{archive}?mode=ro", uri=True) as db:
        rows = db.execute("SELECT content FROM conversation_turns WHERE role = 'user'").fetchall()
        (notebook,) = db.execute("SELECT notebook_path FROM cowork_sessions").fetchone()
    assert rows == [("hello from a gateway kernel",)]
    assert notebook == str(work / "analysis.ipynb")
    assert _files(places["kernelhost"]) == []  # no fallback file on the kernel's side
    assert _files(work) == ["analysis.ipynb"]


def test_a_gateway_kernel_for_a_folder_not_here_writes_nothing_and_says_so(
    gateway: Served, places: dict[str, Path]
) -> None:
    away = "/srv/not-on-this-machine"
    started = gateway.request(
        "POST", "/api/kernels", {"name": "python3", "env": {"KERNEL_WORKING_DIR": f"{away}/work"}}
    )
    kernel = gateway.channels(started["id"])
    try:
        banner = kernel.execute("%load_ext loom_jupyter").replace("\n", " ")
        assert "This kernel does not know its notebook" in banner
        assert "on the kernel's machine (it may go when the kernel does)" in banner
        assert "KERNEL_LOOM_ARCHIVE_DIR" in banner
        comm = kernel.open_comm(
            "loom", hello(notebook_path="work/analysis.ipynb", server_root=away)
        )
        notice = kernel.comm_message(comm, "notice")
        assert notice["level"] == "error"
        assert f"the Loom sidebar names {away}/work/analysis.ipynb" in notice["message"]
        assert "which is not on this machine" in notice["message"]
    finally:
        kernel.close()
        gateway.request("DELETE", f"/api/kernels/{started['id']}")
    assert _files(places["kernelhost"]) == []
