"""The Models API (``GET /v1/models``) through the real SDK against the fake, the day-long
cache beside the user config, the shipped table offline, and the limits that follow."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from loom_jupyter.engine.context import WindowConfig
from loom_jupyter.errors import ModelError
from loom_jupyter.models import catalog
from loom_jupyter.models.catalog import (
    CACHE_SECONDS,
    SHIPPED,
    ModelInfo,
    cache_path,
    context_budget,
    list_models,
    max_output_tokens,
    model_capabilities,
    model_info,
)
from loom_jupyter.settings import Settings, user_config_path
from loom_jupyter.testing.fake_payloads import models_page

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from loom_jupyter.models.anthropic import AnthropicModel
    from loom_jupyter.testing.fake_anthropic import FakeAnthropic

NOW = 1_800_000_000.0


def api_model(n: int, **extra: Any) -> dict[str, Any]:
    return {
        "type": "model",
        "id": f"claude-test-{n:03d}",
        "display_name": f"Claude Test {n}",
        "created_at": "2026-01-01T00:00:00Z",
        "lifecycle": "active",
        "max_input_tokens": 100_000 + n,
        "max_tokens": 1_000 + n,
        **extra,
    }


def model_gets(fake: FakeAnthropic) -> list[str]:
    return [r.path for r in fake.requests if r.method == "GET"]


async def test_the_listing_follows_every_page_of_the_api(
    fake: FakeAnthropic, make_model: Callable[..., AnthropicModel]
) -> None:
    fake.set_models([api_model(n) for n in range(150)])
    listed = await make_model().list_models()

    assert [m["id"] for m in listed] == [f"claude-test-{n:03d}" for n in range(150)]
    assert listed[0]["max_input_tokens"] == 100_000
    assert listed[0]["max_tokens"] == 1_000
    assert model_gets(fake) == ["/v1/models", "/v1/models"]  # limit=100: two pages


def test_the_fake_pages_like_the_api() -> None:
    models = [api_model(n) for n in range(5)]
    first = models_page(models, {"limit": ["2"]})
    assert [m["id"] for m in first["data"]] == ["claude-test-000", "claude-test-001"]
    assert first["has_more"]
    assert first["last_id"] == "claude-test-001"
    last = models_page(models, {"limit": ["2"], "after_id": ["claude-test-003"]})
    assert [m["id"] for m in last["data"]] == ["claude-test-004"]
    assert not last["has_more"]
    back = models_page(models, {"limit": ["2"], "before_id": ["claude-test-003"]})
    assert [m["id"] for m in back["data"]] == ["claude-test-001", "claude-test-002"]
    assert back["has_more"]
    assert back["first_id"] == "claude-test-001"
    with pytest.raises(ValueError, match="limit"):
        models_page(models, {"limit": ["0"]})


async def test_an_api_failure_is_a_model_error() -> None:
    from model_helpers import quick_settings, strict_client

    from loom_jupyter.models.anthropic import AnthropicModel

    client = strict_client("http://127.0.0.1:9")  # nothing listens there
    model = AnthropicModel(quick_settings(max_retries=0), client=client)
    try:
        with pytest.raises(ModelError):
            await model.list_models()
    finally:
        await client.close()


class Fetcher:
    """A fetch function that counts its calls and can fail."""

    def __init__(self, models: list[dict[str, Any]]) -> None:
        self.models, self.calls, self.fail = models, 0, False

    async def __call__(self) -> list[dict[str, Any]]:
        self.calls += 1
        if self.fail:
            raise OSError("network is unreachable")
        return self.models


async def test_the_list_is_cached_for_a_day_beside_the_user_config() -> None:
    fetch = Fetcher([api_model(1)])
    assert cache_path() == user_config_path().with_name("models.json")  # XDG_CONFIG_HOME

    fresh = await list_models(fetch, now=NOW)
    assert (fresh.source, fetch.calls) == ("api", 1)
    stored = json.loads(cache_path().read_text(encoding="utf-8"))
    assert stored["fetched_at"] == NOW
    assert stored["models"][0]["id"] == "claude-test-001"

    within = await list_models(fetch, now=NOW + CACHE_SECONDS - 1)
    assert (within.source, within.fetched_at, fetch.calls) == ("cache", NOW, 1)
    assert within.models == fresh.models

    fetch.models = [api_model(2)]
    after = await list_models(fetch, now=NOW + CACHE_SECONDS + 1)
    assert (after.source, fetch.calls) == ("api", 2)
    assert [m.id for m in after.models] == ["claude-test-002"]

    forced = await list_models(fetch, now=NOW + CACHE_SECONDS + 2, refresh=True)
    assert (forced.source, fetch.calls) == ("api", 3)


async def test_offline_a_stale_cache_then_the_shipped_table() -> None:
    fetch = Fetcher([api_model(1)])
    fetch.fail = True
    offline = await list_models(fetch, now=NOW)
    assert offline.source == "shipped"
    assert offline.models == SHIPPED
    assert "network is unreachable" in offline.note
    assert "shipped" in offline.describe()
    assert not cache_path().exists()
    assert (await list_models(None, now=NOW)).source == "shipped"

    fetch.fail = False
    await list_models(fetch, now=NOW)
    fetch.fail = True
    stale = await list_models(fetch, now=NOW + 3 * CACHE_SECONDS)
    assert stale.source == "cache"
    assert [m.id for m in stale.models] == ["claude-test-001"]
    assert "network is unreachable" in stale.note


async def test_a_broken_cache_file_is_no_cache() -> None:
    cache_path().parent.mkdir(parents=True)
    cache_path().write_text("{not json", encoding="utf-8")
    assert model_info("claude-test-001") is None
    listed = await list_models(Fetcher([api_model(1)]), now=NOW)
    assert listed.source == "api"
    assert model_info("claude-test-001") == ModelInfo.from_api(api_model(1))


async def test_limits_come_from_the_cache_then_the_shipped_table() -> None:
    haiku = model_info("claude-haiku-4-5-20251001")  # a dated id finds its row
    assert haiku is not None
    assert (haiku.context_window, haiku.max_output) == (200_000, 64_000)
    assert model_info("claude-unknown-9") is None

    await list_models(Fetcher([api_model(7, id="claude-haiku-4-5")]), now=NOW)
    cached = model_info("claude-haiku-4-5")
    assert cached is not None
    assert (cached.context_window, cached.max_output) == (100_007, 1_007)


def test_budget_and_max_tokens_follow_the_model_unless_set(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    info = ModelInfo("claude-x", "X", context_window=200_000, max_output=64_000)
    defaults = Settings()
    assert context_budget(defaults, info) == 200_000 - defaults.output_reserve_tokens
    assert max_output_tokens(defaults, info) == 64_000
    assert WindowConfig.from_settings(defaults, info).budget_tokens == 200_000 - 8192
    # Unknown limits: the settings' defaults.
    assert context_budget(defaults, None) == 120_000 - 8192
    assert max_output_tokens(defaults, ModelInfo("claude-y", "Y")) == 8192

    # Set in loom.yaml or the environment (even to the default value): the setting wins.
    (tmp_path / "loom.yaml").write_text("max_output_tokens: 8192\n", encoding="utf-8")
    loaded = Settings.load(tmp_path, env={"LOOM_CONTEXT_BUDGET_TOKENS": "50000"})
    assert loaded.explicit == {"max_output_tokens", "context_budget_tokens"}
    assert max_output_tokens(loaded, info) == 8192
    assert context_budget(loaded, info) == 50_000 - 8192
    assert max_output_tokens(Settings(max_output_tokens=1000), info) == 1000


async def test_capabilities_reach_the_thinking_predicates() -> None:
    thinking = pytest.importorskip("loom_jupyter.models.thinking")
    no_thinking = {
        "thinking": {"supported": False, "types": {"adaptive": {"supported": False}}},
        "effort": {
            "supported": True,
            **{level: {"supported": level == "low"} for level in ("low", "medium", "high", "max")},
        },
    }
    await list_models(Fetcher([api_model(3, capabilities=no_thinking)]), now=NOW)
    assert model_capabilities("claude-test-003") == no_thinking
    assert not thinking.supports_thinking("claude-test-003")
    assert thinking.effort_levels("claude-test-003") == ("low",)
    assert model_capabilities("claude-sonnet-5-5") is None  # the shipped table has none


def test_rows_mark_the_current_model() -> None:
    listed = catalog.ModelList(SHIPPED, "shipped")
    rows = catalog.model_rows(listed, "claude-sonnet-5-5-20261001")
    marked = [row for row in rows if row[0] == "*"]
    assert marked == [("*", "claude-sonnet-5-5", "Claude Sonnet 5.5", "1M", "128K")]
