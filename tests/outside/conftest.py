"""A real Jupyter Server for the module, and ``loom-jupyter mcp`` under the MCP SDK's client.

This folder has no ``__init__.py`` on purpose (as ``tests/mcp``): its helpers are imported by
their own names (``from jupyter_rig import ...``)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from jupyter_rig import JupyterRig, start_rig

if TYPE_CHECKING:
    from collections.abc import Iterator


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterRig]:
    started = start_rig(tmp_path_factory.mktemp("jupyter"))
    yield started
    started.stop()
