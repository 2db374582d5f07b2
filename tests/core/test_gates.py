"""The gates CI enforces through the test command: lint, format, types, and the front's checks.

Each gate runs the real tool on the real tree; a red gate is a failing test, so
``pytest`` (the README's test command) fails CI on a lint, format, type or
TypeScript error just as on a broken behaviour.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LABEXTENSION = ROOT / "labextension"

PYTHON_GATES = {
    "ruff check": [sys.executable, "-m", "ruff", "check", "."],
    "ruff format": [sys.executable, "-m", "ruff", "format", "--check", "."],
    "mypy --strict": [sys.executable, "-m", "mypy"],
}
FRONT_GATES = {
    "tsc": ["run", "typecheck"],
    "eslint": ["run", "eslint:check"],
    "jest": ["run", "test", "--ci"],  # the front's unit tests (labextension/test/)
}


def run(command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, cwd=cwd, capture_output=True, text=True, timeout=600, check=False
    )


@pytest.mark.parametrize("gate", sorted(PYTHON_GATES))
def test_python_gate_is_green(gate: str) -> None:
    proc = run(PYTHON_GATES[gate], ROOT)
    assert proc.returncode == 0, f"{gate} failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-2000:]}"


@pytest.mark.parametrize("gate", sorted(FRONT_GATES))
def test_labextension_gate_is_green(gate: str) -> None:
    jlpm = shutil.which("jlpm")
    assert jlpm is not None, "jlpm comes with jupyterlab; install the project first"
    assert (LABEXTENSION / "node_modules").is_dir(), "run `pip install -e .` (it runs jlpm install)"
    proc = run([jlpm, *FRONT_GATES[gate]], LABEXTENSION)
    assert proc.returncode == 0, f"{gate} failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-2000:]}"
