"""A hostile ``loom.yaml`` in a real kernel with a small hub pod's memory (security review R7).

The kernel runs under a 2 GB address-space cap (``RLIMIT_AS``, set by its kernel spec's
launcher) in a folder whose ``loom.yaml`` is a 385-byte YAML alias bomb, or 600 nested
brackets. Unfixed, the bomb took 5.7 GB and froze the kernel for about 100 s (under a cap:
``MemoryError`` at every Loom command) and the brackets made ``%load_ext``, ``%cowork
status`` and ``%cowork trust`` fail with a bare ``RecursionError``. Now each command
answers, the person's own code runs, and what Loom says names ``loom.yaml``.

Timeouts here are generous guards for a loaded two-core machine, never assertions.
"""

from __future__ import annotations

import json
import os
import queue
import sys
import time
from typing import TYPE_CHECKING, Any

import pytest
from jupyter_client.manager import start_new_kernel

from .test_hostile_config import alias_bomb, nested

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from jupyter_client.blocking.client import BlockingKernelClient

pytestmark = pytest.mark.kernel

CAP_BYTES = 2 * 1024**3
TIMEOUT = 60.0
KERNEL_NAME = "loom-capped"
LAUNCH = (
    "import resource; "
    f"resource.setrlimit(resource.RLIMIT_AS, ({CAP_BYTES}, {CAP_BYTES})); "
    "from ipykernel import kernelapp; kernelapp.launch_new_instance()"
)


@pytest.fixture
def capped_spec(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A kernel spec whose kernel caps its own address space before ipykernel starts."""
    folder = tmp_path / "jupyter" / "kernels" / KERNEL_NAME
    folder.mkdir(parents=True)
    spec = {
        "argv": [sys.executable, "-c", LAUNCH, "-f", "{connection_file}"],
        "display_name": "Python 3 (2 GB address space)",
        "language": "python",
    }
    (folder / "kernel.json").write_text(json.dumps(spec))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    return KERNEL_NAME


@pytest.fixture
def kernel_in(capped_spec: str, tmp_path: Path) -> Iterator[Any]:
    started: list[tuple[Any, BlockingKernelClient]] = []

    def start(folder: Path) -> BlockingKernelClient:
        env = {
            k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "LOOM_", "JPY_"))
        }
        env.update(
            JPY_SESSION_NAME=str(folder / "analysis.ipynb"),
            XDG_CONFIG_HOME=str(tmp_path / "config"),
            ANTHROPIC_BASE_URL="http://127.0.0.1:9",  # nothing listens: no turn runs here
            ANTHROPIC_API_KEY="test-key",
        )
        km, kc = start_new_kernel(
            startup_timeout=TIMEOUT, kernel_name=capped_spec, env=env, cwd=str(folder)
        )
        started.append((km, kc))
        return kc

    yield start
    for km, kc in started:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def run(kc: BlockingKernelClient, code: str) -> tuple[str, str]:
    """Execute ``code`` (no stdin: nobody answers a prompt); its status and its output."""
    msg_id = kc.execute(code, allow_stdin=False)
    parts: list[str] = []
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        try:
            msg = kc.get_iopub_msg(timeout=1)
        except queue.Empty:
            continue
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        content, kind = msg["content"], msg["msg_type"]
        if kind == "status" and content["execution_state"] == "idle":
            reply = kc.get_shell_msg(timeout=TIMEOUT)
            while reply["parent_header"].get("msg_id") != msg_id:
                reply = kc.get_shell_msg(timeout=TIMEOUT)
            return reply["content"]["status"], "".join(parts)
        if kind == "stream":
            parts.append(content["text"])
        elif kind in ("display_data", "execute_result"):
            parts.append(content["data"].get("text/plain", ""))
        elif kind == "error":
            parts.append("\n".join(content["traceback"]))
    raise TimeoutError(f"no answer to {code!r} in {TIMEOUT:.0f} s")


@pytest.mark.attack(
    attack="A cloned folder's 385-byte YAML alias bomb or 600 nested brackets in loom.yaml "
    "freezes the kernel for minutes (gigabytes) or makes `%load_ext`, `%cowork status` and "
    "`%cowork trust` fail with a bare RecursionError, on every start",
    stopped_by="loom.yaml is at most 64 KiB, anchors and aliases are refused, nesting is "
    "bounded, wrong types are named by type and any failure is one error naming the file",
    ref="R7",
)
@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (alias_bomb(), "YAML anchors and aliases (&name / *name) are not allowed in loom.yaml"),
        (nested(600), "nest more than 32 levels deep"),
    ],
    ids=["alias-bomb", "600-brackets"],
)
def test_a_hostile_loom_yaml_in_a_capped_kernel(
    kernel_in: Any, tmp_path: Path, content: bytes, problem: str
) -> None:
    folder = tmp_path / "cloned"
    (folder / ".git").mkdir(parents=True)
    (folder / "loom.yaml").write_bytes(content)
    kc = kernel_in(folder)

    outputs: dict[str, str] = {}
    for code in ("%load_ext loom_jupyter", "%cowork status", "print(6*7)", "%cowork trust"):
        status, outputs[code] = run(kc, code)
        assert status == "ok", (code, outputs[code][-3000:])
    assert outputs["print(6*7)"] == "42\n"
    assert "loom.yaml" in outputs["%load_ext loom_jupyter"]
    assert "loom.yaml" in outputs["%cowork trust"]
    assert problem in outputs["%cowork trust"]

    status, revoked = run(kc, "%cowork trust --revoke")
    assert status == "ok", revoked[-3000:]
    assert "revoked" in revoked.lower()
    everything = "\n".join([*outputs.values(), revoked])
    for failure in ("Traceback", "RecursionError", "MemoryError"):
        assert failure not in everything

    status, cap = run(kc, "import resource; print(resource.getrlimit(resource.RLIMIT_AS)[0])")
    assert (status, cap) == ("ok", f"{CAP_BYTES}\n")  # the kernel did run under the cap
