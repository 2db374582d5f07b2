"""A real terminal IPython process (TerminalInteractiveShell): text output, archive in the cwd."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    from loom_jupyter.testing import FakeAnthropic

pytest_plugins = ["loom_jupyter.testing.pytest_plugin"]

SCRIPT = """
ip = get_ipython()
print(type(ip).__name__)
ip.run_line_magic("load_ext", "loom_jupyter")
ip.run_line_magic("cowork", "hello from the terminal")
ip.run_line_magic("cowork", "sessions")
ip.run_line_magic("cowork", "status")
"""


def test_terminal_ipython_streams_text_and_lists_sessions(
    fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    fake_anthropic.add("# Findings\nPlain *text* here.\n```python\nx = 1\n```\n- done")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LOOM_", "JPY_"))}
    env["XDG_CONFIG_HOME"] = str(tmp_path / "config")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "IPython",
            "--quick",
            "--no-banner",
            "--colors=nocolor",
            "-c",
            SCRIPT,
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    out = done.stdout
    assert out.startswith("TerminalInteractiveShell")
    assert "loom: ipython-session (terminal; archive" in out
    assert "Findings\n========\nPlain text here.\n    x = 1\n• done" in out  # Markdown, readable
    assert "```" not in out
    assert "1 *  hello from the terminal" in out
    assert "Session: hello from the terminal" in out
    assert (tmp_path / ".loom" / "ipython-session.sqlite").exists()
