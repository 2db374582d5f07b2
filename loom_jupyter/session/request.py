"""RequestAssembly: how one session's model requests are put together.

The static system prompt, the skills block (``name: description`` per usable skill, DESIGN
§15) and the project instructions as they are now (both read again once a turn), the
tools, the history window, then the per-turn tail: the session state block.
``max_tokens`` follows the current model's limits, the server tools (web search and
fetch) the settings. A delegation's sub-agents ask the same way (:meth:`shape`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from loom_jupyter.engine.prompts import SYSTEM_PROMPT
from loom_jupyter.models.catalog import max_output_tokens
from loom_jupyter.models.wire import server_tool_params
from loom_jupyter.session.shape import RequestShape
from loom_jupyter.skills import SkillSet, skills_block

if TYPE_CHECKING:
    from loom_jupyter.engine.context import ContextWindow
    from loom_jupyter.engine.state import SessionState
    from loom_jupyter.models.base import ModelRequest
    from loom_jupyter.session.instructions import ProjectInstructions
    from loom_jupyter.session.options import SessionOptions
    from loom_jupyter.settings import EffortLevel

__all__ = ["RequestAssembly"]


class RequestAssembly:
    """Builds a session's requests from its window, options and project instructions."""

    def __init__(
        self, window: ContextWindow, options: SessionOptions, instructions: ProjectInstructions
    ) -> None:
        self.window = window
        self.options = options
        self.instructions = instructions
        self._state_text: tuple[SessionState, str] | None = None
        self.skills = SkillSet()  # the skills the system prompt lists (set once a turn)

    def build(
        self, state: SessionState, thinking: bool, effort: EffortLevel | None
    ) -> ModelRequest:
        """The next request: the window as it is, ``state`` as its tail."""
        options = self.options
        info = options.follow_model()
        request = self.window.build(
            model=options.model.name,
            state_text=self.state_block(state),
            max_tokens=max_output_tokens(options.settings, info),
            thinking=thinking,
            effort=effort,
        )
        server_tools = server_tool_params(options.settings)
        return replace(request, server_tools=server_tools) if server_tools else request

    def shape(self) -> RequestShape:
        """How a delegation's sub-agents ask: this session's system prompt (project
        instructions included, as they are now), max tokens, thinking and effort."""
        options = self.options
        thinking, effort = options.request_options()
        return RequestShape(
            system=self.system(),
            max_tokens=max_output_tokens(options.settings, options.follow_model()),
            thinking=thinking,
            effort=effort,
            skills=self.skills,
        )

    def load_instructions(self, skills: SkillSet) -> list[str]:
        """The system prompt with ``skills`` and the project instructions as they are now;
        the instructions' new notices."""
        self.skills = skills
        self.window.set_system(self.system())
        return self.instructions.take_notices()

    def system(self) -> str:
        """The system prompt: the static prompt, the skills block, the project instructions
        (each the same bytes while its source is unchanged: the cached prefix holds)."""
        block = skills_block(self.skills)
        listed = f"\n\n# Skills\n{block}\n" if block else ""
        return SYSTEM_PROMPT + listed + self.instructions.current().text

    def state_block(self, state: SessionState) -> str:
        """``state`` as the request's tail (kept while the state object is the same)."""
        cached = self._state_text
        if cached is None or cached[0] is not state:
            text = f"<session_state>\n{state.to_yaml()}</session_state>"
            self._state_text = cached = (state, text)
        return cached[1]
