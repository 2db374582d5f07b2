"""Suite-wide guards: no test can reach a real model API or read the developer's config.

Every test starts with ``ANTHROPIC_BASE_URL`` pointing at a closed loopback port,
no API key, and an empty ``XDG_CONFIG_HOME``; tests that need a model use the
``fake_anthropic`` fixture (shipped in ``loom_jupyter.testing``) or a
``ScriptedModel``.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING

import pytest

from loom_jupyter.archive import Archive, archive_path_for
from loom_jupyter.tools.local_kernel import LocalKernel

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

pytest_plugins = ["loom_jupyter.testing.pytest_plugin"]


def pytest_configure(config: pytest.Config) -> None:
    """No test reaches the developer's system keyring: the ``keyring`` package (when
    installed) gets its null backend, here and in every kernel or server a test starts, so
    a saved key goes to the test's own ``XDG_CONFIG_HOME``."""
    del config
    os.environ["PYTHON_KEYRING_BACKEND"] = "keyring.backends.null.Keyring"


CLOSED_LOOPBACK_URL = "http://127.0.0.1:9"
"""The discard port: nothing listens there, so a stray request fails fast and locally."""


@pytest.fixture(autouse=True)
def _no_real_model_api(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", CLOSED_LOOPBACK_URL)
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "LOOM_MODEL", "LOOM_APPROVAL"):
        monkeypatch.delenv(name, raising=False)
    for name in ("LOOM_ARCHIVE_DIR", "KERNEL_LOOM_ARCHIVE_DIR", "KERNEL_WORKING_DIR"):
        monkeypatch.delenv(name, raising=False)  # archives beside their notebooks (DESIGN §13)
    config_home = tmp_path_factory.mktemp("xdg-config")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config_home))


# -- a notebook beside a real archive, and an in-process kernel (session-level tests) --------
# Directories with their own ``notebook`` or ``archive`` fixture (archive/, kernel/) override these.


@pytest.fixture
def notebook(tmp_path: Path) -> Path:
    """An empty notebook file in a fresh folder."""
    path = tmp_path / "analysis.ipynb"
    path.write_text(json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    return path


@pytest.fixture
async def archive(notebook: Path) -> AsyncIterator[Archive]:
    """The notebook's archive, opened."""
    async with Archive.open(archive_path_for(notebook)) as opened:
        yield opened


@pytest.fixture
def kernel() -> LocalKernel:
    """The in-process kernel bridge (a plain namespace, no Jupyter)."""
    return LocalKernel()
