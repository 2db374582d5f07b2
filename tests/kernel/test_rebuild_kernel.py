"""%cowork rebuild in a real ipykernel: the variables come back after a restart."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from collections.abc import Callable

    from loom_jupyter.testing import FakeAnthropic

    from .conftest import Kernel

pytestmark = pytest.mark.kernel


def test_a_restart_loses_the_variables_and_rebuild_brings_them_back(
    start_kernel: Callable[..., Kernel], fake: FakeAnthropic
) -> None:
    kernel = start_kernel()
    kernel.run("%load_ext loom_jupyter")
    fake.add("Hello.")
    kernel.run("%cowork hello")  # the archive is open: cells are recorded
    kernel.run("base = 20")
    kernel.run("unused = 'not needed'")
    kernel.run("total = base + 22")
    shown = kernel.run("%cowork provenance total").text()  # also: the records are written
    assert "total = base + 22" in shown
    assert "base = 20" in shown

    kernel.km.restart_kernel(now=False)
    kernel.kc.wait_for_ready(timeout=60)
    kernel.run("%load_ext loom_jupyter")
    assert kernel.value("'total' in globals()") == "False"
    out = kernel.run("%cowork rebuild total --yes").text()
    assert "same fingerprint as recorded" in out, out
    assert kernel.value("total") == "42"
    assert kernel.value("base") == "20"
    assert kernel.value("'unused' in globals()") == "False"
