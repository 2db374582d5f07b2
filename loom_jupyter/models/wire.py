"""The Messages API wire form of a :class:`ModelRequest`.

Kept apart from the adapter so it never imports ``anthropic``: the scripted
model, the token estimate and tests use the same body the SDK would send.

Prompt caching (``cache_control: ephemeral``) is placed where
:class:`ModelRequest` says: on the last tool and on the static system prompt
when ``cache_prefix`` is set, and on the last block of
``messages[history_breakpoint]``. That is at most three of the API's four
breakpoints.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from loom_jupyter.messages import ApiDict, ToolSpec
    from loom_jupyter.models.base import ModelRequest

__all__ = ["EPHEMERAL", "count_tokens_params", "request_params", "tool_choice_param"]

EPHEMERAL: ApiDict = {"type": "ephemeral"}

# The API accepts only these metadata keys; other keys in ModelRequest.metadata
# are local labels and are not sent (the API would reject the request).
_API_METADATA_KEYS = ("user_id",)


def request_params(request: ModelRequest) -> ApiDict:
    """Keyword arguments for ``client.messages.stream`` / ``create`` (no ``stream`` key)."""
    params: ApiDict = {
        "model": request.model,
        "max_tokens": request.max_tokens,
        "messages": _messages(request),
    }
    if request.system:
        params["system"] = _system(request)
    if request.tools:
        params["tools"] = _tools(request.tools, cache=request.cache_prefix)
    if request.tool_choice:
        params["tool_choice"] = tool_choice_param(request.tool_choice)
    metadata = {k: v for k, v in request.metadata.items() if k in _API_METADATA_KEYS}
    if metadata:
        params["metadata"] = metadata
    return params


def count_tokens_params(request: ModelRequest) -> ApiDict:
    """Keyword arguments for ``client.messages.count_tokens``."""
    params = request_params(request)
    for key in ("max_tokens", "metadata"):
        params.pop(key, None)
    return params


def tool_choice_param(choice: str) -> ApiDict:
    """``"auto"``, ``"any"``, ``"none"`` or a tool name, in wire form."""
    if choice in ("auto", "any", "none"):
        return {"type": choice}
    return {"type": "tool", "name": choice}


def _system(request: ModelRequest) -> list[ApiDict]:
    block: ApiDict = {"type": "text", "text": request.system}
    if request.cache_prefix:
        block["cache_control"] = dict(EPHEMERAL)
    return [block]


def _tools(tools: tuple[ToolSpec, ...], *, cache: bool) -> list[ApiDict]:
    wire = [_tool(t) for t in tools]
    if cache:
        wire[-1]["cache_control"] = dict(EPHEMERAL)
    return wire


def _tool(tool: ToolSpec) -> ApiDict:
    schema: dict[str, Any] = dict(tool.input_schema)
    return {"name": tool.name, "description": tool.description, "input_schema": schema}


def _messages(request: ModelRequest) -> list[ApiDict]:
    wire = [m.to_api() for m in request.messages]
    index = request.history_breakpoint
    if index is not None and -len(wire) <= index < len(wire) and wire[index]["content"]:
        wire[index]["content"][-1]["cache_control"] = dict(EPHEMERAL)
    return wire
