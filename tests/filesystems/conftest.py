"""Real FUSE mounts for the filesystem tests (``tests/fuse_mounts.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from fuse_mounts import BindMounts, missing_fuse

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path


@pytest.fixture
def mounts(tmp_path: Path) -> Iterator[BindMounts]:
    """bindfs mounts of ``tmp_path/backing``, always unmounted afterwards."""
    why = missing_fuse()
    if why is not None:
        pytest.fail(f"these tests need real FUSE mounts: {why} (.ci/run installs them)")
    with BindMounts(tmp_path) as made:
        yield made
