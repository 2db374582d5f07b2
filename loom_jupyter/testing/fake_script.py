"""Script entries of the fake Messages API and the payloads they produce.

The JSON script format is documented in :mod:`loom_jupyter.testing.fake_anthropic`;
this module parses it into typed entries and turns a reply into the exact
JSON / SSE payloads the Messages API sends. Standard library only.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping, Sequence

__all__ = [
    "ERROR_TYPES",
    "Entry",
    "HttpFault",
    "Reply",
    "StreamFault",
    "cache_control_problem",
    "echo_reply",
    "error_body",
    "estimate_tokens",
    "last_user_text",
    "parse_entry",
    "parse_script",
]

Json: TypeAlias = dict[str, Any]
StreamFaultKind = Literal["sse_error", "drop", "stall", "truncate", "hang"]

ERROR_TYPES: Mapping[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}
_DEFAULT_PARTIAL = "This answer starts to stream and then breaks off part way through."


@dataclass(frozen=True)
class Reply:
    """An assistant message: content blocks in API form, stop reason, usage."""

    content: tuple[Json, ...]
    stop_reason: str | None = None
    usage: Json | None = None
    model: str | None = None
    delay: float = 0.0
    hold: str | None = None
    """A gate's name: the stream stops after ``hold_after`` deltas until
    :meth:`~loom_jupyter.testing.FakeAnthropic.release` opens it (a turn that surely runs)."""
    hold_after: int = 1

    @property
    def resolved_stop_reason(self) -> str:
        """The given stop reason, else ``tool_use`` when a tool is called, else ``end_turn``."""
        if self.stop_reason:
            return self.stop_reason
        calls = any(block.get("type") == "tool_use" for block in self.content)
        return "tool_use" if calls else "end_turn"


@dataclass(frozen=True)
class HttpFault:
    """Answer with an HTTP error status and an error body."""

    status: int
    error_type: str
    message: str
    retry_after: float | None = None


@dataclass(frozen=True)
class StreamFault:
    """Start a stream, send some content, then fail as ``kind`` says.

    The content is ``after_deltas`` text deltas of ``text``, or, when
    ``content`` is given, those whole blocks (e.g. a complete tool call).
    """

    kind: StreamFaultKind
    after_deltas: int = 0
    text: str = _DEFAULT_PARTIAL
    error_type: str = "overloaded_error"
    message: str = "Overloaded"
    seconds: float = 30.0
    content: tuple[Json, ...] = ()


Entry: TypeAlias = "Reply | HttpFault | StreamFault"


def parse_script(items: Sequence[Any]) -> list[Entry]:
    """Parse a JSON script (a list of entries; ``"times": n`` repeats one)."""
    entries: list[Entry] = []
    for index, item in enumerate(items):
        try:
            times = int(item.get("times", 1)) if isinstance(item, dict) else 1
            entries.extend([parse_entry(item)] * times)
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"script entry {index}: {exc} in {item!r}") from exc
    return entries


def parse_entry(item: str | Json | Entry) -> Entry:
    """One entry: a string (a text reply), a reply object or a fault object."""
    if isinstance(item, Reply | HttpFault | StreamFault):
        return item
    if isinstance(item, str):
        return Reply(({"type": "text", "text": item},))
    if not isinstance(item, dict):
        raise TypeError("an entry is a string or an object")
    fault = item.get("fault")
    if fault is None:
        return _reply(item)
    if fault == "http":
        return _http_fault(item)
    if fault in ("sse_error", "drop", "stall", "truncate", "hang"):
        return _stream_fault(fault, item)
    raise ValueError(f"unknown fault {fault!r}")


def _reply(item: Json) -> Reply:
    content = item.get("content")
    if content is None:
        content = [{"type": "text", "text": str(item.get("text", ""))}]
    blocks = tuple(_block(block, i) for i, block in enumerate(content))
    usage = item.get("usage")
    hold = item.get("hold")
    return Reply(
        blocks,
        item.get("stop_reason"),
        usage,
        item.get("model"),
        float(item.get("delay", 0)),
        None if hold is None else str(hold),
        int(item.get("hold_after", 1)),
    )


def _block(block: Any, index: int) -> Json:
    if isinstance(block, str):
        return {"type": "text", "text": block}
    if block.get("type") == "tool_use":
        tool_id = block.get("id") or f"toolu_fake_{index:02d}"
        return {
            "type": "tool_use",
            "id": tool_id,
            "name": block["name"],
            "input": block.get("input", {}),
        }
    if block.get("type") == "text":
        text: Json = {"type": "text", "text": str(block["text"])}
        if block.get("citations"):
            text["citations"] = [dict(c) for c in block["citations"]]
        return text
    if block.get("type") == "server_tool_use":
        tool_id = block.get("id") or f"srvtoolu_fake_{index:02d}"
        return {**block, "id": tool_id, "input": block.get("input", {})}
    if block.get("type") in ("web_search_tool_result", "web_fetch_tool_result"):
        return dict(block)  # as given: the fake sends it as the API would
    if block.get("type") in ("thinking", "redacted_thinking"):
        from loom_jupyter.testing.fake_thinking import thinking_block

        return thinking_block(block)
    raise ValueError(f"unknown block type {block.get('type')!r}")


def _http_fault(item: Json) -> HttpFault:
    status = int(item.get("status", 500))
    error_type = item.get("error_type") or ERROR_TYPES.get(status, "api_error")
    message = item.get("message") or f"fake {error_type}"
    retry_after = item.get("retry_after")
    return HttpFault(
        status, error_type, message, None if retry_after is None else float(retry_after)
    )


def _stream_fault(kind: StreamFaultKind, item: Json) -> StreamFault:
    return StreamFault(
        kind,
        int(item.get("after_deltas", 0)),
        str(item.get("text", _DEFAULT_PARTIAL)),
        str(item.get("error_type", "overloaded_error")),
        str(item.get("message", "Overloaded")),
        float(item.get("seconds", 30.0)),
        tuple(_block(block, i) for i, block in enumerate(item.get("content") or [])),
    )


def estimate_tokens(value: Any) -> int:
    """About four characters per token over the JSON text of ``value``."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return math.ceil(len(text) / 4)


