"""A real terminal IPython process (TerminalInteractiveShell): text output, archive in the cwd;
the next shell in the folder names the conversation it resumes; without a key, words for a
terminal (issue 40.5, 40.6)."""

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


def ipython(script: str, folder: Path, *, key: bool = True) -> str:
    """What a terminal IPython in ``folder`` prints running ``script``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LOOM_", "JPY_"))}
    env["XDG_CONFIG_HOME"] = str(folder / "config")
    env["PYTHON_KEYRING_BACKEND"] = "keyring.backends.null.Keyring"
    if not key:
        env = {
            k: v for k, v in env.items() if k not in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
        }
    command = [sys.executable, "-m", "IPython", "--quick", "--no-banner", "--colors=nocolor"]
    done = subprocess.run(
        [*command, "-c", script],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout


def test_terminal_ipython_streams_text_and_lists_sessions(
    fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    fake_anthropic.add("# Findings\nPlain *text* here.\n```python\nx = 1\n```\n- done")
    out = ipython(SCRIPT, tmp_path)
    assert out.startswith("TerminalInteractiveShell")
    assert "loom: ipython-session (terminal; archive" in out
    assert "Findings\n========\nPlain text here.\n    x = 1\n• done" in out  # Markdown, readable
    assert "```" not in out
    assert "1 *  hello from the terminal" in out
    assert "Session: hello from the terminal" in out
    assert (tmp_path / ".loom" / "ipython-session.sqlite").exists()

    again = " ".join(
        ipython('get_ipython().run_line_magic("load_ext", "loom_jupyter")', tmp_path).split()
    )
    assert "resumed “hello from the terminal” (1 prompt), last active 20" in again
    assert "UTC; %cowork new starts a new one" in again


def test_terminal_ipython_without_a_key_says_what_works_in_a_terminal(tmp_path: Path) -> None:
    script = SCRIPT.splitlines()[:5]  # the type, the extension and one message
    out = " ".join(ipython("\n".join(script), tmp_path, key=False).split())
    assert "No Anthropic API key yet. Run %cowork login here" in out
    assert "export ANTHROPIC_API_KEY=... in the shell before starting IPython" in out
    assert "cell" not in out
    assert "sidebar" not in out
