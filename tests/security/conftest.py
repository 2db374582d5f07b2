"""Kernels here start cold, as a person's do: these tests are about what a fresh kernel
imports and loads from its folder, or how long that takes (see ``tests/conftest.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from loom_jupyter.testing.kernel_zygote import cold_kernels

if TYPE_CHECKING:
    from collections.abc import Iterator


@pytest.fixture(scope="module", autouse=True)
def _cold_kernels() -> Iterator[None]:
    with cold_kernels():
        yield
