"""Running the real ``loom-jupyter`` command, and the notebook the CLI tests read."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import loom_jupyter


@dataclass(frozen=True)
class Result:
    """What the command printed and its exit status."""

    code: int
    out: str
    err: str


def run_cli(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> Result:
    """Run ``python -m loom_jupyter.cli ARGS`` in a subprocess (``env``: more environment)."""
    done = subprocess.run(
        [sys.executable, "-m", "loom_jupyter.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=60,
        env={
            "COLUMNS": "200",
            "PATH": "/usr/bin:/bin",
            "PYTHONPATH": _package_root(),
            **(env or {}),
        },
    )
    return Result(done.returncode, done.stdout, done.stderr)


def _package_root() -> str:
    return str(Path(loom_jupyter.__file__).parent.parent)


@dataclass(frozen=True)
class Notebook:
    """A notebook on disk whose archive holds two sessions."""

    path: Path
    older: str  # 4 turns with a tool call; list number 2
    newer: str  # 1 turn; list number 1
