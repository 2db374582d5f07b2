"""How a session asks the model, for whoever asks on its behalf (a delegation's sub-agents)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from loom_jupyter.settings import EffortLevel
    from loom_jupyter.skills import SkillSet

__all__ = ["RequestShape"]


@dataclass(frozen=True)
class RequestShape:
    """The system prompt, max tokens, thinking and effort of a session's requests."""

    system: str  # the static prompt with the skills block and the project instructions
    max_tokens: int  # loom.yaml's max_output_tokens, else the model's limit
    thinking: bool = False
    effort: EffortLevel | None = None
    skills: SkillSet | None = None  # the skills the system prompt lists (load_skill reads them)
