"""Jupyter Server's REST API, as ``loom-jupyter mcp`` uses it: sessions and kernels.

Every request carries the token (``Authorization: token ...``). A server that does not
answer, a wrong token, a notebook that is not open and a dead kernel each become a
:class:`~loom_jupyter.outside.servers.BridgeError` that says what to do.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from loom_jupyter.outside.servers import BridgeError

if TYPE_CHECKING:
    from loom_jupyter.outside.servers import ServerInfo

__all__ = ["JupyterApi", "NotebookSession"]

TIMEOUT = 30.0


@dataclass(frozen=True)
class NotebookSession:
    """A notebook open on the server, and its kernel."""

    path: str
    kernel_id: str
    kernel_name: str
    state: str
    """The kernel's ``execution_state``: ``idle``, ``busy``, ``starting``, ``dead``..."""
    last_activity: str


class JupyterApi:
    """One Jupyter Server's REST API."""

    def __init__(self, server: ServerInfo) -> None:
        import httpx

        self.server = server
        headers = {"Authorization": f"token {server.token}"} if server.token else {}
        self._client = httpx.AsyncClient(headers=headers, timeout=TIMEOUT, trust_env=False)

    async def close(self) -> None:
        """Close the HTTP client."""
        await self._client.aclose()

    async def _get(self, path: str) -> Any:
        import httpx

        url = self.server.api(path)
        try:
            response = await self._client.get(url)
        except httpx.HTTPError as exc:
            raise BridgeError(
                f"No Jupyter Server answers at {self.server.url} ({type(exc).__name__}). Start "
                "JupyterLab, or give its address with --server-url (jupyter server list shows "
                "it), then call again."
            ) from None
        if response.status_code in (401, 403):
            raise BridgeError(
                f"The Jupyter Server at {self.server.url} refused the token (HTTP "
                f"{response.status_code}). Give the token it prints at start (jupyter server "
                "list shows it) with --token, or leave --server-url out to find it in "
                "Jupyter's runtime folder."
            )
        if response.status_code == 404:
            return None
        if response.status_code >= 400:
            raise BridgeError(
                f"The Jupyter Server at {self.server.url} answered {path} with HTTP "
                f"{response.status_code}; check that it is a Jupyter Server (2.x)."
            )
        try:
            return response.json()
        except ValueError:
            raise BridgeError(
                f"{self.server.url} answered {path} with something that is not JSON: is it a "
                "Jupyter Server (with its base path, if it has one)?"
            ) from None

    async def notebooks(self) -> list[NotebookSession]:
        """The notebooks open on the server, most recently active first."""
        data = await self._get("api/sessions")
        found = []
        for item in data if isinstance(data, list) else []:
            kernel = item.get("kernel") or {}
            path = item.get("path") or (item.get("notebook") or {}).get("path") or ""
            if not kernel.get("id") or not str(path).endswith(".ipynb"):
                continue
            found.append(
                NotebookSession(
                    path=str(path),
                    kernel_id=str(kernel["id"]),
                    kernel_name=str(kernel.get("name", "")),
                    state=str(kernel.get("execution_state", "")),
                    last_activity=str(kernel.get("last_activity", "")),
                )
            )
        return sorted(found, key=lambda s: s.last_activity, reverse=True)

    async def kernel_state(self, kernel_id: str) -> str | None:
        """The kernel's ``execution_state`` now (None: the server has no such kernel)."""
        data = await self._get(f"api/kernels/{kernel_id}")
        return None if not isinstance(data, dict) else str(data.get("execution_state", ""))
