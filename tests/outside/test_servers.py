"""Which Jupyter Server and which notebook ``loom-jupyter mcp`` picks (DESIGN §14), on runtime
files written here: no server needs to run (a live process id is this test's own)."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING

import pytest

from loom_jupyter.outside.servers import (
    BridgeError,
    ServerInfo,
    find_server,
    notebook_key,
    server_from_url,
)

if TYPE_CHECKING:
    from pathlib import Path


def runtime_file(folder: Path, name: str, root: Path, port: int, *, pid: int | None = None) -> None:
    info = {
        "base_url": "/lab-base/",
        "url": f"http://127.0.0.1:{port}/lab-base/",
        "token": f"token-{port}",
        "root_dir": str(root),
        "pid": os.getpid() if pid is None else pid,
    }
    (folder / f"jpserver-{name}.json").write_text(json.dumps(info))


def test_the_server_whose_root_holds_the_notebook_wins_else_the_newest(tmp_path: Path) -> None:
    runtime, first, second = tmp_path / "runtime", tmp_path / "a", tmp_path / "b"
    for folder in (runtime, first, second):
        folder.mkdir()
    (first / "nb.ipynb").write_text("{}")
    runtime_file(runtime, "1", first, 8001)
    runtime_file(runtime, "2", second, 8002)
    os.utime(runtime / "jpserver-1.json", (1, 1))  # the older one
    assert find_server(folder=runtime).url == "http://127.0.0.1:8002/lab-base/"
    held = find_server(str(first / "nb.ipynb"), folder=runtime)
    assert (held.url, held.token, held.root_dir) == (
        "http://127.0.0.1:8001/lab-base/",
        "token-8001",
        str(first),
    )
    assert find_server("nb.ipynb", folder=runtime).url.endswith(":8001/lab-base/")  # by its path


def test_a_dead_servers_file_is_passed_over_and_none_says_what_to_do(tmp_path: Path) -> None:
    runtime_file(tmp_path, "gone", tmp_path, 8003, pid=2**22 + 12345)
    (tmp_path / "jpserver-broken.json").write_text("{not json")
    with pytest.raises(BridgeError, match="No running Jupyter Server was found"):
        find_server(folder=tmp_path)


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("http://127.0.0.1:8888", "http://127.0.0.1:8888/"),
        ("http://127.0.0.1:8888/base", "http://127.0.0.1:8888/base/"),
        ("http://127.0.0.1:8888/base/", "http://127.0.0.1:8888/base/"),
        ("https://hub.example/user/ann/?token=x", "https://hub.example/user/ann/"),
    ],
)
def test_a_server_url_keeps_its_base_path_with_or_without_a_slash(
    given: str, expected: str
) -> None:
    server = server_from_url(given, "t")
    assert server.url == expected
    assert server.api("api/sessions") == expected + "api/sessions"
    assert server.ws("api/kernels/k/channels").startswith(("ws://", "wss://"))


def test_a_server_url_that_is_no_url_says_how_to_give_it() -> None:
    with pytest.raises(BridgeError, match="http://HOST:PORT/"):
        server_from_url("127.0.0.1:8888", "t")


def test_a_notebook_by_its_servers_path_or_its_real_path(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "nb.ipynb").write_text("{}")
    server = ServerInfo("http://127.0.0.1:1/", "t", str(tmp_path))
    assert notebook_key(server, "work/nb.ipynb") == "work/nb.ipynb"
    assert notebook_key(server, str(tmp_path / "work" / "nb.ipynb")) == "work/nb.ipynb"
    with pytest.raises(BridgeError, match="not under the Jupyter Server's root"):
        notebook_key(server, "/elsewhere/nb.ipynb")
    unknown_root = ServerInfo("http://127.0.0.1:1/", "t")  # --server-url: matched to what is open
    real = str(tmp_path / "work" / "nb.ipynb")
    assert notebook_key(unknown_root, real, ("other.ipynb", "work/nb.ipynb")) == "work/nb.ipynb"
