"""Engine fixtures: a real archive in a temp dir, a LocalKernel, and session factories."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any

import pytest

from loom_jupyter.models.anthropic import AnthropicModel
from loom_jupyter.session.conversation import CoworkSession
from loom_jupyter.settings import Settings
from loom_jupyter.testing.fake_anthropic import FakeAnthropic, Responder
from loom_jupyter.tools.registry import ToolRegistry, default_registry

if TYPE_CHECKING:
    from pathlib import Path

    from loom_jupyter.archive import Archive
    from loom_jupyter.engine.events import Event
    from loom_jupyter.models.base import Model
    from loom_jupyter.tools.approval import Approver
    from loom_jupyter.tools.local_kernel import LocalKernel

OpenSession = Callable[..., Awaitable[CoworkSession]]


@pytest.fixture
def registry() -> ToolRegistry:
    return default_registry()


@pytest.fixture
async def open_session(
    archive: Archive, notebook: Path, kernel: LocalKernel, registry: ToolRegistry
) -> AsyncIterator[OpenSession]:
    """``await open_session(model, approver=..., owner=..., **settings)``; closed at teardown."""
    opened: list[CoworkSession] = []

    async def factory(
        model: Model,
        *,
        approver: Approver | None = None,
        owner: str | None = None,
        resume: bool = True,
        tools: ToolRegistry | None = None,
        **settings: Any,
    ) -> CoworkSession:
        settings.setdefault("approval", "auto")
        session = await CoworkSession.open(
            archive,
            notebook_path=notebook,
            settings=Settings(**settings),
            model=model,
            kernel=kernel,
            tools=tools or registry,
            approver=approver,
            owner=owner,
            resume=resume,
        )
        opened.append(session)
        return session

    yield factory
    for session in opened:
        await session.close()


async def collect(session: CoworkSession, text: str, **kwargs: Any) -> list[Event]:
    """Every event of one turn."""
    return [event async for event in session.send(text, **kwargs)]


def kinds(events: list[Event]) -> list[str]:
    return [event.kind for event in events]


class FakeApi:
    """Starts fake Messages API servers and AnthropicModels (real SDK, strict) pointed at them."""

    def __init__(self) -> None:
        self.servers: list[FakeAnthropic] = []
        self.clients: list[Any] = []

    def model(
        self,
        script: list[Any] | None = None,
        *,
        responder: Responder | None = None,
        **settings: Any,
    ) -> tuple[AnthropicModel, FakeAnthropic]:
        import anthropic

        server = FakeAnthropic(script or [], responder=responder, default="error").start()
        self.servers.append(server)
        client = anthropic.AsyncAnthropic(
            api_key="sk-ant-engine-tests-0000000000",
            base_url=server.base_url,
            _strict_response_validation=True,
        )
        self.clients.append(client)
        values: dict[str, Any] = {"retry_after_cap_seconds": 0.05, **settings}
        model = AnthropicModel(Settings(**values), client=client, retry_backoff_seconds=0.01)
        return model, server

    async def close(self) -> None:
        for client in self.clients:
            await client.close()
        for server in self.servers:
            server.stop()


@pytest.fixture
async def fake_api() -> AsyncIterator[FakeApi]:
    api = FakeApi()
    yield api
    await api.close()
