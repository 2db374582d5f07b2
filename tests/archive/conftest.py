"""Shared fixtures: a real archive file in a temp dir."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from loom_jupyter.archive import Archive

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

NOTEBOOK = "/work/analysis.ipynb"


@pytest.fixture
def archive_file(tmp_path: Path) -> Path:
    """Where the test's archive lives (not created yet)."""
    return tmp_path / ".loom" / "analysis.ipynb.sqlite"


@pytest.fixture
async def archive(archive_file: Path) -> AsyncIterator[Archive]:
    """An open, empty archive."""
    archive_file.parent.mkdir(exist_ok=True)
    async with Archive.open(archive_file) as opened:
        yield opened


@pytest.fixture
def notebook() -> str:
    """The notebook path sessions are created for."""
    return NOTEBOOK


@pytest.fixture
async def session(archive: Archive) -> str:
    """A fresh session of :data:`NOTEBOOK`."""
    return await archive.create_session(notebook_path=NOTEBOOK, model="claude-test")
