"""Where the suite's time went: a per-folder and per-file summary of a pytest JUnit XML report.

Usage: python .ci/durations.py REPORT.xml [FILES]

.ci/run passes ``--junitxml`` to the README's test command (through PYTEST_ADDOPTS) and calls
this after the run, pass or fail. Times are each test's setup + call + teardown as pytest
reports them (a module-scoped kernel's start counts in the first test that needs it); with
pytest-xdist the lanes overlap, so the sum is more than the wall time. Standard library only.
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from dataclasses import dataclass, field


@dataclass
class Block:
    """Tests of one folder (or one file) and their time."""

    tests: int = 0
    failed: int = 0
    skipped: int = 0
    seconds: float = 0.0
    slowest: tuple[float, str] = (0.0, "")
    files: set[str] = field(default_factory=set)

    def add(self, name: str, seconds: float, outcome: str) -> None:
        self.tests += 1
        self.seconds += seconds
        self.failed += outcome == "failed"
        self.skipped += outcome == "skipped"
        self.slowest = max(self.slowest, (seconds, name))


def outcome(case: ET.Element) -> str:
    if case.find("failure") is not None or case.find("error") is not None:
        return "failed"
    return "skipped" if case.find("skipped") is not None else "passed"


def read(report: str) -> tuple[dict[str, Block], dict[str, Block]]:
    """Blocks by folder (``tests/kernel``) and by file (``tests/kernel/test_wire.py``)."""
    folders: dict[str, Block] = defaultdict(Block)
    files: dict[str, Block] = defaultdict(Block)
    for case in ET.parse(report).getroot().iter("testcase"):
        # classname: tests.kernel.test_wire (or tests.kernel.test_wire.TestClass); a file
        # that failed to collect has none, and its dotted path as the name
        parts = (case.get("classname") or case.get("name") or "").split(".")
        module = next((i for i, p in enumerate(parts) if p.startswith("test_")), len(parts) - 1)
        folder = "/".join(parts[:module]) or "(root)"
        path = "/".join(parts[: module + 1]) + ".py"
        seconds = float(case.get("time") or 0)
        name = f"{path}::{case.get('name', '?')}"
        state = outcome(case)
        folders[folder].add(name, seconds, state)
        folders[folder].files.add(path)
        files[path].add(name, seconds, state)
    return folders, files


def table(rows: list[list[str]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for n, row in enumerate(rows):
        cells = [
            c.ljust(w) if i == 0 or (i == len(row) - 1 and len(row) > 3) else c.rjust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def summary(report: str, top_files: int = 15) -> str:
    folders, files = read(report)
    total = sum(b.seconds for b in folders.values()) or 1.0
    rows = [["folder", "files", "tests", "failed", "skipped", "seconds", "share", "slowest test"]]
    for name, block in sorted(folders.items(), key=lambda kv: -kv[1].seconds):
        seconds, slow = block.slowest
        rows.append(
            [
                name,
                str(len(block.files)),
                str(block.tests),
                str(block.failed),
                str(block.skipped),
                f"{block.seconds:.1f}",
                f"{block.seconds / total:.0%}",
                f"{seconds:.1f} s {slow.split('::', 1)[-1][:80]}",
            ]
        )
    count = sum(b.tests for b in folders.values())
    rows.append(["total", str(len(files)), str(count), "", "", f"{total:.1f}", "", ""])
    slow_files = [["file", "tests", "seconds"]]
    for name, block in sorted(files.items(), key=lambda kv: -kv[1].seconds)[:top_files]:
        slow_files.append([name, str(block.tests), f"{block.seconds:.1f}"])
    return (
        "Test time by folder (setup + call + teardown, summed over the xdist lanes):\n"
        + table(rows)
        + f"\n\nThe {min(top_files, len(files))} slowest files:\n"
        + table(slow_files)
    )


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    print(summary(argv[1], int(argv[2]) if len(argv) == 3 else 15))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
