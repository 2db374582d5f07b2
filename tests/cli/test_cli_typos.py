"""The terminal's slips (issue 40.1), through the real ``loom-jupyter`` command: a command
name one or two letters off whose words fit that command is answered "did you mean" (exit
2, the archive untouched); words that do not fit get argparse's own error. The fake
Messages API the environment names receives nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING

from clirun import Notebook, run_cli

from loom_jupyter.testing import FakeAnthropic

if TYPE_CHECKING:
    from pathlib import Path


def test_a_slip_is_named_and_nothing_runs(notebook: Notebook, tmp_path: Path) -> None:
    with FakeAnthropic() as fake:
        env = {"ANTHROPIC_BASE_URL": fake.base_url, "ANTHROPIC_API_KEY": "sk-ant-cli-0000"}
        env["XDG_CONFIG_HOME"] = str(tmp_path / "config")
        slip = run_cli("sesions", str(notebook.path), env=env)
        search = run_cli("serach", str(notebook.path), "revenue", "--limit", "3", env=env)
        unfit = run_cli("sesions", env=env)  # no notebook: not the shape of `sessions`
        assert fake.requests == []
    assert slip.code == 2
    assert slip.out == ""
    assert f"Did you mean `loom-jupyter sessions '{notebook.path}'`?" in slip.err
    assert search.code == 2
    assert "Did you mean `loom-jupyter search" in search.err
    assert "revenue --limit 3`?" in search.err
    assert unfit.code == 2
    assert "invalid choice: 'sesions'" in unfit.err
    assert run_cli("sessions", str(notebook.path)).code == 0  # the real one still works
