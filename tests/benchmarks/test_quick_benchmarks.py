"""Every benchmark's ``--quick`` mode runs to the end and prints its table.

Timing goals are read from the printed tables by people (see each benchmark's
docstring); this only keeps the benchmarks working as the code changes.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        ("archive_bench.py", "journal modes: append_turn"),
        ("model_overhead.py", "AnthropicModel"),
        ("engine_bench.py", "Prompt-cache prefix stability"),
        ("tools_bench.py", "recall action"),
        ("cache_cost.py", "Prompt-cache cost per turn"),
        ("delegate_bench.py", "speed-up vs serial"),
        ("sidebar_bench.py", "delta-to-paint"),
        ("comm_fuzz.py", "Comm fuzz"),
        ("comm_path_bench.py", "where a round trip's time goes"),
        ("notebook_edit_bench.py", "diff painted"),
        ("rebuild_bench.py", "late variables vs Run All"),
        ("bridge_bench.py", "Bridge round trip"),
        ("recovery_tables.py", "Recovery per table"),
        ("telemetry_bench.py", "Telemetry per-turn cost"),
    ],
)
def test_quick_benchmark_prints_its_table(script: str, expected: str) -> None:
    proc = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), "--quick"],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert expected in proc.stdout
