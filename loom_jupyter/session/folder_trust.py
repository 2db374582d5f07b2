"""SessionTrust: the folder's trust as one session applies it (DESIGN §12).

Read again once a turn (a decision, or an edit of what the folder asks for): trusted, the
project's ``approval``, ``web_search`` and ``web_fetch``, its instruction files and its MCP
servers apply; untrusted, they do not, and the person is told once per version of what the
folder asks. What the person set in this kernel (a magic) stays either way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loom_jupyter.errors import LoomError
from loom_jupyter.trust import (
    FolderTrust,
    TrustAnswer,
    TrustDecision,
    decide,
    folder_trust,
    settings_for,
)

if TYPE_CHECKING:
    from pathlib import Path

    from loom_jupyter.session.instructions import ProjectInstructions
    from loom_jupyter.session.options import SessionOptions
    from loom_jupyter.session.servers import SessionServers

__all__ = ["SessionTrust"]


class SessionTrust:
    """The folder's trust as last checked, and what it governs in one session."""

    def __init__(
        self,
        notebook_path: Path,
        options: SessionOptions,
        instructions: ProjectInstructions,
        servers: SessionServers,
    ) -> None:
        self.notebook_path = notebook_path
        self.options = options
        self.instructions = instructions
        self.servers = servers
        self.current: FolderTrust | None = None  # the folder's trust as last checked
        self.told: str | None = None  # the untrusted folder's digest, once told

    def decide(
        self, decision: TrustDecision, *, shown: str | None, with_approval: bool
    ) -> TrustAnswer:
        """Record the person's decision about the folder as it was shown (``shown``: that
        view's digest; not applied yet)."""
        return decide(self.notebook_path, decision, shown=shown, with_approval=with_approval)

    async def check(self) -> list[str]:
        """Read the folder's trust again (a decision, or an edit of what it asks for); apply
        a change; tell an untrusted folder's limits once per version of what it asks."""
        now = await self.refresh()
        if now.trusted or self.told == now.request.digest:
            return []
        self.told = now.request.digest
        return [now.summary()]

    async def refresh(self) -> FolderTrust:
        """The folder's trust read again; a change applied."""
        now = folder_trust(self.notebook_path)
        if self.current is None or now != self.current:
            await self.apply(now)
        return now

    async def apply(self, trust: FolderTrust) -> None:
        """The folder's trust-governed settings, instructions and servers, as ``trust`` says
        — from the bytes its request read, never read again. What the person set in this
        kernel (a magic) stays."""
        self.current = trust
        self.instructions.bind(trust)
        try:
            fresh = settings_for(trust)
        except LoomError:
            return  # the person's own loom.yaml broke: the settings the session opened with
        options = self.options
        sources = dict(options.settings.sources)
        for key in ("approval", "web_search", "web_fetch"):
            sources[key] = fresh.source_of(key)
        options.settings = options.settings.replace(
            web_search=fresh.web_search,
            web_fetch=fresh.web_fetch,
            sources=tuple(sorted(sources.items())),
        )
        policy = options.policy
        if policy.source != "magic":
            policy.mode, policy.source = fresh.approval, fresh.source_of("approval")
        await self.servers.update(fresh, trusted=trust.trusted)
