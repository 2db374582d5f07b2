"""OpenTelemetry for Loom (DESIGN §16), in one room, off by default.

The seams (``session/turn_run.py``, ``orchestrator/delegation.py`` and ``child.py``) ask
:func:`tracer_for` for the process's :class:`~loom_jupyter.telemetry.trace.Tracer` and
show its spans the agent loop's events. While telemetry is off (the default: see
:func:`~loom_jupyter.telemetry.config.telemetry_config`) that is :data:`NOOP` and no
OpenTelemetry module is imported; on, ``otel.py`` builds the SDK's providers once, with
batched OTLP/HTTP export on the SDK's own threads (``export.py``).

Spans (GenAI semantic conventions)::

    invoke_agent loom                 a turn (or a %delegate run)
      chat MODEL                      each model call: tokens, cost, finish reasons
      execute_tool NAME               each tool call: loom.approval, error status
      invoke_agent loom-subagent      a delegated subtask's attempt
        chat MODEL / execute_tool NAME
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from loom_jupyter.telemetry.config import TelemetryConfig, telemetry_config
from loom_jupyter.telemetry.trace import NOOP, AgentTrace, Tracer

if TYPE_CHECKING:
    from loom_jupyter.settings import Settings
    from loom_jupyter.telemetry.config import TelemetryValues

__all__ = [
    "NOOP",
    "AgentTrace",
    "TelemetryConfig",
    "Tracer",
    "telemetry_config",
    "tracer_for",
    "use",
]

_lock = threading.Lock()
_built: dict[TelemetryConfig, Tracer] = {}
_chosen: list[Tracer] = []


def tracer_for(settings: Settings | None, *, managed: TelemetryValues | None = None) -> Tracer:
    """The tracer for ``settings`` and the managed policy's ``telemetry`` (``managed``, else
    the policy files as they are now): :data:`NOOP` while off; on, one per configuration
    for the life of the process."""
    if _chosen:
        return _chosen[-1]
    config = telemetry_config(settings, managed=managed or _managed())
    if not config.enabled:
        return NOOP
    with _lock:
        tracer = _built.get(config)
        if tracer is None:
            from loom_jupyter.telemetry.otel import OtelTracer

            tracer = _built[config] = OtelTracer.from_config(config)
        return tracer


def _managed() -> TelemetryValues | None:
    """The managed policy's ``telemetry`` (a broken policy stops Loom elsewhere: none here)."""
    from loom_jupyter.errors import ManagedPolicyError
    from loom_jupyter.policy import managed_policy

    try:
        return managed_policy().telemetry
    except ManagedPolicyError:
        return None


def use(tracer: Tracer | None) -> None:
    """Send every span to ``tracer`` whatever the settings say (an application that sets up
    OpenTelemetry itself: ``OtelTracer(tracer_provider, meter_provider)``); ``None``: the
    settings decide again."""
    _chosen.clear()
    if tracer is not None:
        _chosen.append(tracer)
