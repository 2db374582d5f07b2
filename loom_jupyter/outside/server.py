"""``loom-jupyter mcp``: the stdio MCP server an outside agent starts (DESIGN §14).

``claude mcp add loom -- loom-jupyter mcp`` is all Claude Code needs. The server finds the
Jupyter Server and the notebook on the first call (not at start: it answers ``tools/list``
whatever runs) — ``--notebook``, else the one on screen in JupyterLab (:mod:`.choosing`) —
attaches to that notebook's kernel and passes each call to the kernel's host over the
outside agents' own comm (``loom-agent``), naming the client from MCP's ``initialize``
(``clientInfo``). Every problem — no server, a wrong token, the notebook not open, a dead
kernel, a kernel restarted mid-call, bad input — is a tool result with ``isError`` that says
what to do; the server keeps answering. When its client goes away (stdin closed, or its
end of stdout) it ends quietly, with exit status 0.
"""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING, Any

from loom_jupyter.outside.choosing import Seen, choose, mark, survey
from loom_jupyter.outside.jupyter_api import JupyterApi, NotebookSession
from loom_jupyter.outside.kernel_link import KernelGone, KernelLink
from loom_jupyter.outside.servers import (
    BridgeError,
    ServerInfo,
    find_server,
    notebook_key,
    server_from_url,
)
from loom_jupyter.outside.tools import BRIDGE_TOOLS, outside_tools

if TYPE_CHECKING:
    from mcp.types import CallToolResult, Tool

__all__ = ["Bridge", "build_server", "serve"]

DEFAULT_CLIENT = "An outside agent"


class Bridge:
    """The notebook the outside agent works in, and the link to its kernel."""

    def __init__(
        self, server_url: str | None = None, token: str | None = None, notebook: str | None = None
    ) -> None:
        self._server_url = server_url
        self._token = token  # None: the runtime file's (found), else JUPYTER_TOKEN (--server-url)
        self._wanted = notebook  # as given: --notebook, or list_notebooks' attach
        self._why = "--notebook names it" if notebook else ""  # why the tools work there
        self._server: ServerInfo | None = None
        self._api: JupyterApi | None = None
        self._link: KernelLink | None = None
        self._calls = asyncio.Lock()  # one call at a time (the kernel's floor takes one too)

    async def close(self) -> None:
        """Close the kernel link and the HTTP client."""
        if self._link is not None:
            await self._link.close()
        if self._api is not None:
            await self._api.close()

    # -- calls ------------------------------------------------------------------------------

    async def call(self, name: str, arguments: dict[str, Any], client: str) -> dict[str, Any]:
        """Run one tool call; an ``outside_result``-shaped dict (``is_error``, ``content``)."""
        if name not in BRIDGE_TOOLS:
            return _error(f"Unknown tool {name!r}. Loom's tools: {', '.join(BRIDGE_TOOLS)}.")
        if not isinstance(arguments, dict):
            return _error(f"The input of {name} must be a JSON object.")
        async with self._calls:
            try:
                if name == "list_notebooks":
                    return await self._list(arguments, client)
                return await self._kernel_call(name, arguments, client)
            except KernelGone as exc:
                await self._drop_link()
                return _error(str(exc))
            except BridgeError as exc:
                return _error(str(exc))

    async def _kernel_call(
        self, name: str, arguments: dict[str, Any], client: str
    ) -> dict[str, Any]:
        link = await self._attached(client)
        try:
            return await link.call(name, arguments)
        except KernelGone:
            raise
        except BridgeError:
            if link.closed:
                await self._drop_link()
            raise

    async def _list(self, arguments: dict[str, Any], client: str) -> dict[str, Any]:
        extra = sorted(set(arguments) - {"attach"})
        attach = arguments.get("attach")
        if extra or (attach is not None and not isinstance(attach, str)):
            return _error(
                "Invalid input for list_notebooks: it takes nothing, or "
                '{"attach": "path/of/notebook.ipynb"} (a path it lists).'
            )
        api = await self._jupyter()
        notebooks = await api.notebooks()
        if attach:
            key = notebook_key(api.server, attach, tuple(nb.path for nb in notebooks))
            if not any(nb.path == key for nb in notebooks):
                return _error(_not_open(key, api.server, notebooks))
            self._wanted, self._why = key, "you attached it with list_notebooks"
            await self._drop_link()
        seen = await survey(api.server, notebooks, client, keep=self._link)
        if self._wanted:  # fixed by --notebook or attach
            wanted = self._choose(notebooks, api.server, quiet=True)
            found = next((item for item in seen if item.notebook is wanted), None)
            chosen = None if found is None else (found, self._why)
        else:  # the person's screen decides again
            chosen = choose(seen)
        await self._keep(seen, chosen)
        current = chosen[0].notebook if chosen is not None else None
        return _text(_listing(api.server, seen, current, self._why))

    # -- the server, the notebook, the kernel -------------------------------------------------

    async def _jupyter(self) -> JupyterApi:
        if self._api is None:
            if self._server_url:
                token = self._token or os.environ.get("JUPYTER_TOKEN", "")
                self._server = server_from_url(self._server_url, token)
            else:
                self._server = find_server(self._wanted)
                if self._token is not None:  # --token beats the runtime file's
                    self._server = ServerInfo(self._server.url, self._token, self._server.root_dir)
            self._api = JupyterApi(self._server)
        return self._api

    def _choose(
        self, notebooks: list[NotebookSession], server: ServerInfo, *, quiet: bool = False
    ) -> NotebookSession | None:
        if self._wanted:
            key = notebook_key(server, self._wanted, tuple(nb.path for nb in notebooks))
            found = next((nb for nb in notebooks if nb.path == key), None)
            if found is None and not quiet:
                raise BridgeError(_not_open(key, server, notebooks))
            return found
        if not notebooks:
            if quiet:
                return None
            raise BridgeError(
                f"No notebook is open on the Jupyter Server at {server.url}. Open one in "
                "JupyterLab (its kernel starts then), then call again; list_notebooks shows "
                "what is open."
            )
        return notebooks[0]  # the only one, or the most recently active

    async def _attached(self, client: str) -> KernelLink:
        api = await self._jupyter()
        notebooks = await api.notebooks()
        link = self._link
        if self._wanted:
            notebook = self._choose(notebooks, api.server)
        elif (
            link is not None
            and link.usable
            and any(nb.kernel_id == link.kernel_id for nb in notebooks)
        ):  # chosen at an earlier call (list_notebooks chooses again)
            link.client = client
            return link
        else:
            notebook = await self._on_screen(notebooks, api.server, client)
            link = self._link
        assert notebook is not None
        if link is not None and link.usable and link.kernel_id == notebook.kernel_id:
            link.client = client
            return link
        await self._drop_link()
        state = await api.kernel_state(notebook.kernel_id)
        if state is None or state == "dead":
            raise BridgeError(
                f"The kernel of {notebook.path} is dead. Restart it in JupyterLab (Kernel > "
                "Restart Kernel), then call again; rebuild_variables makes its variables again "
                "from the archive."
            )
        link = KernelLink(api.server, notebook.kernel_id, notebook.path, client)
        try:
            await link.connect()
        except BaseException:
            await link.close()
            raise
        self._link = link
        return link

    async def _on_screen(
        self, notebooks: list[NotebookSession], server: ServerInfo, client: str
    ) -> NotebookSession:
        """Choose the notebook the person is looking at (:mod:`.choosing`); keep the link
        that asked its kernel, when Loom answered there."""
        self._choose(notebooks, server)  # none open: say so
        seen = await survey(server, notebooks, client, keep=self._link)
        chosen = choose(seen)
        assert chosen is not None  # notebooks is not empty
        await self._keep(seen, chosen)
        return chosen[0].notebook

    async def _keep(self, seen: list[Seen], chosen: tuple[Seen, str] | None) -> None:
        """Keep the chosen notebook's link (``None``: the attached one), close the others."""
        if chosen is not None:
            self._why = chosen[1]
            keep = chosen[0].link if chosen[0].link is not None and chosen[0].link.usable else None
            if self._link is not None and self._link is not keep:
                await self._drop_link()
            self._link = keep
        for item in seen:
            if item.link is not None and item.link is not self._link:
                await item.link.close()

    async def _drop_link(self) -> None:
        link, self._link = self._link, None
        if link is not None:
            await link.close()


def _not_open(key: str, server: ServerInfo, notebooks: list[NotebookSession]) -> str:
    listed = ", ".join(nb.path for nb in notebooks) or "none"
    return (
        f"{key} is not open with a running kernel on the Jupyter Server at {server.url} (open "
        f"now: {listed}). Open it in JupyterLab (its kernel starts then) — or, if its page is "
        "open, its kernel died or was shut down: choose Kernel > Restart Kernel there — then "
        "call again; list_notebooks shows what is open."
    )


def _listing(
    server: ServerInfo, seen: list[Seen], current: NotebookSession | None, why: str
) -> str:
    """``list_notebooks``' text: each notebook, what its pages say, and where the tools
    work and why."""
    lines = [f"Notebooks open on the Jupyter Server at {server.url}:"]
    for item in seen:
        nb = item.notebook
        here = "  <- the tools work here" if current is not None and nb.path == current.path else ""
        lines.append(
            f"- {nb.path} (kernel {nb.kernel_name or '?'}, {nb.state or '?'}, last active "
            f"{nb.last_activity or '?'}; {mark(item)}){here}"
        )
    if not seen:
        lines.append("(none: open a notebook in JupyterLab, then call again)")
    elif current is None:
        lines.append('Give list_notebooks {"attach": PATH} to choose one.')
    else:
        lines.append(f"The tools work in {current.path}: {why}.")
        if not why.startswith(("--notebook", "you attached")):
            lines.append(
                "Without --notebook, this follows the notebook on screen at the first call and "
                'at each list_notebooks; {"attach": PATH} fixes it.'
            )
    return "\n".join(lines)


def _text(text: str) -> dict[str, Any]:
    return {"is_error": False, "content": [{"kind": "text", "text": text}]}


def _error(message: str) -> dict[str, Any]:
    return {"is_error": True, "content": [{"kind": "text", "text": message}]}


def _result(found: dict[str, Any]) -> CallToolResult:
    from mcp.types import CallToolResult, ImageContent, TextContent

    content: list[Any] = []
    for part in found.get("content") or []:
        if part.get("kind") == "image" and part.get("data"):
            mime = part.get("media_type") or "image/png"
            content.append(ImageContent(type="image", data=part["data"], mime_type=mime))
        else:
            content.append(TextContent(type="text", text=str(part.get("text", ""))))
    return CallToolResult(content=content, is_error=bool(found.get("is_error")))


def _client_name(context: Any) -> str:
    """The client's name from MCP's ``initialize`` (``clientInfo``)."""
    try:
        info = context.session.client_params.client_info
    except Exception:  # no initialize (a stateless client): unnamed
        return DEFAULT_CLIENT
    name = getattr(info, "title", None) or getattr(info, "name", None)
    return _known(str(name)) if name else DEFAULT_CLIENT


_CLIENTS = {"claude-code": "Claude Code", "claude-ai": "Claude", "cursor-vscode": "Cursor"}


def _known(name: str) -> str:
    """A client's name as people say it (Claude Code says ``claude-code``)."""
    return _CLIENTS.get(name.strip().lower(), name.strip())


def build_server(bridge: Bridge) -> Any:
    """The MCP server over ``bridge``: Loom's tools, each call through the kernel's host."""
    from mcp.server.mcpserver import MCPServer
    from mcp.types import Tool, ToolAnnotations

    tools = outside_tools()

    class LoomMcp(MCPServer):
        async def list_tools(self) -> list[Tool]:
            return [
                Tool(
                    name=tool.name,
                    description=tool.description,
                    input_schema=tool.input_schema,
                    annotations=ToolAnnotations(read_only_hint=tool.read_only),
                )
                for tool in tools
            ]

        async def call_tool(
            self, name: str, arguments: dict[str, Any], context: Any = None
        ) -> CallToolResult:
            client = _client_name(context) if context is not None else DEFAULT_CLIENT
            try:
                found = await bridge.call(name, arguments, client)
            except Exception as exc:  # never the SDK's bare "Error executing tool"
                found = _error(
                    f"{name} failed in loom-jupyter mcp ({type(exc).__name__}: {exc}). "
                    "This is a problem in the bridge, not in your input; call again."
                )
            return _result(found)

    return LoomMcp(
        "loom",
        instructions=(
            "Loom works in the live kernel of a Jupyter notebook open in JupyterLab: run code "
            "where the person's variables are, read and edit its cells (the person sees diffs "
            "and approves writes in the Loom sidebar), and recall or trace what happened in it. "
            "Every call is archived with the notebook."
        ),
    )


def serve(server_url: str | None, token: str | None, notebook: str | None) -> int:
    """Run the stdio server until the client closes it; the exit status."""
    import logging

    bridge = Bridge(server_url, token, notebook)
    server = build_server(bridge)
    logging.getLogger("httpx").setLevel(logging.WARNING)  # no line per request on stderr

    async def run() -> None:
        try:
            await server.run_stdio_async()
        finally:
            await bridge.close()

    import anyio

    try:
        anyio.run(run)
    except BaseException as exc:
        if not _client_gone(exc):
            raise
    _quiet_stdout()
    return 0


def _client_gone(exc: BaseException) -> bool:
    """Whether ``exc`` only says that the client went away (its end of a pipe closed)."""
    inner = getattr(exc, "exceptions", None)  # an exception group (anyio's task groups)
    if isinstance(inner, tuple) and inner:
        return all(isinstance(one, BaseException) and _client_gone(one) for one in inner)
    return isinstance(exc, BrokenPipeError | ConnectionResetError)


def _quiet_stdout() -> None:
    """The client may have closed its end of stdout: what Python still holds for it at exit
    goes nowhere, rather than to a "BrokenPipeError" on stderr."""
    import contextlib
    import sys

    with contextlib.suppress(OSError, ValueError):  # a broken pipe is an OSError
        sys.stdout.flush()
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no real stdout: nothing to flush at exit either
        pass
