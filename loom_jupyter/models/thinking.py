"""Which models take adaptive thinking and an effort level: the one place that decides.

A request carries ``"thinking": {"type": "adaptive"}`` only when the person turned
thinking on (loom.yaml ``thinking: adaptive``, ``%cowork thinking on``, the sidebar)
**and** :func:`supports_thinking` says the model accepts it; likewise
``"output_config": {"effort": LEVEL}`` only when :func:`supports_effort` says the model
takes that level. Anything else would be refused by the API (a 400 for the whole turn).

The table below is shipped: the model ids of the installed SDK's ``Model`` type whose
public model pages list adaptive thinking and the effort parameter. Adaptive thinking
came with Claude Opus 4.6 and Sonnet 4.6 (earlier models take only the older
``budget_tokens`` form, which Loom does not send); effort with Opus 4.5, ``max`` with
Opus 4.6 / Sonnet 4.6, ``xhigh`` with Opus 4.7. For the 5.x models (and
``claude-mythos-preview``) every level is assumed. An id not in the table gets neither,
so an unknown or fake model is never sent a field it may refuse.

The Models API (``GET /v1/models``) reports the same per model (``capabilities.thinking
.types.adaptive``, ``capabilities.effort.<level>``): :func:`learn` records what it says
for an id, and what was learnt wins over the table.
"""

from __future__ import annotations

import re
import threading
from typing import get_args

from loom_jupyter.settings import EffortLevel, ThinkingMode

__all__ = [
    "EFFORT_LEVELS",
    "EffortLevel",
    "ThinkingMode",
    "effort_levels",
    "learn",
    "request_options",
    "supports_effort",
    "supports_thinking",
]

EFFORT_LEVELS: tuple[EffortLevel, ...] = get_args(EffortLevel)

_ALL: frozenset[str] = frozenset(EFFORT_LEVELS)
_NO_XHIGH: frozenset[str] = frozenset({"low", "medium", "high", "max"})
_BASIC: frozenset[str] = frozenset({"low", "medium", "high"})

# model id -> (adaptive thinking, effort levels). Ids as the SDK's Model type names them.
_TABLE: dict[str, tuple[bool, frozenset[str]]] = {
    "claude-fable-5-2": (True, _ALL),
    "claude-mythos-5-2": (True, _ALL),
    "claude-haiku-5-5": (True, _ALL),
    "claude-sonnet-5-5": (True, _ALL),
    "claude-fable-5-1": (True, _ALL),
    "claude-opus-5-5": (True, _ALL),
    "claude-mythos-5-1": (True, _ALL),
    "claude-sonnet-5": (True, _ALL),
    "claude-fable-5": (True, _ALL),
    "claude-mythos-5": (True, _ALL),
    "claude-opus-5": (True, _ALL),
    "claude-opus-4-8": (True, _ALL),
    "claude-opus-4-7": (True, _ALL),
    "claude-mythos-preview": (True, _ALL),
    "claude-opus-4-6": (True, _NO_XHIGH),
    "claude-sonnet-4-6": (True, _NO_XHIGH),
    "claude-opus-4-5": (False, _BASIC),
    "claude-haiku-4-5": (False, frozenset()),
    "claude-sonnet-4-5": (False, frozenset()),
}
_learnt: dict[str, tuple[bool, frozenset[str]]] = {}
_lock = threading.Lock()
_DATE = re.compile(r"-\d{8}$")


def _base_id(model: str) -> str:
    """``model`` without a date, ``-latest``, ``[1m]`` or a Bedrock/Vertex wrapping."""
    name = model.strip().lower().split("@", 1)[0].removesuffix("[1m]")
    name = re.sub(r"-v\d+(:\d+)?$", "", name)
    name = name.rsplit("anthropic.", 1)[-1].removesuffix("-latest")
    return _DATE.sub("", name)


def _row(model: str) -> tuple[bool, frozenset[str]]:
    with _lock:
        learnt = _learnt.get(model) or _learnt.get(_base_id(model))
    if learnt is not None:
        return learnt
    return _TABLE.get(_base_id(model), (False, frozenset()))


def supports_thinking(model_id: str) -> bool:
    """Whether ``model_id`` accepts ``"thinking": {"type": "adaptive"}``."""
    return _row(model_id)[0]


def effort_levels(model_id: str) -> tuple[EffortLevel, ...]:
    """The effort levels ``model_id`` accepts (none: it takes no ``output_config.effort``)."""
    levels = _row(model_id)[1]
    return tuple(level for level in EFFORT_LEVELS if level in levels)


def supports_effort(model_id: str, level: str | None = None) -> bool:
    """Whether ``model_id`` takes an effort level at all, or ``level`` in particular."""
    levels = _row(model_id)[1]
    return bool(levels) if level is None else level in levels


def learn(model_id: str, *, thinking: bool, efforts: tuple[str, ...] | frozenset[str]) -> None:
    """Record what the Models API says of ``model_id`` (wins over the shipped table)."""
    with _lock:
        _learnt[model_id] = (thinking, frozenset(efforts))


def request_options(
    model_id: str, thinking: ThinkingMode, effort: EffortLevel | None
) -> tuple[bool, EffortLevel | None]:
    """What a request to ``model_id`` carries for these settings: (adaptive thinking?,
    effort level or ``None``) — each only when the model supports it."""
    think = thinking == "adaptive" and supports_thinking(model_id)
    level = effort if effort is not None and supports_effort(model_id, effort) else None
    return think, level
