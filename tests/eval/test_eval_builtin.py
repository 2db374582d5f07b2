"""`loom-jupyter eval builtin` end to end against the fake API that only echoes: most tasks
fail (the harness is what is tested), and every one ends with a result and a reason."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from loom_jupyter.eval.tasks import load_suite
from loom_jupyter.testing import FakeAnthropic

from .conftest import run_eval

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.kernel


@pytest.mark.timeout(900)  # 20 kernels, two at a time: minutes on a busy 2-core machine
def test_the_builtin_suite_runs_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "builtin.json"
    with FakeAnthropic() as echo:
        done = run_eval(echo, tmp_path, "builtin", "--jobs", "2", "--out", str(out))
    assert done.returncode == 1, done.stderr
    run = json.loads(out.read_text())
    names = [t.name for t in load_suite("builtin")]
    assert len(names) >= 18
    assert sorted(r["task"] for r in run["results"]) == sorted(names)
    for result in run["results"]:
        assert result["outcome"], result
        assert result["reason"], result
        assert result["outcome"] not in ("harness_error", "timeout"), result
    assert all(name in done.stdout for name in names)
