"""A real in-process IPython shell for the front's tests."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from IPython.core.interactiveshell import InteractiveShell

if TYPE_CHECKING:
    from collections.abc import Iterator


@pytest.fixture
def shell() -> Iterator[InteractiveShell]:
    """The process's InteractiveShell, with a clean user namespace."""
    ip = InteractiveShell.instance()
    ip.reset(new_session=False)
    yield ip
    ip.reset(new_session=False)
