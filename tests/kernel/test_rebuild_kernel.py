"""%cowork rebuild in a real ipykernel: the variables come back after a restart."""

from __future__ import annotations

import json
import threading
import time
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

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


def test_after_a_restart_the_banner_and_the_model_are_offered_a_rebuild(
    start_kernel: Callable[..., Kernel], fake: FakeAnthropic
) -> None:
    kernel = start_kernel()
    kernel.run("%load_ext loom_jupyter")
    fake.add("Hello.", "Noted.")
    kernel.run("%cowork hello")
    kernel.run("rate = 3")
    kernel.run("label = 'slow'")
    kernel.run("scaled = rate * 7")
    kernel.run("%cowork I made scaled")  # the conversation now uses rate, label and scaled
    kernel.run("scratch = list(range(5))")  # recorded, but no turn has seen it

    kernel.km.restart_kernel(now=False)
    kernel.kc.wait_for_ready(timeout=60)
    banner = " ".join(kernel.run("%load_ext loom_jupyter").stdout.split())
    assert "Variables this conversation used are gone with the previous kernel" in banner
    command = banner.split("`%cowork rebuild ", 1)[1].split("`", 1)[0].split()
    assert sorted(command) == ["label", "rate", "scaled"]
    assert "3 of 4 recorded executions" in banner  # %cowork lines are not records

    fake.add("I can rebuild them.")
    kernel.run("%cowork where is scaled?")
    request = json.dumps(fake.message_requests[-1].body)  # the session state rides along
    assert "variables_gone" in request
    assert "offer rebuild_variables" in request

    out = kernel.run(f"%cowork rebuild {' '.join(command)}").text()
    assert "same fingerprint as recorded" in out, out
    assert kernel.value("scaled") == "21"
    assert "Variables this conversation used" not in kernel.run("%reload_ext loom_jupyter").stdout


def test_an_interrupted_rebuild_says_what_is_missing_and_goes_on_after(
    start_kernel: Callable[..., Kernel], fake: FakeAnthropic, tmp_path: Path
) -> None:
    started, flag = tmp_path / "started", tmp_path / "go"
    kernel = start_kernel()
    kernel.run("%load_ext loom_jupyter")
    fake.add("Hello.")
    kernel.run("%cowork hello")
    kernel.run(f"started, flag = {str(started)!r}, {str(flag)!r}")
    flag.touch()
    slow_cell = (
        "import os, time\n"
        "open(started, 'w').close()\n"
        "while not os.path.exists(flag):\n"
        "    time.sleep(0.05)\n"
        "slow = 7"
    )
    assert kernel.run(slow_cell).status == "ok"
    kernel.run("%cowork provenance slow")  # the records are written

    kernel.km.restart_kernel(now=False)
    kernel.kc.wait_for_ready(timeout=60)
    kernel.run("%load_ext loom_jupyter")
    flag.unlink()
    started.unlink()

    def interrupt_once_it_runs() -> None:
        while not started.exists():  # the replayed step is running (and waits for the flag)
            time.sleep(0.05)
        kernel.km.interrupt_kernel()

    waiter = threading.Thread(target=interrupt_once_it_runs, daemon=True)
    waiter.start()
    out = kernel.run("%cowork rebuild slow --yes").text()
    waiter.join(timeout=60)
    assert "Rebuild interrupted. Present now: none of them; missing: slow." in out, out
    assert "KeyboardInterrupt" not in out
    assert kernel.value("started") == repr(str(started))  # the steps before it stay run

    flag.touch()
    again = kernel.run("%cowork rebuild slow --yes").text()
    assert "same fingerprint as recorded" in again, again
    assert kernel.value("slow") == "7"
