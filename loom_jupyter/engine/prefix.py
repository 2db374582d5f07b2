"""The part of every request before the history: the tool definitions and the system prompt.

It stays byte for byte the same while neither changes, so it is cached for an hour
(``ModelRequest.cache_prefix``). Its size counts against every request's budget, and
when a request does not fit, :meth:`RequestPrefix.parts` says what it holds and what
would shrink it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from loom_jupyter.engine.prompts import SYSTEM_PROMPT
from loom_jupyter.models.base import ModelRequest
from loom_jupyter.models.estimate import estimate_request_tokens

if TYPE_CHECKING:
    from collections.abc import Sequence

    from loom_jupyter.messages import ToolSpec

__all__ = ["RequestPrefix"]


@dataclass(frozen=True)
class RequestPrefix:
    """A system prompt (the static prompt, perhaps with project instructions) and tools."""

    system: str
    tools: tuple[ToolSpec, ...] = ()

    @cached_property
    def tokens(self) -> int:
        """Estimated tokens of the prefix."""
        return _prefix_tokens(system=self.system, tools=self.tools)

    def parts(self, fixed: int) -> tuple[str, list[str]]:
        """The fixed part's pieces in tokens (``17 tool definitions (2,499), the system prompt
        (1,196), ...``, ``fixed`` being the whole with the per-request framing), and the
        advice that would shrink the pieces there are."""
        mcp = [t for t in self.tools if t.name.startswith("mcp__")]
        prompt, instructions = _prefix_tokens(system=self.system), 0
        if self.system.startswith(SYSTEM_PROMPT) and self.system != SYSTEM_PROMPT:
            prompt = _prefix_tokens(system=SYSTEM_PROMPT)
            instructions = _prefix_tokens(system=self.system[len(SYSTEM_PROMPT) :])
        tools = f"{len(self.tools)} tool definitions ({_prefix_tokens(tools=self.tools):,}"
        if mcp:
            tools += f", {_prefix_tokens(tools=mcp):,} of it for {len(mcp)} from MCP servers"
        parts = [f"{tools})", f"the system prompt ({prompt:,})"]
        shrink = []
        if instructions:
            parts.append(f"project instructions ({instructions:,})")
            shrink.append(
                "shorten the project instructions (%cowork instructions shows them; "
                "instructions_max_chars in loom.yaml caps them)"
            )
        if mcp:
            shrink.append("use fewer mcp_servers in loom.yaml (%cowork mcp lists them)")
        parts.append(f"session state and framing ({max(fixed - self.tokens, 0):,})")
        return ", ".join(parts), shrink


def _prefix_tokens(*, system: str = "", tools: Sequence[ToolSpec] = ()) -> int:
    """Estimated tokens of a request's system prompt and tools (no messages)."""
    return estimate_request_tokens(
        ModelRequest(model="", system=system, messages=(), tools=tuple(tools))
    )
