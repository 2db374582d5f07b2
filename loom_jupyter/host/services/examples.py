"""Example prompts for an empty conversation, built from the live namespace.

The sidebar shows them under "What Loom can do here" until the first message: a few
plain-text prompts naming the notebook's own variables ("Describe `df`", "Plot `sales`
by month"), from their names and types only — no value is read beyond what the
variable listing already shows (a frame's column names). A click puts one in the
message box; nothing is sent by itself.
"""

from __future__ import annotations

import asyncio
import re
from typing import TYPE_CHECKING

from loom_jupyter.errors import LoomError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from loom_jupyter.tools.base import KernelBridge, VariableInfo

__all__ = ["GENERIC", "MAX_PROMPTS", "example_prompts", "prompts_for"]

MAX_PROMPTS = 4
NAMESPACE_SECONDS = 3.0
"""The examples do not wait longer for the namespace (a running cell holds it)."""
GENERIC = (
    "Read this notebook and tell me what it does",
    "Load a CSV file from this folder and describe it",
    "Explain the last error in this notebook",
)
_TIME_COLUMN = re.compile(r"month|date|day|year|week|quarter|time", re.IGNORECASE)
_ARRAYS = frozenset({"ndarray", "Series", "Tensor"})
_CONTAINERS = frozenset({"list", "dict", "tuple", "set"})


async def example_prompts(kernel: KernelBridge) -> tuple[str, ...]:
    """Prompts for the namespace now (generic ones when it is empty or busy)."""
    try:
        variables = await asyncio.wait_for(kernel.list_variables(), NAMESPACE_SECONDS)
    except (TimeoutError, LoomError):
        variables = ()
    return prompts_for(variables)


def prompts_for(variables: Sequence[VariableInfo]) -> tuple[str, ...]:
    """Up to :data:`MAX_PROMPTS` prompts: frames first, then arrays, then the rest."""
    ranked = sorted(variables, key=_rank)
    prompts: list[str] = []
    for info in ranked:
        prompts += _about(info)
        if len(prompts) >= MAX_PROMPTS - 1:
            break
    prompts = prompts[: MAX_PROMPTS - 1]
    prompts += [p for p in GENERIC if p not in prompts][: MAX_PROMPTS - len(prompts)]
    return tuple(prompts)


def _rank(info: VariableInfo) -> int:
    if info.type_name == "DataFrame":
        return 0
    if info.type_name in _ARRAYS:
        return 1
    return 2 if info.type_name in _CONTAINERS else 3


def _about(info: VariableInfo) -> list[str]:
    name = f"`{info.name}`"
    if info.type_name == "DataFrame":
        columns = info.summary.removeprefix("columns: ").split(", ")
        when = next((c for c in columns if _TIME_COLUMN.search(c)), None)
        plot = f"Plot {name} by {when}" if when else f"Plot the main columns of {name}"
        return [f"Describe {name}: its columns, types and missing values", plot]
    if info.type_name in _ARRAYS:
        return [f"Plot {name} and summarise its distribution"]
    if info.type_name in _CONTAINERS:
        return [f"What is in {name}?"]
    return [f"Explain what {name} ({info.type_name}) is and how it was made"]
