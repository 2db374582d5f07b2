"""Typed conversation values: content blocks, API messages and archived turns.

Blocks mirror the Anthropic Messages API content blocks one to one, so a turn
can be archived verbatim (``blocks_to_json``) and replayed exactly
(``blocks_from_json``). Values are frozen; ids are a storage concern.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

__all__ = [
    "ApiDict",
    "ContentBlock",
    "ImageBlock",
    "Message",
    "MessageRole",
    "RedactedThinkingBlock",
    "ResultBlock",
    "ServerBlock",
    "TextBlock",
    "ThinkingBlock",
    "ToolResultBlock",
    "ToolSpec",
    "ToolUseBlock",
    "Turn",
    "TurnDraft",
    "TurnRole",
    "TurnStatus",
    "Usage",
    "block_from_api",
    "block_to_api",
    "blocks_from_json",
    "blocks_text",
    "blocks_to_json",
    "cited_sources",
    "is_thinking",
    "sources_markdown",
]

ApiDict: TypeAlias = dict[str, Any]
"""A JSON object in the wire format of the Messages API (only at the edges)."""

MessageRole = Literal["user", "assistant"]
TurnRole = Literal["user", "assistant", "tool", "system"]
TurnStatus = Literal["complete", "partial", "interrupted"]


@dataclass(frozen=True)
class TextBlock:
    """Plain text; an answer written from web search or fetch results carries ``citations``
    (the API's citation objects, kept verbatim: they go back to the API as they came)."""

    text: str
    citations: tuple[Mapping[str, Any], ...] = ()
    type: Literal["text"] = "text"


SERVER_BLOCK_TYPES: frozenset[str] = frozenset(
    {"server_tool_use", "web_search_tool_result", "web_fetch_tool_result"}
)
"""Blocks of the tools the API runs itself (``web_search``, ``web_fetch``)."""


@dataclass(frozen=True)
class ServerBlock:
    """A server tool's block (``server_tool_use``, ``web_search_tool_result``,
    ``web_fetch_tool_result``) exactly as the API sent it: archived and sent back verbatim
    (a ``pause_turn`` is continued with it, and later requests repeat it unchanged)."""

    data: Mapping[str, Any]

    @property
    def type(self) -> str:
        """The API block type."""
        return str(self.data.get("type", ""))


@dataclass(frozen=True)
class ImageBlock:
    """A base64-encoded image (PNG figures from the kernel, for example)."""

    data: str
    media_type: str = "image/png"
    type: Literal["image"] = "image"


@dataclass(frozen=True)
class ToolUseBlock:
    """The model asks to run tool ``name`` with ``input``."""

    id: str
    name: str
    input: Mapping[str, Any] = field(default_factory=dict)
    type: Literal["tool_use"] = "tool_use"


@dataclass(frozen=True)
class ThinkingBlock:
    """The model's thinking before it answers, with the ``signature`` the API checks when
    the block is sent back (archived and returned byte for byte, never edited)."""

    thinking: str
    signature: str = ""
    type: Literal["thinking"] = "thinking"


@dataclass(frozen=True)
class RedactedThinkingBlock:
    """Thinking the API encrypted (``data`` is opaque): archived and sent back as it came."""

    data: str
    type: Literal["redacted_thinking"] = "redacted_thinking"


ResultBlock: TypeAlias = "TextBlock | ImageBlock"


@dataclass(frozen=True)
class ToolResultBlock:
    """The outcome of one tool call, sent back in a user message."""

    tool_use_id: str
    content: tuple[TextBlock | ImageBlock, ...] = ()
    is_error: bool = False
    type: Literal["tool_result"] = "tool_result"

    @property
    def text(self) -> str:
        """The text parts of the result, joined."""
        return blocks_text(self.content)


ContentBlock: TypeAlias = (
    "TextBlock | ImageBlock | ToolUseBlock | ToolResultBlock | ThinkingBlock"
    " | RedactedThinkingBlock | ServerBlock"
)


def is_thinking(block: ContentBlock) -> bool:
    """Whether ``block`` is thinking (plain or redacted)."""
    return isinstance(block, ThinkingBlock | RedactedThinkingBlock)


@dataclass(frozen=True)
class Message:
    """One message of a Messages API request."""

    role: MessageRole
    content: tuple[ContentBlock, ...]

    @classmethod
    def user_text(cls, text: str) -> Message:
        """A user message holding one text block."""
        return cls("user", (TextBlock(text),))

    @property
    def text(self) -> str:
        """The text blocks of the message, joined."""
        return blocks_text(self.content)

    def to_api(self) -> ApiDict:
        """The wire form of this message."""
        return {"role": self.role, "content": [block_to_api(b) for b in self.content]}


@dataclass(frozen=True, kw_only=True)
class TurnDraft:
    """A turn to archive: everything but its session, number and time (the archive adds those).

    ``content`` is the verbatim text a person reads; ``blocks`` the exact API
    content blocks (for a ``tool`` turn: its single ``ToolResultBlock``).
    """

    role: TurnRole
    content: str
    blocks: tuple[ContentBlock, ...] = ()
    tool_name: str | None = None
    tool_call_id: str | None = None
    tool_input: Mapping[str, Any] | None = None
    is_error: bool = False
    token_count: int = 0
    status: TurnStatus = "complete"
    kernel_session: str | None = None
    execution_count: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "blocks", tuple(self.blocks))  # accept any sequence

    def archived(self, session_id: str, turn_number: int, *, created_at: str = "") -> Turn:
        """The :class:`Turn` this draft became once archived as ``turn_number``."""
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return Turn(session_id, turn_number, created_at=created_at, **fields)


