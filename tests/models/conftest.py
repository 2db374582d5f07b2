"""Fixtures for the model-layer tests: the fake Messages API and strict SDK clients."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from model_helpers import quick_settings, strict_client

from loom_jupyter.models.anthropic import AnthropicModel
from loom_jupyter.testing.fake_anthropic import FakeAnthropic
from loom_jupyter.testing.pytest_plugin import fake_anthropic  # noqa: F401 - the shipped fixture

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Iterator


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    """A fake API that answers HTTP 400 once its script is used up (tests count requests)."""
    with FakeAnthropic(default="error") as server:
        yield server


@pytest.fixture
async def make_model(fake: FakeAnthropic) -> AsyncIterator[Callable[..., AnthropicModel]]:
    """Build AnthropicModels on strict SDK clients pointed at ``fake``; closed afterwards."""
    clients: list[Any] = []

    def build(
        *, idle: float = 5.0, client_options: dict[str, Any] | None = None, **settings: Any
    ) -> AnthropicModel:
        client = strict_client(fake.base_url, idle=idle, **(client_options or {}))
        clients.append(client)
        return AnthropicModel(quick_settings(**settings), client=client, retry_backoff_seconds=0.01)

    yield build
    for client in clients:
        await client.close()
