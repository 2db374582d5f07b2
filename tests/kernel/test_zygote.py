"""The suite's kernels fork from a zygote (loom_jupyter/testing/kernel_zygote.py,
tests/conftest.py): a forked kernel must be the process a cold start gives, reached by
interrupts, shutdowns and kills the same way, with its real exit status; and a kernel the
zygote cannot stand in for starts cold."""

from __future__ import annotations

import contextlib
import json
import os
import signal
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from jupyter_client.manager import KernelManager

from loom_jupyter.testing.kernel_zygote import SOCKET_ENV, ForkedKernel, cold_kernels

from .conftest import Kernel

if TYPE_CHECKING:
    from collections.abc import Iterator

FACTS = """
import json, os, signal, sys
import planted
print(json.dumps({
    "cwd": os.getcwd(),
    "path": sys.path,
    "argv": sys.argv[1:2],
    "environment": sorted(os.environ),
    "mark": os.environ.get("ZYGOTE_TEST_MARK"),
    "planted": planted.WHERE,
    "own_session": os.getsid(0) == os.getpid(),
    "sigint": repr(signal.getsignal(signal.SIGINT)),
    "sigchld": repr(signal.getsignal(signal.SIGCHLD)),
    "flags": list(sys.flags),
    "main": sys.modules["__main__"].__name__,
    "stdin": sys.stdin.read() if not sys.stdin.isatty() else "tty",
}))
print("SDK", "anthropic" in sys.modules, "PARENT", os.getppid())
"""


@contextlib.contextmanager
def _kernel(folder: Path, **env: str) -> Iterator[Kernel]:
    km = KernelManager(kernel_name="python3")
    km.start_kernel(cwd=str(folder), env={**os.environ, "ZYGOTE_TEST_MARK": "m", **env})
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=60)
        yield Kernel(km, kc)
    finally:
        kc.stop_channels()
        if km.is_alive():
            km.shutdown_kernel(now=True)


def _facts(kernel: Kernel) -> tuple[dict[str, object], bool, int]:
    out = kernel.run(FACTS)
    assert out.status == "ok", out.text()
    facts_line, sdk_line = out.stdout.strip().splitlines()[-2:]
    _, sdk, _, parent = sdk_line.split()
    return json.loads(facts_line), sdk == "True", int(parent)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "planted.py").write_text("WHERE = __file__\n")
    return tmp_path


def test_a_forked_kernel_is_the_process_a_cold_start_gives(folder: Path) -> None:
    with _kernel(folder) as forked:
        forked_facts, forked_sdk, forked_parent = _facts(forked)
        assert isinstance(forked.km.provisioner.process, ForkedKernel)  # type: ignore[union-attr]
    with cold_kernels(), _kernel(folder) as cold:
        cold_facts, cold_sdk, cold_parent = _facts(cold)
    assert (forked_sdk, cold_sdk) == (True, False)  # the one difference: what was imported
    assert cold_parent == os.getpid() != forked_parent  # the zygote forked it
    assert forked_facts["planted"] == str(folder / "planted.py")  # the folder comes first
    assert forked_facts["mark"] == "m"
    assert forked_facts["own_session"] is True
    forked_names = set(forked_facts.pop("environment"))  # type: ignore[call-overload]
    cold_names = set(cold_facts.pop("environment"))  # type: ignore[call-overload]
    assert forked_names ^ cold_names == {SOCKET_ENV}  # the same, but for the launcher's own
    assert forked_facts == cold_facts


def test_an_interrupt_reaches_a_forked_kernel(folder: Path) -> None:
    with _kernel(folder) as kernel:
        assert isinstance(kernel.km.provisioner.process, ForkedKernel)  # type: ignore[union-attr]
        msg_id = kernel.kc.execute("import time; print('asleep', flush=True); time.sleep(600)")
        said = kernel.kc.get_iopub_msg(timeout=60)
        while said["msg_type"] != "stream" or said["parent_header"].get("msg_id") != msg_id:
            said = kernel.kc.get_iopub_msg(timeout=60)
        kernel.km.interrupt_kernel()  # the cell runs: SIGINT is its KeyboardInterrupt
        reply = kernel.kc.get_shell_msg(timeout=60)
        assert reply["parent_header"]["msg_id"] == msg_id
        assert reply["content"]["ename"] == "KeyboardInterrupt"


def test_a_forked_kernels_exit_status_is_its_own(folder: Path) -> None:
    with _kernel(folder) as kernel:
        process = kernel.km.provisioner.process  # type: ignore[union-attr]
        assert isinstance(process, ForkedKernel)
        kernel.kc.execute("import os; os._exit(7)")
        assert process.wait(timeout=60) == 7, _state(process.pid)
        assert not kernel.km.is_alive()


def test_a_shutdown_that_kills_reaches_a_forked_kernel(folder: Path) -> None:
    with _kernel(folder) as kernel:
        process = kernel.km.provisioner.process  # type: ignore[union-attr]
        assert isinstance(process, ForkedKernel)
        kernel.km.shutdown_kernel(now=True)  # SIGKILL to its process group
        assert process.wait(timeout=60) == -signal.SIGKILL, _state(process.pid)


def _state(pid: int) -> str:
    """What the kernel's process is doing, for a failure's message."""
    try:
        return (Path("/proc") / str(pid) / "status").read_text().splitlines()[2]
    except OSError as error:
        return f"no process {pid}: {error}"


def test_a_kernel_with_other_python_settings_starts_cold(folder: Path) -> None:
    python_path = os.pathsep.join(filter(None, [str(folder), os.environ.get("PYTHONPATH")]))
    with _kernel(folder, PYTHONPATH=python_path) as kernel:
        assert not isinstance(kernel.km.provisioner.process, ForkedKernel)  # type: ignore[union-attr]
        _, sdk, parent = _facts(kernel)
    assert (sdk, parent) == (False, os.getpid())