@dataclass(frozen=True)
class Turn:
    """One archived row of ``conversation_turns``.

    ``content`` is the verbatim text a person reads; ``blocks`` the exact API
    content blocks (for a ``tool`` turn: its single ``ToolResultBlock``).
    """

    session_id: str
    turn_number: int
    role: TurnRole
    content: str
    blocks: tuple[ContentBlock, ...] = ()
    tool_name: str | None = None
    tool_call_id: str | None = None
    tool_input: Mapping[str, Any] | None = None
    is_error: bool = False
    token_count: int = 0
    status: TurnStatus = "complete"
    kernel_session: str | None = None
    execution_count: int | None = None
    created_at: str = ""
    id: int | None = None


def blocks_text(blocks: Iterable[ContentBlock]) -> str:
    """Join the text of every text block (and text inside tool results)."""
    parts: list[str] = []
    for block in blocks:
        if isinstance(block, (TextBlock, ToolResultBlock)):
            parts.append(block.text)
    return "\n".join(p for p in parts if p)


def block_to_api(block: ContentBlock) -> ApiDict:
    """The Messages API form of one block."""
    if isinstance(block, TextBlock):
        if block.citations:
            citations = [copy.deepcopy(dict(c)) for c in block.citations]
            return {"type": "text", "text": block.text, "citations": citations}
        return {"type": "text", "text": block.text}
    if isinstance(block, ServerBlock):
        return copy.deepcopy(dict(block.data))  # a copy: the wire adds cache_control to it
    if isinstance(block, ImageBlock):
        source = {"type": "base64", "media_type": block.media_type, "data": block.data}
        return {"type": "image", "source": source}
    if isinstance(block, ToolUseBlock):
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": dict(block.input)}
    if isinstance(block, ThinkingBlock):
        return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
    if isinstance(block, RedactedThinkingBlock):
        return {"type": "redacted_thinking", "data": block.data}
    return {
        "type": "tool_result",
        "tool_use_id": block.tool_use_id,
        "content": [block_to_api(b) for b in block.content],
        "is_error": block.is_error,
    }


