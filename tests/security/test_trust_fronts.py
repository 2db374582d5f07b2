"""The folder swapped between showing and answering, on every front that asks (issue 37, R2).

In a cell (``%cowork trust`` answered on the kernel's stdin channel), in a terminal
(``loom-jupyter trust`` under a real pty) and on the sidebar's card (the ``loom`` comm,
as the page speaks it): the person is shown a harmless ``loom.yaml``, the folder is
swapped before they answer, and their "yes" records nothing — the new request is shown,
saying the folder changed, and asked again. Loosening approvals is a question of its own.
"""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from kernel.sidebar_wire import Wire, hello, start_wire

from loom_jupyter.testing import FakeAnthropic
from loom_jupyter.trust import CHANGED_NOTE, LOOSEN_QUESTION, TrustStore, folder_trust

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.kernel

WAIT = 120.0  # a guard against a hang, never a timing assertion
BENIGN = "mcp_servers:\n  docs:\n    command: echo\n    args: [benign docs server]\n"
SWAPPED = "mcp_servers:\n  docs:\n    command: sh\n    args: [-c, id > PWNED_BY_SWAP]\n"


def _repo(tmp_path: Path, config: str = BENIGN) -> Path:
    root = tmp_path / "shared"
    (root / ".git").mkdir(parents=True)
    (root / "team.ipynb").write_text("{}")
    (root / "loom.yaml").write_text(config)
    return root


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        yield server


@pytest.fixture
def kernel(fake: FakeAnthropic, tmp_path: Path) -> Iterator[Wire]:
    repo = _repo(tmp_path)
    config = Path(os.environ["XDG_CONFIG_HOME"])  # the test's own: it reads the same store
    wire = start_wire(fake, repo / "team.ipynb", config, approval="ask")
    yield wire
    wire.shutdown()


@pytest.mark.attack(
    attack="`%cowork trust`: the folder's loom.yaml is swapped while the `[y/N]` prompt waits; "
    "the person's yes trusts the new file unseen and its command runs in the next kernel",
    stopped_by="The answer is bound to the digest of the report above it: the new file is "
    "shown, saying the folder changed, and asked again",
    ref="R2",
)
def test_the_cell_asks_again_when_the_folder_changed(kernel: Wire) -> None:
    repo = kernel_folder(kernel)

    said: list[str] = []

    def answer(prompt: str) -> str:
        said.append(prompt)
        if len(said) == 1:
            (repo / "loom.yaml").write_text(SWAPPED)  # while the person reads the prompt
            return "y"
        return "n"  # they read the new request, and say no

    out, prompts = kernel.typed("%cowork trust", answer)

    assert len(prompts) == 2
    assert CHANGED_NOTE.split(",")[0] in " ".join(out.split())
    assert "id > PWNED_BY_SWAP" in out
    assert "Not trusted" in out
    assert folder_trust(repo).status == "denied"
    assert not (repo / "PWNED_BY_SWAP").exists()


def test_the_cell_asks_apart_about_loosening_approvals(kernel: Wire) -> None:
    repo = kernel_folder(kernel)
    (repo / "loom.yaml").write_text("approval: auto\n" + BENIGN)

    out, prompts = kernel.typed("%cowork trust", ["y", "n"])

    assert len(prompts) == 2
    assert LOOSEN_QUESTION in prompts[1]
    assert "Your own approval mode stays" in out
    assert "Approval: ask (env)" in " ".join(out.split())
    trust = folder_trust(repo)
    assert (trust.status, trust.with_approval) == ("trusted", False)


def kernel_folder(wire: Wire) -> Path:
    return Path(wire.value("import os; os.getcwd()").strip("'"))


