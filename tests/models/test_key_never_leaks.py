"""The API key never appears in an error, a repr, a log line or a request body."""

from __future__ import annotations

import json
import logging
import traceback
from typing import TYPE_CHECKING, Any

import pytest
from model_helpers import CANARY_KEY, collect, collect_into, quick_settings, request, strict_client

from loom_jupyter.errors import AuthenticationError, ModelError
from loom_jupyter.models.anthropic import AnthropicModel
from loom_jupyter.settings import Settings
from loom_jupyter.testing import FakeAnthropic

if TYPE_CHECKING:
    from pathlib import Path

    from loom_jupyter.models.base import ModelEvent

FAULTS: list[Any] = [
    {"fault": "http", "status": 401},
    {"fault": "http", "status": 403},
    {"fault": "http", "status": 429, "retry_after": 0, "times": 3},
    {"fault": "http", "status": 529, "retry_after": 0, "times": 3},
    {"fault": "http", "status": 500, "retry_after": 0, "times": 3},
    {"fault": "http", "status": 413},
    {"fault": "http", "status": 404},
    {"fault": "sse_error", "after_deltas": 1},
    {"fault": "sse_error", "after_deltas": 1, "error_type": "api_error"},
    {"fault": "drop", "after_deltas": 1},
    {"fault": "stall", "after_deltas": 1, "seconds": 5},
    {"fault": "truncate", "after_deltas": 1},
    {"fault": "hang", "seconds": 5, "times": 3},
]
FAULT_COUNT = len(FAULTS)


def _texts_of(error: BaseException) -> list[str]:
    chain = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    return [str(error), repr(error), chain]


async def _all_failures(model: AnthropicModel) -> tuple[list[ModelError], list[ModelEvent]]:
    errors: list[ModelError] = []
    events: list[ModelEvent] = []
    for _ in range(FAULT_COUNT):
        with pytest.raises(ModelError) as caught:
            await collect_into(events, model.stream(request("what is my key?")))
        errors.append(caught.value)
    return errors, events


def _assert_clean(texts: list[str]) -> None:
    leaked = [text for text in texts if CANARY_KEY in text]
    assert leaked == []


@pytest.mark.parametrize("key_source", ["client", "api_key", "environment"])
async def test_no_error_repr_log_or_body_holds_the_key(
    key_source: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    tmp_path: Path,
) -> None:
    record = tmp_path / "requests.jsonl"
    settings = quick_settings(stream_idle_timeout_seconds=0.3, request_timeout_seconds=0.3)
    with FakeAnthropic(FAULTS, default="error", record_path=record) as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
        monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
        client = strict_client(fake.base_url, idle=0.3) if key_source == "client" else None
        if key_source == "environment":
            monkeypatch.setenv("ANTHROPIC_API_KEY", CANARY_KEY)
        api_key = CANARY_KEY if key_source == "api_key" else None
        model = AnthropicModel(settings, client=client, api_key=api_key, retry_backoff_seconds=0.01)
        with caplog.at_level(logging.DEBUG):
            errors, events = await _all_failures(model)
        bodies = [json.dumps(r.body) for r in fake.requests]
        headers = [r.headers.get("authorization", "") for r in fake.message_requests]
        await model.aclose()

    assert len(errors) == FAULT_COUNT
    assert all(h == f"Bearer {CANARY_KEY}" for h in headers)  # the key was really used
    _assert_clean([text for error in errors for text in _texts_of(error)])
    _assert_clean(
        [repr(model), repr(settings), repr(Settings.load(env={"ANTHROPIC_API_KEY": CANARY_KEY}))]
    )
    _assert_clean([repr(e) for e in events] + [getattr(e, "message", "") for e in events])
    _assert_clean([r.getMessage() for r in caplog.records] + [caplog.text])
    _assert_clean(bodies)
    _assert_clean([record.read_text()])
    assert "<redacted>" in record.read_text()


async def test_a_key_echoed_by_the_server_is_redacted() -> None:
    echo = {"fault": "http", "status": 401, "message": f"invalid x-api-key: {CANARY_KEY}"}
    with FakeAnthropic([echo], default="error") as fake:
        client = strict_client(fake.base_url)
        model = AnthropicModel(quick_settings(), client=client)
        with pytest.raises(AuthenticationError) as caught:
            await collect(model.stream(request()))
        await client.close()
    assert "invalid x-api-key: [redacted]" in str(caught.value)
    assert CANARY_KEY not in str(caught.value)


def test_repr_of_a_model_given_a_key() -> None:
    model = AnthropicModel(quick_settings(), api_key=CANARY_KEY)
    _assert_clean([repr(model), str(model), repr(vars(model))])
