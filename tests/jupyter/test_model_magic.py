"""``%cowork model`` on a real in-process IPython shell, against the fake Messages API: the
list from ``GET /v1/models`` with the current model marked, switching, the day-long cache,
and web search answers shown with their sources."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from loom_jupyter.models.catalog import cache_path

if TYPE_CHECKING:
    from collections.abc import Callable

    from loom_jupyter.testing import FakeAnthropic

pytest_plugins = ["loom_jupyter.testing.pytest_plugin"]


@pytest.fixture
def cowork_env() -> dict[str, str]:
    return {"LOOM_WEB_SEARCH": "true"}


def row(listing: str, model_id: str) -> str:
    return next(line for line in listing.splitlines() if f" {model_id} " in f" {line} ")


def model_gets(fake: FakeAnthropic) -> int:
    return sum(r.method == "GET" and r.path == "/v1/models" for r in fake.requests)


def test_model_lists_the_models_api_and_marks_the_current_one(
    cowork: Callable[[str], str], fake_anthropic: FakeAnthropic
) -> None:
    listing = cowork("model")
    assert "context window" in listing
    assert "max output" in listing
    assert "From the Models API" in listing
    sonnet = row(listing, "claude-sonnet-5-5")
    assert sonnet.lstrip().startswith("*")
    assert "Claude Sonnet 5.5" in sonnet
    assert "1M" in sonnet
    assert "128K" in sonnet
    assert not row(listing, "claude-opus-5-5").lstrip().startswith("*")
    assert cache_path().is_file()

    assert "Model: claude-opus-5-5" in cowork("model opus")
    again = cowork("model")
    assert row(again, "claude-opus-5-5").lstrip().startswith("*")
    assert "cached for a day" in again
    assert model_gets(fake_anthropic) == 1  # the second listing came from the cache

    cowork("model --refresh")
    assert model_gets(fake_anthropic) == 2


def test_offline_the_shipped_table_is_listed(
    cowork: Callable[[str], str], fake_anthropic: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")  # nothing listens there
    monkeypatch.setenv("LOOM_MAX_RETRIES", "0")
    listing = cowork("model")
    assert "shipped with loom_jupyter" in listing
    assert row(listing, "claude-sonnet-5-5").lstrip().startswith("*")
    assert "claude-haiku-4-5" in listing


def test_a_searched_answer_is_shown_with_its_sources(
    cowork: Callable[[str], str], fake_anthropic: FakeAnthropic
) -> None:
    citation = {
        "type": "web_search_result_location",
        "url": "https://example.org/pandas-3",
        "title": "pandas 3 is out",
        "encrypted_index": "Eo8B...",
        "cited_text": "pandas 3 was released",
    }
    fake_anthropic.add(
        {
            "content": [
                {
                    "type": "server_tool_use",
                    "id": "srvtoolu_9",
                    "name": "web_search",
                    "input": {"query": "pandas 3"},
                },
                {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_9", "content": []},
                {"type": "text", "text": "It is out.", "citations": [citation]},
            ]
        }
    )
    shown = cowork("-- is pandas 3 out?")
    assert "It is out." in shown
    assert "Sources:" in shown
    assert "https://example.org/pandas-3" in shown
    (body,) = [r.body for r in fake_anthropic.message_requests if r.body]
    assert {"type": "web_search_20250305", "name": "web_search", "max_uses": 5} in body["tools"]
