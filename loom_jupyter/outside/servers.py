"""Which Jupyter Server, and which of its notebooks (DESIGN §14).

Without ``--server-url`` the server is found the way ``jupyter server list`` finds it: the
``jpserver-*.json`` files in Jupyter's runtime folder, each naming a running server's URL,
token, root folder and process. Of those whose process is alive, the one whose root folder
holds the notebook wins, else the most recently started. ``--server-url`` may carry a base
path, with or without a trailing slash.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from urllib.parse import urlsplit, urlunsplit

from loom_jupyter.archive.liveness import pid_exists
from loom_jupyter.errors import LoomError

__all__ = [
    "BridgeError",
    "ServerInfo",
    "find_server",
    "notebook_key",
    "runtime_dir",
    "server_from_url",
]


class BridgeError(LoomError):
    """Something the outside agent is told as an error result, with what to do."""


@dataclass(frozen=True)
class ServerInfo:
    """A Jupyter Server: where it answers and how to authenticate."""

    url: str
    """Its base URL, ending in ``/`` (``http://127.0.0.1:8888/lab-base/``)."""
    token: str
    root_dir: str = ""
    """Its root folder (``""`` when unknown: given by ``--server-url``)."""

    def api(self, path: str) -> str:
        """The URL of ``path`` (``api/sessions``) under the base URL."""
        return self.url + path.lstrip("/")

    def ws(self, path: str) -> str:
        """The websocket URL of ``path``."""
        parts = urlsplit(self.api(path))
        scheme = "wss" if parts.scheme == "https" else "ws"
        return urlunsplit((scheme, parts.netloc, parts.path, parts.query, ""))


def server_from_url(url: str, token: str) -> ServerInfo:
    """``--server-url`` (with or without a base path and a trailing slash) and ``--token``."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise BridgeError(
            f"--server-url {url!r} is no Jupyter Server URL: give it as "
            "http://HOST:PORT/ (with the server's base path, if it has one)."
        )
    path = parts.path if parts.path.endswith("/") else parts.path + "/"
    return ServerInfo(urlunsplit((parts.scheme, parts.netloc, path, "", "")), token)


def runtime_dir() -> Path:
    """Jupyter's runtime folder (``JUPYTER_RUNTIME_DIR`` honoured)."""
    from jupyter_core.paths import jupyter_runtime_dir

    return Path(jupyter_runtime_dir())


def find_server(notebook: str | None = None, folder: Path | None = None) -> ServerInfo:
    """The running server to use: the one whose root holds ``notebook`` (a real path, or one
    relative to a server's root), else the most recently started; :class:`BridgeError` when
    none runs."""
    where = folder or runtime_dir()
    found: list[tuple[float, dict[str, object]]] = []
    for path in sorted(where.glob("jpserver-*.json")):
        try:
            info = json.loads(path.read_text(encoding="utf-8"))
            started = path.stat().st_mtime
        except (OSError, ValueError):
            continue
        if isinstance(info, dict) and _alive(info.get("pid")) and info.get("url"):
            found.append((started, info))
    if not found:
        raise BridgeError(
            f"No running Jupyter Server was found (no live jpserver-*.json in {where}). Start "
            "JupyterLab (jupyter lab) and open the notebook, or give the server with "
            "loom-jupyter mcp --server-url URL --token TOKEN."
        )
    if notebook:
        target = Path(notebook).expanduser()
        holding = [(t, info) for t, info in found if _holds(info, target)]
        found = holding or found
    _, best = max(found, key=lambda item: item[0])
    url = str(best.get("url", ""))
    base = str(best.get("base_url", "/") or "/")
    parts = urlsplit(url)
    base_path = base if base.endswith("/") else base + "/"
    root = str(best.get("root_dir") or best.get("notebook_dir") or "")
    token = str(best.get("token") or "")
    return ServerInfo(urlunsplit((parts.scheme, parts.netloc, base_path, "", "")), token, root)


def notebook_key(server: ServerInfo, notebook: str, open_paths: tuple[str, ...] = ()) -> str:
    """``notebook`` as the server names it: a path relative to its root (``--notebook`` may
    be that, or a real path under the root). When the root is not known (``--server-url``),
    a real path is matched to the open notebook whose path ends it (the longest)."""
    given = notebook.strip()
    if not server.root_dir and Path(given).expanduser().is_absolute():
        real = Path(given).expanduser().resolve().as_posix()
        ends = [path for path in open_paths if real.endswith("/" + path.lstrip("/"))]
        if ends:
            return max(ends, key=len)
    path = Path(given).expanduser()
    if server.root_dir and (path.is_absolute() or path.exists()):
        try:
            relative = path.resolve().relative_to(Path(server.root_dir).resolve())
        except ValueError:
            if path.is_absolute():
                raise BridgeError(
                    f"{given} is not under the Jupyter Server's root folder "
                    f"({server.root_dir}): give the notebook's path as that server names it."
                ) from None
        else:
            return relative.as_posix()
    return str(PurePosixPath(given.replace(os.sep, "/"))).lstrip("/")


def _holds(info: dict[str, object], target: Path) -> bool:
    root = info.get("root_dir") or info.get("notebook_dir")
    if not isinstance(root, str) or not root:
        return False
    if not target.is_absolute():  # a path as a server names it: that server has the file
        return (Path(root) / target).is_file()
    try:
        target.resolve().relative_to(Path(root).resolve())
    except (ValueError, OSError):
        return False
    return True


def _alive(pid: object) -> bool:
    return isinstance(pid, int) and pid > 0 and pid_exists(pid)
