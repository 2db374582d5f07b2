"""The system prompt names only tools the model can call (else: "unknown tool")."""

from __future__ import annotations

import re

from loom_jupyter.engine.prompts import SYSTEM_PROMPT
from loom_jupyter.tools.registry import default_registry

# snake_case words of the prompt that are not tool names
NOT_TOOLS = frozenset({"session_state", "recall_hint", "tool_calls", "key_decisions"})


def named_tools(prompt: str) -> set[str]:
    """Every snake_case identifier the prompt mentions (tool names are snake_case)."""
    return set(re.findall(r"\b[a-z]+(?:_[a-z]+)+\b", prompt)) - NOT_TOOLS


def test_every_tool_the_prompt_names_is_registered() -> None:
    registered = set(default_registry().names())
    assert named_tools(SYSTEM_PROMPT) <= registered, named_tools(SYSTEM_PROMPT) - registered


def test_the_check_sees_an_unregistered_name() -> None:
    registered = set(default_registry().names())
    assert "summon_unicorn" in named_tools(SYSTEM_PROMPT + "Use `summon_unicorn`.") - registered
    assert {"run_python", "conversation_recall"} <= named_tools(SYSTEM_PROMPT)
