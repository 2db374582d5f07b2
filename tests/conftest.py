"""Suite-wide guards: no test can reach a real model API or read the developer's config.

Every test starts with ``ANTHROPIC_BASE_URL`` pointing at a closed loopback port,
no API key, and an empty ``XDG_CONFIG_HOME``; tests that need a model use the
``fake_anthropic`` fixture (shipped in ``loom_jupyter.testing``) or a
``ScriptedModel``.
"""

from __future__ import annotations

import pytest

pytest_plugins = ["loom_jupyter.testing.pytest_plugin"]

CLOSED_LOOPBACK_URL = "http://127.0.0.1:9"
"""The discard port: nothing listens there, so a stray request fails fast and locally."""


@pytest.fixture(autouse=True)
def _no_real_model_api(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", CLOSED_LOOPBACK_URL)
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "LOOM_MODEL", "LOOM_APPROVAL"):
        monkeypatch.delenv(name, raising=False)
    config_home = tmp_path_factory.mktemp("xdg-config")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config_home))
