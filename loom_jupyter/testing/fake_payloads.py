"""Messages API payloads (JSON and SSE events) for the fake server's replies.

Shapes follow the real API closely enough that the ``anthropic`` SDK's
strict response validation accepts them: ``usage`` in both ``message_start``
and ``message_delta``, tool_use blocks starting with ``"input": {}`` and
streamed as ``input_json_delta`` pieces, ``message_delta`` then
``message_stop``.
"""

from __future__ import annotations

from typing import Any, TypeAlias

from loom_jupyter.testing.fake_script import Reply, StreamFault, json_pieces, text_pieces

__all__ = [
    "SseEvent",
    "default_models",
    "message_json",
    "model_json",
    "models_page",
    "partial_events",
    "stream_events",
]

Json: TypeAlias = dict[str, Any]
SseEvent: TypeAlias = "tuple[str, Json]"


def message_json(reply: Reply, *, message_id: str, model: str, usage: Json) -> Json:
    """The whole message, for a non-streaming request."""
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": reply.model or model,
        "content": [dict(block) for block in reply.content],
        "stop_reason": reply.resolved_stop_reason,
        "stop_sequence": None,
        "usage": usage,
    }


def stream_events(reply: Reply, *, message_id: str, model: str, usage: Json) -> list[SseEvent]:
    """Every SSE event of a complete streamed reply."""
    events = _opening(message_id, reply.model or model, usage)
    for index, block in enumerate(reply.content):
        events.extend(_block_events(index, block))
    delta = {"stop_reason": reply.resolved_stop_reason, "stop_sequence": None}
    events.append(("message_delta", {"type": "message_delta", "delta": delta, "usage": usage}))
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def partial_events(
    fault: StreamFault, *, message_id: str, model: str, usage: Json
) -> list[SseEvent]:
    """The events sent before a stream fault: the start, then whole blocks or text deltas."""
    events = _opening(message_id, model, usage)
    if fault.content:
        for index, block in enumerate(fault.content):
            events.extend(_block_events(index, block))
        return events
    pieces = text_pieces(fault.text)[: fault.after_deltas]
    if pieces:
        events.append(_start(0, {"type": "text", "text": ""}))
        events.extend(_delta(0, {"type": "text_delta", "text": p}) for p in pieces)
    return events


def model_json(model_id: str) -> Json:
    """``GET /v1/models/{id}``: a model with a 1M-token context window."""
    return {
        "type": "model",
        "id": model_id,
        "display_name": model_id.replace("-", " ").title(),
        "created_at": "2026-01-01T00:00:00Z",
        "lifecycle": "active",
        "max_input_tokens": 1_000_000,
        "max_tokens": 128_000,
    }


def default_models() -> list[Json]:
    """What ``GET /v1/models`` lists unless a test gives its own: three models, newest first."""
    return [
        {**model_json(model_id), "display_name": name, "created_at": created}
        for model_id, name, created in (
            ("claude-opus-5-5", "Claude Opus 5.5", "2026-09-30T00:00:00Z"),
            ("claude-sonnet-5-5", "Claude Sonnet 5.5", "2026-09-15T00:00:00Z"),
            ("claude-haiku-5-5", "Claude Haiku 5.5", "2026-09-01T00:00:00Z"),
        )
    ]


def models_page(models: list[Json], query: dict[str, list[str]]) -> Json:
    """One page of ``GET /v1/models`` as the API answers it: ``limit`` (1-1000, default 20),
    ``after_id`` / ``before_id`` cursors; ``data``, ``has_more``, ``first_id``, ``last_id``."""
    limit = int((query.get("limit") or ["20"])[0])
    if not 1 <= limit <= 1000:
        raise ValueError("limit: must be between 1 and 1000")
    ids = [str(m["id"]) for m in models]
    after, before = _param(query, "after_id"), _param(query, "before_id")
    if before is not None:
        end = ids.index(before) if before in ids else len(ids)
        page = models[max(0, end - limit) : end]
        more = end - limit > 0
    else:
        start = ids.index(after) + 1 if after in ids else 0
        page = models[start : start + limit]
        more = start + limit < len(models)
    return {
        "data": page,
        "has_more": more,
        "first_id": page[0]["id"] if page else None,
        "last_id": page[-1]["id"] if page else None,
    }


def _param(query: dict[str, list[str]], name: str) -> str | None:
    values = query.get(name)
    return values[0] if values else None


def _opening(message_id: str, model: str, usage: Json) -> list[SseEvent]:
    start_usage = {**usage, "output_tokens": min(1, int(usage.get("output_tokens", 0)))}
    message: Json = {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": start_usage,
    }
    return [
        ("message_start", {"type": "message_start", "message": message}),
        ("ping", {"type": "ping"}),
    ]


def _block_events(index: int, block: Json) -> list[SseEvent]:
    deltas: list[Json]
    if block["type"] in ("thinking", "redacted_thinking"):  # signed, as the API streams it
        from loom_jupyter.testing.fake_thinking import thinking_events

        return thinking_events(index, block, text_pieces(block.get("thinking", "")))
    if block["type"] in ("tool_use", "server_tool_use"):
        opening = {**block, "input": {}}  # the input streams as JSON pieces
        deltas = [
            {"type": "input_json_delta", "partial_json": p} for p in json_pieces(block["input"])
        ]
    elif block["type"] == "text":
        opening = {"type": "text", "text": ""}
        # Citations stream as citations_delta events before the text they support.
        deltas = [{"type": "citations_delta", "citation": c} for c in block.get("citations") or []]
        deltas += [{"type": "text_delta", "text": p} for p in text_pieces(block["text"])]
    else:  # a server tool's result (web_search_tool_result...) comes whole in its start
        opening, deltas = dict(block), []
    events = [_start(index, opening)]
    events.extend(_delta(index, d) for d in deltas)
    events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    return events


def _start(index: int, block: Json) -> SseEvent:
    return (
        "content_block_start",
        {"type": "content_block_start", "index": index, "content_block": block},
    )


def _delta(index: int, delta: Json) -> SseEvent:
    return ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})
