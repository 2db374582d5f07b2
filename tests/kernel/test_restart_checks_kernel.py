"""Issue 30 in a real ipykernel: what Loom says about the kernel is checked against it.

One kernel, one restart: a conversation used ``prices`` and ``weights``; after the restart
the person re-runs the cell that makes ``prices`` and three more before ``%load_ext`` (in
the fifth cell). Only ``weights`` is gone — in the banner and in the next request's state —
and the four cells before the load are recorded, late, so provenance and rebuild cover them.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from .conftest import archive_rows

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from loom_jupyter.testing import FakeAnthropic

    from .conftest import Kernel

pytestmark = pytest.mark.kernel


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_after_a_restart_only_names_absent_now_are_gone_and_cells_before_the_load_count(
    start_kernel: Callable[..., Kernel], fake: FakeAnthropic, notebook: Path
) -> None:
    kernel = start_kernel()
    kernel.run("%load_ext loom_jupyter")
    fake.add("Hello.", "Noted.")
    kernel.run("%cowork hello")
    kernel.run("prices = [1, 2, 3]")
    kernel.run("weights = [3, 2, 1]")
    kernel.run("%cowork I made prices and weights")  # the conversation now uses both
    assert "weights = [3, 2, 1]" in kernel.run("%cowork provenance weights").text()

    kernel.km.restart_kernel(now=False)
    kernel.kc.wait_for_ready(timeout=60)
    kernel.run("prices = [1, 2, 3]")  # [1]: the person's data cell, re-run
    kernel.run("base = 20")  # [2]
    kernel.run("total = base + len(prices)")  # [3]
    kernel.run("note = 'not needed'")  # [4]
    banner = _flat(kernel.run("%load_ext loom_jupyter").stdout)  # [5]

    # 1. the banner offers only the name that is absent now
    assert "Variables this conversation used are gone with the previous kernel" in banner
    command = banner.split("`%cowork rebuild ", 1)[1].split("`", 1)[0].split()
    assert command == ["weights"], banner

    # 2. the next request's state: weights gone, prices re-created outside the record
    fake.add("Only weights is gone.")
    kernel.run("%cowork what is gone?")
    body = json.loads(json.dumps(fake.message_requests[-1].body))
    state = next(
        block["text"]
        for message in body["messages"]
        for block in (message["content"] if isinstance(message["content"], list) else [])
        if block.get("type") == "text" and "<session_state>" in block.get("text", "")
    )
    gone = state.split("variables_gone:", 1)[1].split("variables_recreated:", 1)[0]
    assert "weights: list" in gone
    assert "prices" not in gone
    assert "variables_recreated:\n- 'prices: list" in state
    assert "offer rebuild_variables" in state

    # provenance of the re-created name names the cell that re-created it
    shown = _flat(kernel.run("%cowork provenance prices").text())
    assert "re-created in this kernel outside the conversation" in shown, shown
    assert "last set by cell [1] (before Loom loaded)" in shown, shown
    assert "prices = [1, 2, 3]" in shown

    # 3. the cells before %load_ext (in the fifth cell) are this kernel's executions
    origin = _flat(kernel.run("%cowork provenance total").text())
    assert "last set by cell [3] (before Loom loaded)" in origin, origin
    assert "no timing" in origin
    assert "cell [2] (before Loom loaded)" in origin  # its chain: base, then prices
    assert "cell [1] (before Loom loaded)" in origin
    late = archive_rows(notebook, "SELECT execution_count, code FROM executions WHERE late = 1")
    assert sorted(late) == [
        (1, "prices = [1, 2, 3]"),
        (2, "base = 20"),
        (3, "total = base + len(prices)"),
        (4, "note = 'not needed'"),
    ]
    kernel.run("del total, base")
    out = kernel.run("%cowork rebuild total").text()
    assert "Ran 2 of 2 step(s)" in _flat(out), out
    assert kernel.value("total") == "23"

    kernel.run("%reload_ext loom_jupyter")  # a reload records nothing twice
    kernel.run("%cowork provenance total")  # the records are written
    again = archive_rows(notebook, "SELECT count(*) FROM executions WHERE late = 1")
    assert again == [(4,)]
