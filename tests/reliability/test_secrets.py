"""Secrets: a scripted session in a kernel whose environment holds canary secrets leaks none.

The tools print the environment every way they can; then the archive bytes
(with its -wal and -shm), every cell output, both exports, the kernel's log
and every request the model received are scanned for the canaries.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from contextlib import closing
from typing import TYPE_CHECKING, Any

import pytest

from loom_jupyter.testing import FakeAnthropic

from .cases import PASTED_KEY, SECRET_CANARIES, SECRET_CHECKS
from .kernels import Kernel, Reply

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.kernel

CANARIES = (*SECRET_CANARIES.values(), PASTED_KEY)


def _call(name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "tool_use", "name": name, "input": tool_input}]}


SCRIPT = (
    _call("run_python", {"code": "import os\nprint(dict(os.environ))"}),
    _call("run_python", {"code": "os.environ['DB_PASSWORD']"}),
    _call("shell", {"command": "env"}),
    _call("run_python", {"code": "import os\nos.system('env')"}),
    _call("run_python", {"code": "!env"}),
    _call("read_file", {"path": ".env"}),
    _call("run_python", {"code": "tok = os.environ['MY_TOKEN']"}),
    _call("inspect_variables", {"name": "tok"}),
    "All done; nothing secret here.",
)


def _hits(label: str, data: bytes) -> list[str]:
    return [f"{label}: {c[:12]}..." for c in CANARIES if c.encode() in data]


def test_no_secret_reaches_archive_outputs_exports_logs_or_model(tmp_path: Path) -> None:
    notebook = tmp_path / "secret.ipynb"
    (tmp_path / ".env").write_text("".join(f"{k}={v}\n" for k, v in SECRET_CANARIES.items()))
    log = tmp_path / "kernel.log"
    with FakeAnthropic() as fake, log.open("wb") as sink:
        kernel = Kernel.start(_env(fake, notebook), tmp_path, stdout=sink, stderr=sink)
        try:
            found = _session(kernel, fake, notebook, tmp_path)
        finally:
            kernel.shutdown()
        requests = [r.body for r in fake.message_requests]
    found["kernel log"] = log.read_bytes()  # complete now that the kernel is gone
    found["archive file"] += _archive(notebook).read_bytes()  # and once the WAL is folded in
    found["model requests"] = json.dumps(requests).encode()
    assert set(found) == {check.where for check in SECRET_CHECKS}
    results = json.dumps(requests[-len(SCRIPT) :])
    assert results.count("[REDACTED]") >= len(SECRET_CANARIES)  # printed, then redacted
    assert "DB_PASSWORD" in results  # names stay, values go
    hits = [hit for where, data in found.items() for hit in _hits(where, data)]
    assert hits == []


def _env(fake: FakeAnthropic, notebook: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "LOOM_", "JPY_"))}
    env.update(
        SECRET_CANARIES,
        JPY_SESSION_NAME=str(notebook),
        ANTHROPIC_BASE_URL=fake.base_url,
        LOOM_APPROVAL="auto",
        XDG_CONFIG_HOME=str(notebook.parent / "config"),
    )
    return env


def _archive(notebook: Path) -> Path:
    return notebook.parent / ".loom" / f"{notebook.name}.sqlite"


def _session(kernel: Kernel, fake: FakeAnthropic, notebook: Path, folder: Path) -> dict[str, bytes]:
    """Run the scripted session and the exports; the bytes of each place, by place."""
    cells = [kernel.run("%load_ext loom_jupyter"), kernel.run(f"my_key = {PASTED_KEY!r}")]
    fake.add("I will not repeat your key.")
    cells.append(kernel.run(f"%cowork my key is {PASTED_KEY} - is it valid?"))
    fake.add(*SCRIPT)
    cells.append(kernel.run("%cowork show me the environment"))
    assert "All done" in cells[-1].text()
    cells.append(kernel.run(f"%cowork export {folder / 'journal.md'}"))
    archive = _archive(notebook)
    notes = _rows(archive, "SELECT content FROM conversation_turns WHERE role = 'system'")
    assert any("my_key = '[REDACTED]'" in note for (note,) in notes), notes  # activity note
    live = b"".join(p.read_bytes() for p in archive.parent.glob(f"{archive.name}*"))
    cli = b"".join(
        _cli("export", str(notebook), "--format", fmt, "-o", str(folder / f"cli.{fmt}"))
        + (folder / f"cli.{fmt}").read_bytes()
        for fmt in ("md", "json")
    )
    return {
        "archive file": live,
        "cell outputs": json.dumps([_outputs(c) for c in cells], default=str).encode(),
        "`%cowork export`": (folder / "journal.md").read_bytes(),
        "CLI export": cli,
    }


def _outputs(cell: Reply) -> list[dict[str, Any]]:
    """Everything the cell output (``execute_input`` only echoes what the person typed)."""
    return [m for m in cell.messages if m["msg_type"] != "execute_input"]


def _rows(archive: Path, sql: str) -> list[tuple[Any, ...]]:
    with closing(sqlite3.connect(f"file:{archive}?mode=ro", uri=True)) as db:
        return db.execute(sql).fetchall()


def _cli(*args: str) -> bytes:
    done = subprocess.run(
        [sys.executable, "-m", "loom_jupyter.cli", *args], capture_output=True, check=True
    )
    return done.stdout + done.stderr
