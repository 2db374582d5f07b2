"""The organisation's managed policy in real kernels (DESIGN §16, issue 43).

The kernels run from a throwaway environment (``python -m venv --system-site-packages``)
whose prefix holds the policy, ``{sys.prefix}/etc/loom/managed.yaml``, as a hub image's
environment would; Loom is importable there through ``PYTHONPATH``. The person's looser
config, a ``LOOM_*`` variable and the magics meet the policy; the daily spend limit holds
across two notebooks and a kernel restart (one ``XDG_STATE_HOME``); a broken policy stops
Loom. Requests go to the fake Messages API.
"""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import KernelManager

import loom_jupyter
from loom_jupyter.messages import Usage
from loom_jupyter.models.pricing import known_cost_usd

from .conftest import TIMEOUT, Kernel
from .sidebar_wire import Wire, hello

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from loom_jupyter.testing import FakeAnthropic

REPO = Path(loom_jupyter.__file__).parent.parent
USAGE = {"input_tokens": 1000, "output_tokens": 1000}
ONE = known_cost_usd("claude-sonnet-5-5", Usage(input_tokens=1000, output_tokens=1000)) or 0.0


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A throwaway environment on this interpreter's packages; its kernelspec beside it."""
    root = tmp_path_factory.mktemp("policy-env")
    env = root / "env"
    subprocess.run(
        [sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(env)],
        check=True,
        timeout=120,
    )
    python = env / "bin" / "python"
    spec = root / "kernels" / "policy-env"
    spec.mkdir(parents=True)
    argv = [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(
        json.dumps({"argv": argv, "display_name": "policy env", "language": "python"})
    )
    (env / "etc" / "loom").mkdir(parents=True)
    return env


def set_policy(venv: Path, text: str) -> Path:
    path = venv / "etc" / "loom" / "managed.yaml"
    path.write_text(text)
    return path


@pytest.fixture
def start(venv: Path, fake: FakeAnthropic, tmp_path: Path) -> Iterator[Callable[..., Kernel]]:
    """Start a kernel of the policy's environment on a notebook (shut down at the end)."""
    started: list[Kernel] = []
    specs = KernelSpecManager(kernel_dirs=[str(venv.parent / "kernels")])

    def launch(notebook: Path, **extra: str) -> Kernel:
        env = {
            k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "LOOM_", "JPY_"))
        }
        paths = [str(REPO)] + (site.getsitepackages() if sys.prefix != sys.base_prefix else [])
        env.update(
            PYTHONPATH=os.pathsep.join(paths),
            JPY_SESSION_NAME=str(notebook),
            ANTHROPIC_BASE_URL=fake.base_url,
            ANTHROPIC_API_KEY="test-key",
            XDG_CONFIG_HOME=str(tmp_path / "config"),
            XDG_STATE_HOME=str(tmp_path / "state"),
            **extra,
        )
        notebook.parent.mkdir(parents=True, exist_ok=True)
        km = KernelManager(kernel_name="policy-env", kernel_spec_manager=specs)
        km.start_kernel(env=env, cwd=str(notebook.parent))
        kc = km.client()
        kc.start_channels()
        kc.wait_for_ready(timeout=TIMEOUT)
        kernel = Kernel(km, kc)
        started.append(kernel)
        return kernel

    yield launch
    for kernel in started:
        if kernel.km.is_alive():
            kernel.shutdown()


def person_config(tmp_path: Path, text: str) -> None:
    folder = tmp_path / "config" / "loom"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "loom.yaml").write_text(text)


def test_the_kernel_reads_the_policy_of_its_environments_prefix(
    venv: Path, start: Callable[..., Kernel], tmp_path: Path
) -> None:
    set_policy(venv, "approval: ask\n")
    kernel = start(tmp_path / "nb" / "nb.ipynb")
    assert kernel.value("import sys; sys.prefix") == repr(str(venv))
    assert str(REPO / "loom_jupyter") in kernel.value("import loom_jupyter; loom_jupyter.__file__")


def test_no_looser_config_env_or_magic_gets_past_the_policy_and_every_front_says_so(
    venv: Path, start: Callable[..., Kernel], fake: FakeAnthropic, tmp_path: Path
) -> None:
    policy = set_policy(
        venv,
        "approval: ask\nmodels: [claude-sonnet-5-5, claude-haiku-5-5]\n"
        "mcp_servers_allowed: [docs]\nweb_search: false\nweb_fetch: false\n",
    )
    person_config(
        tmp_path,
        "model: claude-opus-5-5\nweb_search: true\nweb_fetch: true\nmcp_servers:\n"
        "  docs: {command: python, args: ['-c', 'raise SystemExit(3)']}\n"
        "  rogue: {command: python, args: ['-c', 'raise SystemExit(3)']}\n",
    )
    kernel = start(tmp_path / "nb" / "nb.ipynb", LOOM_APPROVAL="auto")
    banner = " ".join(kernel.run("%load_ext loom_jupyter").text().split())
    assert "approval: ask (managed by your organisation)" in banner
    assert f"managed by your organisation ({policy}): approval: ask at most" in banner
    assert "models: claude-sonnet-5-5, claude-haiku-5-5" in banner
    assert "approval: auto (a LOOM_* variable) is not allowed; ask is used" in banner
    assert "model: claude-opus-5-5 (your loom.yaml) is not allowed; claude-sonnet-5-5" in banner
    assert "web_search: on (your loom.yaml) is not allowed; off is used" in banner

    refused = " ".join(kernel.run("%cowork approval auto").text().split())
    assert "approval auto is not allowed" in refused
    assert str(policy) in refused
    refused = " ".join(kernel.run("%cowork model claude-opus-5-5").text().split())
    assert "claude-opus-5-5 is not allowed" in refused
    assert str(policy) in refused
    assert "read-only" in kernel.run("%cowork approval read-only").text()  # stricter: fine
    kernel.run("%cowork approval ask")

    status = " ".join(kernel.run("%cowork status").text().split())
    assert "Approval: ask (managed by your organisation)" in status
    assert "managed by your organisation (" in status
    assert "model: claude-opus-5-5 (your loom.yaml) is not allowed" in status

    servers = " ".join(kernel.run("%cowork mcp").text().split())
    assert "rogue" in servers
    assert "not allowed" in servers
    assert "not allowed by your organisation's managed policy" in servers

    fake.add("hello from sonnet")
    before = len(fake.message_requests)
    kernel.run("%cowork hi")
    sent = fake.message_requests[before:]
    assert [r.body["model"] for r in sent] == ["claude-sonnet-5-5"]
    names = [t.get("name") for t in sent[0].body.get("tools", [])]
    assert "web_search" not in names
    assert "web_fetch" not in names
    assert not any(str(n).startswith("mcp__rogue") for n in names)