def last_user_text(body: Json) -> str:
    """The text of the last user message (text blocks and tool-result text)."""
    for message in reversed(body.get("messages") or []):
        if message.get("role") == "user":
            return _content_text(message.get("content"))
    return ""


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content or []:
        if block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif block.get("type") == "tool_result":
            parts.append(_content_text(block.get("content")))
    return " ".join(p for p in parts if p)


def echo_reply(body: Json) -> Reply:
    """The default reply: a short deterministic text naming the last user message."""
    said = " ".join(last_user_text(body).split())
    said = said if len(said) <= 120 else said[:117] + "..."
    return Reply(({"type": "text", "text": f"(fake Claude) You said: {said}"},))


def error_body(error_type: str, message: str, request_id: str) -> Json:
    """The Messages API error object."""
    return {
        "type": "error",
        "error": {"type": error_type, "message": message},
        "request_id": request_id,
    }


@dataclass
class CacheSimulator:
    """Splits input tokens into cache writes and reads, like prompt caching would.

    The prefix up to the last ``cache_control`` breakpoint is "written" the
    first time it is seen and "read" on later requests with the same prefix.
    """

    seen: set[str] = field(default_factory=set)

    def usage(self, body: Json, output_tokens: int) -> Json:
        """Usage of a request whose reply has ``output_tokens``."""
        total = estimate_tokens(_prompt_parts(body))
        prefix = _cached_prefix(body)
        cached = min(estimate_tokens(prefix), total) if prefix else 0
        # Keyed by content alone: moving a breakpoint or changing its TTL keeps the entry.
        content = [_without_cache_control(item) for item in prefix]
        key = hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()
        hit = bool(prefix) and key in self.seen
        if prefix:
            self.seen.add(key)
        return {
            "input_tokens": total - cached,
            "output_tokens": output_tokens,
            "cache_creation_input_tokens": 0 if hit else cached,
            "cache_read_input_tokens": cached if hit else 0,
        }


def _prompt_parts(body: Json) -> list[Any]:
    return [body.get("tools") or [], body.get("system") or [], body.get("messages") or []]


def _cached_prefix(body: Json) -> list[Any]:
    """Tools, system and messages up to the last block holding ``cache_control``."""
    parts = _prompt_parts(body)
    flat: list[Any] = list(_walk_blocks(parts))
    last = max((i for i, item in enumerate(flat) if _has_cache_control(item)), default=-1)
    return flat[: last + 1]


def _walk_blocks(parts: list[Any]) -> Iterator[Any]:
    tools, system, messages = parts
    yield from tools
    yield from ([{"type": "text", "text": system}] if isinstance(system, str) else system)
    for message in messages:
        content = message.get("content")
        yield from ([{"type": "text", "text": content}] if isinstance(content, str) else content)


def _has_cache_control(item: Any) -> bool:
    return isinstance(item, dict) and "cache_control" in item


def _without_cache_control(item: Any) -> Any:
    if not _has_cache_control(item):
        return item
    return {k: v for k, v in item.items() if k != "cache_control"}


_TTLS = {"5m": 0, "1h": 1}


def cache_control_problem(body: Json) -> str | None:
    """What the real API would reject in the request's breakpoints, or ``None``.

    At most four blocks may carry ``cache_control``; each is ``ephemeral`` with an
    optional ``ttl`` of ``"5m"`` or ``"1h"``; a longer TTL may not follow a shorter one.
    """
    marks = [i["cache_control"] for i in _walk_blocks(_prompt_parts(body)) if _has_cache_control(i)]
    if len(marks) > 4:
        return f"A maximum of 4 blocks with cache_control may be provided. Found {len(marks)}."
    ttls = [mark.get("ttl", "5m") if isinstance(mark, dict) else None for mark in marks]
    if any(not isinstance(m, dict) or m.get("type") != "ephemeral" for m in marks):
        return "cache_control: type must be 'ephemeral'"
    if any(ttl not in _TTLS for ttl in ttls):
        return "cache_control.ttl: must be '5m' or '1h'"
    ranks = [_TTLS[str(ttl)] for ttl in ttls]
    if any(later > earlier for earlier, later in itertools.pairwise(ranks)):
        return "a ttl='1h' cache_control block must not come after a ttl='5m' block"
    return None


def text_pieces(text: str, words_per_piece: int = 2) -> list[str]:
    """Split text into deltas of a few words each (keeping all whitespace)."""
    words = re.findall(r"\s*\S+\s*|\s+", text)
    return ["".join(words[i : i + words_per_piece]) for i in range(0, len(words), words_per_piece)]


def json_pieces(value: Any) -> list[str]:
    """A tool input as three or so ``input_json_delta`` pieces."""
    encoded = json.dumps(value, ensure_ascii=False)
    size = max(1, math.ceil(len(encoded) / 3))
    return [encoded[i : i + size] for i in range(0, len(encoded), size)]