def block_from_api(data: Mapping[str, Any]) -> ContentBlock:
    """Parse one Messages API block; raises ``ValueError`` on an unknown type."""
    kind = data.get("type")
    if kind == "text":
        citations = tuple(dict(c) for c in data.get("citations") or () if isinstance(c, dict))
        return TextBlock(str(data.get("text", "")), citations)
    if kind in SERVER_BLOCK_TYPES:
        return ServerBlock({k: v for k, v in data.items() if k != "cache_control"})
    if kind == "image":
        source = data.get("source") or {}
        return ImageBlock(str(source.get("data", "")), str(source.get("media_type", "image/png")))
    if kind == "tool_use":
        return ToolUseBlock(str(data["id"]), str(data["name"]), dict(data.get("input") or {}))
    if kind == "thinking":
        return ThinkingBlock(str(data.get("thinking", "")), str(data.get("signature", "")))
    if kind == "redacted_thinking":
        return RedactedThinkingBlock(str(data.get("data", "")))
    if kind == "tool_result":
        raw = data.get("content") or []
        if isinstance(raw, str):
            raw = [{"type": "text", "text": raw}]
        content = tuple(_result_part(part) for part in raw)
        return ToolResultBlock(str(data["tool_use_id"]), content, bool(data.get("is_error")))
    raise ValueError(f"unknown content block type: {kind!r}")


def _result_part(data: Mapping[str, Any]) -> TextBlock | ImageBlock:
    block = block_from_api(data)
    if not isinstance(block, TextBlock | ImageBlock):
        raise ValueError("a tool result may hold only text and image blocks")
    return block


def blocks_to_json(blocks: Sequence[ContentBlock]) -> str:
    """Serialise blocks for the archive's ``blocks`` column."""
    return json.dumps([block_to_api(b) for b in blocks], ensure_ascii=False)


def blocks_from_json(text: str | None) -> tuple[ContentBlock, ...]:
    """Parse the archive's ``blocks`` column (``None`` or empty gives no blocks)."""
    if not text:
        return ()
    return tuple(block_from_api(item) for item in json.loads(text))


def cited_sources(blocks: Iterable[ContentBlock]) -> list[tuple[str, str]]:
    """The (title, url) of every web page the text blocks cite, first citation first, once
    each (citations without a URL, such as a fetched document's character ranges, are
    left out)."""
    seen: dict[str, str] = {}
    for block in blocks:
        if not isinstance(block, TextBlock):
            continue
        for citation in block.citations:
            url = citation.get("url")
            if isinstance(url, str) and url and url not in seen:
                seen[url] = str(citation.get("title") or url)
    return [(title, url) for url, title in seen.items()]


def sources_markdown(blocks: Iterable[ContentBlock]) -> str:
    """A compact Markdown sources list for the cited pages (empty when nothing is cited)."""
    sources = cited_sources(blocks)
    if not sources:
        return ""
    links = " · ".join(f"[{_link_text(title)}]({_link_url(url)})" for title, url in sources)
    return f"\n\n**Sources:** {links}\n"


def _link_text(title: str) -> str:
    text = " ".join(title.split())
    text = text if len(text) <= 80 else text[:79] + "…"
    return text.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")


def _link_url(url: str) -> str:
    return url.replace(" ", "%20").replace("(", "%28").replace(")", "%29")


@dataclass(frozen=True)
class ToolSpec:
    """A tool as the model sees it."""

    name: str
    description: str
    input_schema: Mapping[str, Any]


@dataclass(frozen=True)
class Usage:
    """Token counts of one response (or a running total)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_1h_input_tokens: int = 0
    """The part of ``cache_creation_input_tokens`` written with a 1-hour TTL (priced at 2x
    input; the rest are 5-minute writes at 1.25x)."""

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_creation_input_tokens + other.cache_creation_input_tokens,
            self.cache_read_input_tokens + other.cache_read_input_tokens,
            self.cache_creation_1h_input_tokens + other.cache_creation_1h_input_tokens,
        )

    @property
    def total_input_tokens(self) -> int:
        """Input tokens including cache writes and reads."""
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens
