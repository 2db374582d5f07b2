"""The shell tool: runs in the notebook folder, reports exit codes, times out, caps output."""

from __future__ import annotations

import dataclasses
import os
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    import pytest

    from .conftest import Caller


def _with(call: Caller, **changes: object) -> Caller:
    call.ctx = dataclasses.replace(call.ctx, settings=call.ctx.settings.replace(**changes))
    return call


async def test_runs_in_the_notebook_folder_and_reports_exit_code(
    notebook_dir: Path, real_dir: str, call: Caller
) -> None:
    (notebook_dir / "marker.txt").write_text("here")
    out = await call("shell", command="pwd; ls; echo oops >&2")
    assert not out.is_error
    text = out.text_content
    assert text.startswith("$ pwd; ls; echo oops >&2\n")
    assert f"\n{real_dir}\n" in text
    assert "marker.txt" in text
    assert "oops" in text
    assert text.endswith("[exit code 0]")


async def test_a_failing_command_is_an_error_with_its_code(call: Caller) -> None:
    out = await call("shell", command="echo partial; exit 3")
    assert out.is_error
    assert "partial" in out.text_content
    assert "[exit code 3]" in out.text_content


async def test_timeout_kills_the_whole_process_group(notebook_dir: Path, call: Caller) -> None:
    _with(call, shell_timeout_seconds=1.0)
    command = "sleep 60 & echo $! > child.pid; echo started; wait"
    out = await call("shell", command=command)
    assert out.is_error
    assert "started" in out.text_content
    assert "timed out after 1 s" in out.text_content
    assert "killed" in out.text_content
    child = int((notebook_dir / "child.pid").read_text())
    assert not _alive(child)


def _alive(pid: int) -> bool:
    """Whether ``pid`` is a live (non-zombie) process, giving the kernel a moment to reap it."""
    for _ in range(50):
        try:
            with open(f"/proc/{pid}/stat") as handle:
                state = handle.read().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return False
        if state == "Z":
            return False
        time.sleep(0.05)
    return True


async def test_output_is_capped_head_and_tail(call: Caller) -> None:
    _with(call, tool_output_max_chars=2000)
    out = await call("shell", command="seq 1 100000")
    text = out.text_content
    assert len(text) <= 2000
    assert "\n1\n2\n3\n" in text
    assert "100000" in text
    assert "characters cut" in text
    assert text.endswith("[exit code 0]")


async def test_the_api_key_is_never_echoed(call: Caller, monkeypatch: pytest.MonkeyPatch) -> None:
    key = "sk-ant-api03-shell-test-0123456789"
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    out = await call("shell", command="echo key=$ANTHROPIC_API_KEY; env | grep ANTHROPIC")
    assert key not in out.text_content
    assert "key=[REDACTED]" in out.text_content
    assert os.environ["ANTHROPIC_API_KEY"] == key  # the environment itself is left as it is


async def test_no_stdin(call: Caller) -> None:
    out = await call("shell", command="cat; echo done")
    assert "done" in out.text_content
    assert "[exit code 0]" in out.text_content