def test_the_daily_limit_holds_across_two_notebooks_and_a_restart(
    venv: Path, start: Callable[..., Kernel], fake: FakeAnthropic, tmp_path: Path
) -> None:
    limit = round(ONE * 1.5, 4)  # one request is under it; two are past it
    policy = set_policy(venv, f"daily_spend_limit_usd: {limit}\n")
    first = tmp_path / "a" / "first.ipynb"
    kernel = start(first, LOOM_APPROVAL="auto")
    kernel.run("%load_ext loom_jupyter")
    fake.add({"content": ["one"], "usage": USAGE})
    before = len(fake.message_requests)
    assert "one" in kernel.run("%cowork first").text()
    kernel.shutdown()  # the kernel restarts: the spend is on disk

    kernel = start(first, LOOM_APPROVAL="auto")
    kernel.run("%load_ext loom_jupyter")
    fake.add({"content": ["two"], "usage": USAGE})
    assert "two" in kernel.run("%cowork second").text()
    assert len(fake.message_requests) == before + 2

    other = start(tmp_path / "b" / "second.ipynb", LOOM_APPROVAL="auto")  # another notebook
    other.run("%load_ext loom_jupyter")
    said = " ".join(other.run("%cowork third").text().split())
    assert f"today ${2 * ONE:.2f} of ${limit:.2f} spent; resets at 00:00 UTC" in said
    assert str(policy) in said
    assert len(fake.message_requests) == before + 2  # refused before anything was sent


def test_a_broken_policy_stops_loom_with_one_message_naming_it(
    venv: Path, start: Callable[..., Kernel], fake: FakeAnthropic, tmp_path: Path
) -> None:
    policy = set_policy(venv, "approval: ask\nspend_limit: 20\n")
    kernel = start(tmp_path / "nb" / "nb.ipynb", LOOM_APPROVAL="auto")
    banner = " ".join(kernel.run("%load_ext loom_jupyter").text().split())
    assert banner.startswith(f"loom: {policy}: the managed policy cannot be used")
    assert "unknown key(s) spend_limit" in banner
    before = len(fake.message_requests)
    said = " ".join(kernel.run("%cowork are you there?").text().split())
    assert str(policy) in said
    assert len(fake.message_requests) == before


def test_the_sidebars_footer_is_told_what_the_policy_overrides(
    venv: Path, start: Callable[..., Kernel], tmp_path: Path
) -> None:
    """The sidebar's footer (DESIGN §16, protocol 1.4): `welcome.approval` and each
    `approval_mode` carry the policy's line, what it overrides and whether it decides the mode."""
    policy = set_policy(venv, "approval: ask\nmodels: [claude-sonnet-5-5]\n")
    person_config(tmp_path, "model: claude-opus-5-5\n")
    kernel = start(tmp_path / "nb" / "nb.ipynb", LOOM_APPROVAL="auto")
    kernel.run("%load_ext loom_jupyter")
    wire = Wire(kernel.km, kernel.kc)  # the page's view of the same kernel from here on
    comm = wire.open_comm(hello(minor=4))
    (welcome,) = wire.wait(lambda: wire.events(comm, "welcome"), "the welcome")
    approval = welcome["approval"]
    assert (approval["mode"], approval["by_policy"]) == ("ask", True)
    assert approval["managed"] == (
        f"managed by your organisation ({policy}): approval: ask at most; models: claude-sonnet-5-5"
    )
    assert approval["overrides"] == [
        f"approval: auto (a LOOM_* variable) is not allowed; ask is used (managed by your "
        f"organisation, {policy})",
        f"model: claude-opus-5-5 (your loom.yaml) is not allowed; claude-sonnet-5-5 is used "
        f"(managed by your organisation, {policy})",
    ]

    assert wire.run("%cowork approval read-only")["status"] == "ok"  # stricter: the person's
    (changed,) = wire.wait(lambda: wire.events(comm, "approval_mode"), "approval_mode")
    assert changed["approval"] == {
        **approval,
        "mode": "read-only",
        "source": "magic",
        "by_policy": False,
    }
