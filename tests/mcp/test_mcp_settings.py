"""``mcp_servers`` in loom.yaml: typed, and clear errors naming the file, server and key."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from loom_jupyter.errors import LoomConfigError
from loom_jupyter.settings import Settings

if TYPE_CHECKING:
    from pathlib import Path


def load(tmp_path: Path, text: str) -> Settings:
    """The servers as a folder trusted with its approvals would have them."""
    (tmp_path / "loom.yaml").write_text(text, encoding="utf-8")
    return Settings.load(tmp_path, env={}, trusted=True, loosen=True)


def test_servers_from_loom_yaml(tmp_path: Path) -> None:
    settings = load(
        tmp_path,
        """
mcp_servers:
  files:
    command: python
    args: [server.py, --root, 3]
    env: {API_TOKEN: abcdef123456, SHORT: x}
  web:
    url: http://127.0.0.1:8765/mcp
    headers: {Authorization: Bearer tok-987654}
    approval: auto
    timeout: 30
""",
    )
    files, web = settings.mcp_servers
    assert (files.name, files.transport, files.args) == (
        "files",
        "stdio",
        ("server.py", "--root", "3"),
    )
    assert files.approval == "ask"
    assert files.secrets() == ("abcdef123456",)  # short values are left alone
    assert (web.transport, web.approval, web.timeout) == ("http", "auto", 30.0)
    assert set(web.secrets()) == {"Bearer tok-987654", "tok-987654"}
    _, kept = Settings.load(tmp_path, env={}, trusted=True).mcp_servers
    assert kept.approval == "ask"  # without the person's word on loosening, their mode stays


@pytest.mark.parametrize(
    ("yaml", "message"),
    [
        ("mcp_servers: [a]", "mcp_servers must be a mapping"),
        ("mcp_servers: {a: {}}", "give either command"),
        ("mcp_servers: {a: {command: x, url: 'http://h'}}", "give either command"),
        ("mcp_servers: {a__b: {command: x}}", "a server name is"),
        ("mcp_servers: {a: {command: x, approval: maybe}}", "approval must be one of"),
        ("mcp_servers: {a: {command: x, cmd: y}}", "unknown key(s) cmd"),
        ("mcp_servers: {a: {url: 'ftp://h'}}", "url must start with"),
        ("mcp_servers: {a: {command: x, timeout: -1}}", "timeout must be positive"),
        ("mcp_servers: {a: {command: x, headers: {A: b}}}", "headers belong to an HTTP server"),
        ("mcp_servers: {a: {command: x, env: [1]}}", "env: expected a mapping"),
    ],
)
def test_bad_entries_name_the_file_and_the_server(tmp_path: Path, yaml: str, message: str) -> None:
    with pytest.raises(LoomConfigError) as caught:
        load(tmp_path, yaml)
    assert message in str(caught.value)
    assert str(tmp_path / "loom.yaml") in str(caught.value)
