"""The Messages API wire form of a :class:`ModelRequest`.

Kept apart from the adapter so it never imports ``anthropic``: the scripted
model, the token estimate and tests use the same body the SDK would send.

Prompt caching (``cache_control: ephemeral`` with a ``ttl``) is placed where
:class:`ModelRequest` says: one breakpoint closing tools + system when
``cache_prefix`` is set (on the system prompt, which follows the tools, else on
the last tool), on the last block of each ``extra_breakpoints`` message and of
``messages[history_breakpoint]``. Never more than :data:`MAX_BREAKPOINTS`
(the API's limit): extra breakpoints beyond it are dropped, oldest first. The
API rejects a longer TTL after a shorter one, so the history never outlives the
prefix.

``thinking`` and ``effort`` become ``"thinking": {"type": "adaptive"}`` and
``"output_config": {"effort": ...}``; without them neither key is sent. A request without
thinking sends no thinking blocks back (the API does not need them then).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from loom_jupyter.messages import ApiDict, ToolSpec
    from loom_jupyter.models.base import CacheTtl, ModelRequest
    from loom_jupyter.settings import Settings

__all__ = [
    "MAX_BREAKPOINTS",
    "cache_control",
    "count_tokens_params",
    "request_params",
    "server_tool_params",
    "tool_choice_param",
]

MAX_BREAKPOINTS = 4
"""The Messages API accepts at most four blocks with ``cache_control``."""

_TTL_ORDER: dict[str, int] = {"5m": 0, "1h": 1}
_THINKING = ("thinking", "redacted_thinking")

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
    if request.tools or request.server_tools:
        params["tools"] = _tools(request)
    if request.tool_choice:
        params["tool_choice"] = tool_choice_param(request.tool_choice)
    if request.thinking:
        params["thinking"] = {"type": "adaptive"}  # DESIGN §10 (pinned)
    if request.effort is not None:
        params["output_config"] = {"effort": request.effort}
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


def cache_control(ttl: CacheTtl) -> ApiDict:
    """A breakpoint's ``cache_control`` value."""
    return {"type": "ephemeral", "ttl": ttl}


def _system(request: ModelRequest) -> list[ApiDict]:
    block: ApiDict = {"type": "text", "text": request.system}
    if request.cache_prefix:
        block["cache_control"] = cache_control(request.prefix_ttl)
    return [block]


def _tools(request: ModelRequest) -> list[ApiDict]:
    wire = [_tool(t) for t in request.tools]
    wire += [dict(t) for t in request.server_tools]  # after ours, in a fixed order
    # The system prompt follows the tools, so its breakpoint covers them too.
    if request.cache_prefix and not request.system:
        wire[-1]["cache_control"] = cache_control(request.prefix_ttl)
    return wire


WEB_SEARCH_TOOL = "web_search_20250305"
WEB_FETCH_TOOL = "web_fetch_20250910"


def server_tool_params(settings: Settings) -> tuple[ApiDict, ...]:
    """The API's own tools loom.yaml turns on (``web_search``, ``web_fetch``; both off by
    default), each with its ``max_uses``. Web fetch asks for citations, as web search
    always gives them."""
    tools: list[ApiDict] = []
    if settings.web_search:
        tools.append(
            {
                "type": WEB_SEARCH_TOOL,
                "name": "web_search",
                "max_uses": settings.web_search_max_uses,
            }
        )
    if settings.web_fetch:
        tools.append(
            {
                "type": WEB_FETCH_TOOL,
                "name": "web_fetch",
                "max_uses": settings.web_fetch_max_uses,
                "citations": {"enabled": True},
            }
        )
    return tuple(tools)


def _tool(tool: ToolSpec) -> ApiDict:
    schema: dict[str, Any] = dict(tool.input_schema)
    return {"name": tool.name, "description": tool.description, "input_schema": schema}


def _messages(request: ModelRequest) -> list[ApiDict]:
    wire = [m.to_api() for m in request.messages]
    if not request.thinking:
        for message in wire:
            message["content"] = [b for b in message["content"] if b["type"] not in _THINKING]
    ttl = _history_ttl(request)
    for index in _history_breakpoints(request, len(wire)):
        if wire[index]["content"]:
            wire[index]["content"][-1]["cache_control"] = cache_control(ttl)
    return wire


def _history_ttl(request: ModelRequest) -> CacheTtl:
    """The history's TTL, never longer than the prefix's (the API's order rule)."""
    if request.cache_prefix and _TTL_ORDER[request.history_ttl] > _TTL_ORDER[request.prefix_ttl]:
        return request.prefix_ttl
    return request.history_ttl


def _history_breakpoints(request: ModelRequest, count: int) -> list[int]:
    """Message indices to mark (non-negative, distinct, in order), within the API's limit."""
    marks = [*request.extra_breakpoints]
    if request.history_breakpoint is not None:
        marks.append(request.history_breakpoint)
    indices = sorted({i % count for i in marks if -count <= i < count})
    room = MAX_BREAKPOINTS - (
        1 if request.cache_prefix and (request.system or request.tools) else 0
    )
    return indices[-room:] if room > 0 else []
