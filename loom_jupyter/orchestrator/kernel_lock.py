"""One lock for code that changes the user namespace; reading tools do not wait for it.

Sub-agents think in parallel, but two of them running code in the same
namespace at once would interleave their effects, so ``run_code`` and
``insert_cell`` (and the plan's checks) take turns. Listing and describing
variables and reading history stay concurrent.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from loom_jupyter.lineage import ExecutionSource
    from loom_jupyter.tools.base import ExecutionResult, KernelBridge, VariableInfo

__all__ = ["SerializedKernel"]


class SerializedKernel:
    """A :class:`~loom_jupyter.tools.base.KernelBridge` whose writes take one lock."""

    def __init__(self, inner: KernelBridge, lock: asyncio.Lock | None = None) -> None:
        self.inner = inner
        self.lock = lock or asyncio.Lock()

    async def run_code(
        self, code: str, *, source: ExecutionSource = "run_python", cell_id: str | None = None
    ) -> ExecutionResult:
        """Run ``code`` once no other sub-agent is running code."""
        async with self.lock:
            return await self.inner.run_code(code, source=source, cell_id=cell_id)

    async def list_variables(self) -> Sequence[VariableInfo]:
        """The user's variables (not serialized)."""
        return await self.inner.list_variables()

    async def describe_variable(self, name: str) -> str:
        """One variable in detail (not serialized)."""
        return await self.inner.describe_variable(name)

    async def input_history(self, limit: int) -> Sequence[tuple[int, str]]:
        """The kernel's recent cells (not serialized)."""
        return await self.inner.input_history(limit)

    async def fingerprints(self, names: Sequence[str]) -> Mapping[str, str | None]:
        """Fingerprints of the names that exist (not serialized)."""
        return await self.inner.fingerprints(names)

    async def insert_cell(self, source: str, *, run: bool = False) -> str:
        """Propose a cell once no other sub-agent is changing the notebook."""
        async with self.lock:
            return await self.inner.insert_cell(source, run=run)
