"""Thinking in the fake Messages API: script blocks, SSE events, and the API's checks.

Script blocks: ``{"type": "thinking", "thinking": "..."}`` (the fake signs it:
``signature`` is ``fakesig_`` + a hash of the text, so any change to the text or the
signature is caught when it comes back) and ``{"type": "redacted_thinking", "data":
"..."}`` (``data`` gets a checksum the same way). A thinking block streams as the API
streams one: ``content_block_start`` with empty ``thinking`` and ``signature``,
``thinking_delta`` pieces, one ``signature_delta``, ``content_block_stop``; a redacted
block comes whole in its start.

Checks, as the real API makes them (HTTP 400 ``invalid_request_error``):

- ``thinking.type`` must be ``adaptive``, ``enabled`` or ``disabled``;
  ``output_config.effort`` one of the five levels;
- a thinking block sent back must carry its own signature (a redacted one its data)
  unchanged;
- with thinking on, in a tool loop (the last assistant message calls tools and the
  user message after it holds their results), that assistant message must start with
  the thinking blocks it came with, unchanged and before its ``tool_use``.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, MutableMapping

__all__ = [
    "THINKING_TYPES",
    "remember_thinking",
    "thinking_block",
    "thinking_events",
    "thinking_problem",
]

Json: TypeAlias = dict[str, Any]
THINKING_TYPES = ("thinking", "redacted_thinking")
_EFFORTS = ("low", "medium", "high", "xhigh", "max")
_TOOL_LOOP_RULE = (
    "When `thinking` is enabled, a final `assistant` message must start with a thinking "
    "block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We "
    "recommend you include thinking blocks from previous turns. To avoid this requirement, "
    "disable `thinking`."
)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:40]


def _signature(thinking: str) -> str:
    return f"fakesig_{_digest(thinking)}"


def _sealed(data: str) -> str:
    return f"{data}.{_digest(data)[:16]}"


def _intact(data: str) -> bool:
    body, _, check = data.rpartition(".")
    return bool(body) and check == _digest(body)[:16]


def thinking_block(block: Mapping[str, Any]) -> Json:
    """A script's thinking block as the API sends it (signed; redacted data sealed)."""
    if block.get("type") == "thinking":
        text = str(block.get("thinking", ""))
        return {"type": "thinking", "thinking": text, "signature": _signature(text)}
    data = str(block.get("data") or "EnCrYpTeD")
    return {"type": "redacted_thinking", "data": data if _intact(data) else _sealed(data)}


def thinking_events(index: int, block: Json, pieces: list[str]) -> list[tuple[str, Json]]:
    """The SSE events of one thinking block (``pieces``: its text, split as deltas)."""

    def delta(value: Json) -> tuple[str, Json]:
        event = {"type": "content_block_delta", "index": index, "delta": value}
        return ("content_block_delta", event)

    if block["type"] == "redacted_thinking":
        events = [_start(index, dict(block))]
    else:
        events = [_start(index, {"type": "thinking", "thinking": "", "signature": ""})]
        events.extend(delta({"type": "thinking_delta", "thinking": p}) for p in pieces)
        events.append(delta({"type": "signature_delta", "signature": block["signature"]}))
    events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    return events


def _start(index: int, block: Json) -> tuple[str, Json]:
    event = {"type": "content_block_start", "index": index, "content_block": block}
    return ("content_block_start", event)


def remember_thinking(
    issued: MutableMapping[str, tuple[Json, ...]], content: Iterable[Json]
) -> None:
    """Note the thinking blocks a reply sent before its tool calls (by tool_use id)."""
    blocks = list(content)
    thinking = tuple(_plain(b) for b in blocks if b.get("type") in THINKING_TYPES)
    if not thinking:
        return
    for block in blocks:
        if block.get("type") == "tool_use":
            issued[str(block.get("id"))] = thinking


def thinking_problem(body: Json, issued: Mapping[str, tuple[Json, ...]]) -> str | None:
    """What the real API would refuse about thinking in this request, or ``None``."""
    config = body.get("thinking")
    if config is not None and (
        not isinstance(config, dict)
        or config.get("type") not in ("adaptive", "enabled", "disabled")
    ):
        return "thinking.type: Input should be 'adaptive', 'enabled' or 'disabled'"
    effort = (body.get("output_config") or {}).get("effort")
    if effort is not None and effort not in _EFFORTS:
        return f"output_config.effort: Input should be {', '.join(map(repr, _EFFORTS))}"
    messages = body.get("messages") or []
    for i, message in enumerate(messages):
        problem = _tampered(i, message)
        if problem is not None:
            return problem
    on = isinstance(config, dict) and config.get("type") in ("adaptive", "enabled")
    return _tool_loop_problem(messages, issued) if on else None


def _tampered(i: int, message: Json) -> str | None:
    if message.get("role") != "assistant" or not isinstance(message.get("content"), list):
        return None
    for j, block in enumerate(message["content"]):
        kind = block.get("type")
        if kind == "thinking" and block.get("signature") != _signature(str(block.get("thinking"))):
            return f"messages.{i}.content.{j}: Invalid `signature` in `thinking` block"
        if kind == "redacted_thinking" and not _intact(str(block.get("data", ""))):
            return f"messages.{i}.content.{j}: Invalid `data` in `redacted_thinking` block"
    return None


def _tool_loop_problem(messages: list[Json], issued: Mapping[str, tuple[Json, ...]]) -> str | None:
    last = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
    if last < 0 or last + 1 >= len(messages):
        return None
    content = messages[last].get("content")
    after = messages[last + 1].get("content")
    if not isinstance(content, list) or not isinstance(after, list):
        return None
    calls = [str(b.get("id")) for b in content if b.get("type") == "tool_use"]
    if not calls or not any(b.get("type") == "tool_result" for b in after):
        return None  # not a tool loop in progress
    expected = next((issued[c] for c in calls if c in issued), None)
    if expected is None:
        return None  # the model did not think before these calls
    head = [_plain(b) for b in content[: len(expected)]]
    if head == list(expected):
        return None
    found = content[0].get("type") if content else "nothing"
    if found in THINKING_TYPES:
        return (
            f"messages.{last}.content: the thinking blocks must be sent back unchanged and in "
            f"order before the `tool_use` they led to. {_TOOL_LOOP_RULE}"
        )
    return (
        f"messages.{last}.content.0.type: Expected `thinking` or `redacted_thinking`, but "
        f"found `{found}`. {_TOOL_LOOP_RULE}"
    )


def _plain(block: Mapping[str, Any]) -> Json:
    return {k: v for k, v in block.items() if k != "cache_control"}
