"""An MCP server's tool as one of loom's tools: ``mcp__NAME__TOOL``.

It is a ``write`` tool for the approval policy unless its server's ``approval`` in
loom.yaml says otherwise (:class:`~loom_jupyter.tools.approval.ServerApproval`):
``auto`` runs without asking, ``read-only`` refuses, and a read-only session refuses
every MCP tool. The result's text blocks are joined into one (so the registry's cap
bounds the whole result, however many blocks the server sent); images go to the model
as image blocks; audio and binary resources are described, not sent.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from typing import TYPE_CHECKING, Any

from loom_jupyter.errors import ToolError
from loom_jupyter.messages import ImageBlock, TextBlock, ToolSpec
from loom_jupyter.tools.approval import ApprovalRequest
from loom_jupyter.tools.base import ToolAccess, ToolOutput

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping

    from mcp_types import CallToolResult

    from loom_jupyter.mcp.connection import RemoteTool, ServerConnection
    from loom_jupyter.settings import ApprovalMode
    from loom_jupyter.tools.base import ToolContext

__all__ = ["IMAGE_TYPES", "McpTool", "tool_name"]

PREFIX = "mcp__"
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
_MAX_NAME = 128  # the Messages API's limit on tool names
_MAX_DESCRIPTION = 4_000
_MAX_IMAGES = 8
_MAX_IMAGE_BASE64 = 5 * 1024 * 1024 * 4 // 3  # the API takes images up to 5 MB
_NOT_NAME = re.compile(r"[^A-Za-z0-9_-]")


def tool_name(server: str, tool: str, taken: set[str]) -> str:
    """``mcp__server__tool``, with characters the API refuses replaced and made unique."""
    base = f"{PREFIX}{server}__{_NOT_NAME.sub('_', tool)}"[:_MAX_NAME]
    name, n = base, 2
    while name in taken:
        suffix = f"_{n}"
        name, n = base[: _MAX_NAME - len(suffix)] + suffix, n + 1
    return name


class McpTool:
    """One tool of one MCP server."""

    def __init__(
        self,
        connection: ServerConnection,
        remote: RemoteTool,
        name: str,
        on_crash: Callable[[ServerConnection, str, int, str], Awaitable[str]],
    ) -> None:
        self.connection = connection
        self.remote = remote
        self._on_crash = on_crash
        server = connection.config.name
        about = remote.description.strip() or f"The tool {remote.name} of this server."
        if len(about) > _MAX_DESCRIPTION:
            about = about[:_MAX_DESCRIPTION] + " [...]"
        self._spec = ToolSpec(
            name=name,
            description=f"[MCP server {server}, tool {remote.name}] {about}",
            input_schema=remote.input_schema,
        )

    @property
    def spec(self) -> ToolSpec:
        return self._spec

    @property
    def access(self) -> ToolAccess:
        return "write"

    @property
    def server_approval(self) -> ApprovalMode:
        """This server's ``approval`` in loom.yaml."""
        return self.connection.config.approval

    def guard_rail(self, args: Mapping[str, Any], ctx: ToolContext | None) -> str | None:
        """None: the call runs in its server's process, under the server's own ``approval``
        (loom.yaml); what that process touches is beyond what Loom can read here."""
        return None

    def approval_request(self, args: Mapping[str, Any], ctx: ToolContext | None) -> ApprovalRequest:
        """What the person is asked: the server, the tool and the arguments."""
        connection = self.connection
        detail = json.dumps(dict(args), indent=2, ensure_ascii=False, default=str)
        where = f"{connection.config.transport}: {connection.describe_target()}"
        return ApprovalRequest(
            self.spec.name,
            f"call {self.remote.name} on the MCP server {connection.config.name} ({where})",
            connection.redact(detail),
        )

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        from loom_jupyter.mcp.connection import ServerGone

        connection = self.connection
        if not connection.alive:
            raise ToolError(_not_running(connection))
        generation = connection.generation
        try:
            result = await connection.call(self.remote.name, dict(args))
        except ServerGone as gone:
            report = await self._on_crash(connection, self.spec.name, generation, str(gone))
            raise ToolError(report) from None
        return to_output(result, server=connection.config.name, tool=self.remote.name)


def _not_running(connection: ServerConnection) -> str:
    name = connection.config.name
    why = f" ({connection.error})" if connection.error else ""
    return (
        f"The MCP server {name} is {connection.state}{why}, so its tools cannot run now. "
        f"The person can see it with `%cowork mcp` and start it again with "
        f"`%cowork mcp --restart {name}`."
    )


def to_output(result: CallToolResult, *, server: str, tool: str) -> ToolOutput:
    """The model's view of a result: its text in one block, then its images."""
    texts: list[str] = []
    images: list[ImageBlock] = []
    for item in result.content:
        kind = getattr(item, "type", "")
        if kind == "text":
            texts.append(str(getattr(item, "text", "")))
        elif kind == "image":
            texts.extend(_image(item, images))
        elif kind == "resource":
            texts.append(_resource(getattr(item, "resource", None)))
        elif kind == "resource_link":
            texts.append(f"[resource link: {getattr(item, 'uri', '')} {getattr(item, 'name', '')}]")
        elif kind == "audio":
            size = len(str(getattr(item, "data", ""))) * 3 // 4
            texts.append(f"[audio ({getattr(item, 'mime_type', '?')}, {size:,} bytes) not shown]")
        else:
            texts.append(f"[{kind or 'unknown'} content not shown]")
    if not texts and not images and result.structured_content is not None:
        texts.append(json.dumps(result.structured_content, ensure_ascii=False, default=str))
    text = "\n".join(texts)
    if not text and not images:
        text = "(the tool returned nothing)"
    blocks: list[TextBlock | ImageBlock] = [TextBlock(text)] if text else []
    blocks.extend(images)
    shape = f"{len(text):,} characters" + (f", {len(images)} image(s)" if images else "")
    summary = f"{server}: {tool} → {'error, ' if result.is_error else ''}{shape}"
    return ToolOutput(tuple(blocks), is_error=bool(result.is_error), summary=summary)


def _image(item: object, images: list[ImageBlock]) -> list[str]:
    media = str(getattr(item, "mime_type", ""))
    data = str(getattr(item, "data", ""))
    if media not in IMAGE_TYPES:
        return [f"[image of type {media or '?'} not shown: the model reads png, jpeg, gif, webp]"]
    if len(data) > _MAX_IMAGE_BASE64:
        return [f"[image ({media}, {len(data) * 3 // 4:,} bytes) not shown: over 5 MB]"]
    if len(images) >= _MAX_IMAGES:
        return [f"[image ({media}) not shown: at most {_MAX_IMAGES} images per result]"]
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return [f"[image ({media}) not shown: its data is not valid base64]"]
    images.append(ImageBlock(data, media))
    return []


def _resource(resource: object) -> str:
    uri = getattr(resource, "uri", "")
    text = getattr(resource, "text", None)
    if text is not None:
        return f"[resource {uri}]\n{text}"
    size = len(str(getattr(resource, "blob", ""))) * 3 // 4
    return f"[resource {uri} ({getattr(resource, 'mime_type', None) or 'binary'}, {size:,} bytes)]"