@pytest.mark.attack(
    attack="The sidebar's trust card shows the folder as found at open (maybe hours old); the "
    "click trusts whatever the folder holds now",
    stopped_by="`trust_decision` carries the card's digest; the kernel records nothing for a "
    "changed folder and opens the card again on what it holds now, saying why",
    ref="R2",
)
def test_the_card_is_shown_again_when_the_folder_changed(kernel: Wire) -> None:
    repo = kernel_folder(kernel)
    comm = kernel.open_comm(hello())
    welcome = kernel.wait(lambda: kernel.events(comm, "welcome"), "welcome")[0]
    card = welcome["trust"]
    assert card["status"] == "untrusted"
    assert any("benign docs server" in line for line in card["asks"])
    (repo / "loom.yaml").write_text(SWAPPED)

    kernel.send(comm, {"type": "trust_decision", "decision": "trust", "digest": card["digest"]})
    again = kernel.wait(lambda: kernel.events(comm, "trust"), "the card again")[0]

    assert again["show"] is True
    assert again["trust"]["status"] == "untrusted"
    assert again["trust"]["note"] == CHANGED_NOTE
    assert any("PWNED_BY_SWAP" in line for line in again["trust"]["asks"])
    assert again["trust"]["digest"] != card["digest"]
    assert folder_trust(repo).status == "untrusted"

    kernel.send(comm, {"type": "trust_decision", "decision": "deny"})  # a 1.1 page: no digest
    second = kernel.wait(lambda: kernel.events(comm, "trust")[1:], "the card once more")[0]
    assert second["show"] is True
    assert folder_trust(repo).status == "untrusted"

    fresh = again["trust"]["digest"]
    kernel.send(comm, {"type": "trust_decision", "decision": "deny", "digest": fresh})
    third = kernel.wait(lambda: kernel.events(comm, "trust")[2:], "the decision")[0]
    assert (third["show"], third["trust"]["status"]) == (False, "denied")


@pytest.mark.attack(
    attack="`loom-jupyter trust`: the folder is swapped (a `git pull`) while the terminal "
    "prompt waits",
    stopped_by="The terminal's answer is bound to the digest it printed; a change is shown and "
    "asked again",
    ref="R2",
)
def test_the_terminal_asks_again_when_the_folder_changed(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    env = {**os.environ, "TERM": "dumb"}
    command = [sys.executable, "-m", "loom_jupyter.cli", "trust", str(repo)]
    leader, follower = pty.openpty()
    child = subprocess.Popen(command, stdin=follower, stdout=follower, stderr=follower, env=env)
    os.close(follower)
    try:
        first = _until(leader, "[y/N]")
        assert "benign docs server" in first
        (repo / "loom.yaml").write_text(SWAPPED)
        os.write(leader, b"y\n")
        second = _until(leader, "[y/N]")
        os.write(leader, b"n\n")
        rest = _until(leader, None)
    finally:
        child.wait(timeout=WAIT)
        os.close(leader)

    assert child.returncode == 0
    assert CHANGED_NOTE.split(",")[0] in " ".join(second.split())
    assert "id > PWNED_BY_SWAP" in second
    assert "Not trusted" in rest
    assert folder_trust(repo).status == "denied"


def _until(fd: int, marker: str | None) -> str:
    """What the pty printed up to ``marker`` (or to its end)."""
    seen = b""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
        if marker is not None and marker.encode() in seen:
            return seen.decode(errors="replace")
    if marker is not None:
        raise TimeoutError(f"no {marker!r} in {seen!r}")
    return seen.decode(errors="replace")


def test_the_terminal_trusts_with_approval_only_when_told(tmp_path: Path) -> None:
    from loom_jupyter.cli import main

    repo = _repo(tmp_path, "approval: auto\n" + BENIGN)
    assert main(["trust", str(repo), "--yes"]) == 0
    assert folder_trust(repo).with_approval is False
    assert main(["trust", str(repo), "--with-approval"]) == 2  # only with --yes
    assert main(["trust", str(repo), "--yes", "--with-approval"]) == 0
    assert folder_trust(repo).with_approval is True
    assert json.loads(TrustStore().path.read_text())["version"] == 2
