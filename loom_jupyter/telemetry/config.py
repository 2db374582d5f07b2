"""Whether telemetry is on, and where it goes (DESIGN §16): one small function.

On when ``telemetry.endpoint`` is set in the managed policy or the person's config (their
``loom.yaml``, ``LOOM_TELEMETRY``), or when ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or its traces
variant) is set together with ``LOOM_OTEL=1``. ``OTEL_SDK_DISABLED=true`` turns it off
whatever else says. The managed policy wins: its endpoint and headers replace the person's,
and its ``capture_content``, where it says one, is final. Reading this imports no
OpenTelemetry module.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

if TYPE_CHECKING:
    from collections.abc import Mapping

    from loom_jupyter.settings import Settings

__all__ = ["TelemetryConfig", "TelemetryValues", "telemetry_config"]

ConfigSource = Literal["off", "policy", "config", "env"]
_TRUE = frozenset({"1", "true", "yes", "on"})


class TelemetryValues(Protocol):
    """What a ``telemetry`` entry says: the person's (``settings.TelemetrySettings``) or the
    managed policy's (its ``capture_content`` may be ``None``: not said)."""

    @property
    def endpoint(self) -> str | None: ...
    @property
    def headers(self) -> tuple[tuple[str, str], ...]: ...
    @property
    def capture_content(self) -> bool | None: ...


@dataclass(frozen=True)
class TelemetryConfig:
    """The export in force. ``endpoint``: an OTLP/HTTP base URL (``/v1/traces`` and
    ``/v1/metrics`` are added), or ``None`` when the ``OTEL_EXPORTER_OTLP_*`` variables say
    where (``source == "env"``). ``headers``: sent with each export (else ``OTEL_*``'s)."""

    source: ConfigSource = "off"
    endpoint: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    capture_content: bool = False

    @property
    def enabled(self) -> bool:
        """Whether spans and metrics are made and sent."""
        return self.source != "off"


OFF = TelemetryConfig()


def telemetry_config(
    settings: Settings | None = None,
    *,
    managed: TelemetryValues | None = None,
    env: Mapping[str, str] | None = None,
) -> TelemetryConfig:
    """The telemetry in force for ``settings`` (the person's ``telemetry``), under the
    managed policy's ``managed`` (``policy.managed_policy().telemetry``), and ``env``."""
    env = os.environ if env is None else env
    if _flag(env, "OTEL_SDK_DISABLED"):
        return OFF
    person = settings.telemetry if settings is not None else None
    capture = bool(person and person.capture_content) or _flag(
        env, "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
    )
    if managed is not None and managed.capture_content is not None:
        capture = managed.capture_content  # the operator's word on contents is final
    if managed is not None and managed.endpoint:
        return TelemetryConfig("policy", managed.endpoint, managed.headers, capture)
    if person is not None and person.endpoint:
        return TelemetryConfig("config", person.endpoint, person.headers, capture)
    endpoint = env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or env.get(
        "OTEL_EXPORTER_OTLP_ENDPOINT"
    )
    if endpoint and _flag(env, "LOOM_OTEL"):
        return TelemetryConfig("env", None, (), capture)
    return OFF


def _flag(env: Mapping[str, str], name: str) -> bool:
    return env.get(name, "").strip().lower() in _TRUE
