"""Fixtures for the tool layer: a real notebook folder in a tmp dir, a LocalKernel, a context."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from loom_jupyter.messages import ToolUseBlock
from loom_jupyter.settings import Settings
from loom_jupyter.tools.base import ToolContext, ToolOutput
from loom_jupyter.tools.local_kernel import LocalKernel
from loom_jupyter.tools.registry import ToolRegistry, default_registry

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture
def notebook_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


@pytest.fixture
def real_dir(notebook_dir: Path) -> str:
    """The notebook folder's real path (tmp dirs may sit behind symlinks)."""
    return str(notebook_dir.resolve())


@pytest.fixture
def settings() -> Settings:
    return Settings()


@pytest.fixture
def kernel() -> LocalKernel:
    return LocalKernel()


@pytest.fixture
def ctx(notebook_dir: Path, settings: Settings, kernel: LocalKernel) -> ToolContext:
    return ToolContext(notebook_dir=notebook_dir, settings=settings, kernel=kernel)


@pytest.fixture
def registry() -> ToolRegistry:
    return default_registry()


class Caller:
    """Runs tool calls through a registry the way the agent loop does."""

    def __init__(self, registry: ToolRegistry, ctx: ToolContext) -> None:
        self.registry = registry
        self.ctx = ctx
        self.calls = 0

    async def __call__(self, name: str, /, **args: Any) -> ToolOutput:
        self.calls += 1
        return await self.registry.run(ToolUseBlock(f"toolu_{self.calls}", name, args), self.ctx)


@pytest.fixture
def call(registry: ToolRegistry, ctx: ToolContext) -> Caller:
    return Caller(registry, ctx)
