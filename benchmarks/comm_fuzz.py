"""The comm fuzz against a real kernel: hostile sidebar messages by kind, and how fast it answers.

Runs the batches of ``tests/reliability/fuzz.py`` (the same seeded messages the
suite's ``test_comm_fuzz.py`` asserts) against one real ipykernel with loom
loaded and the fake Messages API, and measures per kind: how many messages got
an error notice, were ignored as documented or got their reply; the worst time
from a message to its answer; and, after the batch, a ``print(1)`` cell's time
to answer and a ``sessions`` round trip. Goal: ``print(1)`` within 1 s after
every batch (a figure for people; the suite only bounds stalls).

    python benchmarks/comm_fuzz.py                         # every message, prints the table
    python benchmarks/comm_fuzz.py --quick                 # the first 3 of each kind (CI)
    python benchmarks/comm_fuzz.py --json docs/comm_fuzz.json
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from kernel.sidebar_wire import hello, start_wire
from reliability.fuzz import SEED, Batch, BatchReport, CommFuzz, comm_batches, responder

from loom_jupyter.testing import FakeAnthropic

QUICK = 3


def run(batches: tuple[Batch, ...]) -> list[BatchReport]:
    """Every batch against one kernel on a notebook in a temporary sandbox."""
    with tempfile.TemporaryDirectory() as folder, FakeAnthropic(responder=responder) as fake:
        sandbox = Path(folder)
        notebook = sandbox / "a" / "b" / "work" / "nb.ipynb"
        notebook.parent.mkdir(parents=True)
        wire = start_wire(fake, notebook, sandbox / "config", approval="auto")
        try:
            fuzz = CommFuzz(wire, notebook, sandbox)
            fuzz.open(hello())
            return [fuzz.run(batch) for batch in batches]
        finally:
            wire.shutdown()


def row(report: BatchReport) -> dict[str, Any]:
    """One kind's line of the summary."""
    count = len(report.answers)
    notices, ignored = report.count("notice"), report.count("ignore")
    return {
        "kind": report.kind,
        "messages": count,
        "notice": notices,
        "ignored": ignored,
        "replied": count - notices - ignored,
        "worst_answer_s": round(report.worst_answer, 3),
        "print_1_s": round(report.print_seconds, 3),
        "sessions_s": round(report.sessions_seconds, 3),
        "checks_ok": _checks_ok(report),
        "problems": _problems(report),
    }


def _problems(report: BatchReport) -> list[str]:
    return [
        *report.unexpected,
        *report.late_replies,
        *([] if report.print_output == "1\n" else [f"print(1) printed {report.print_output!r}"]),
        *([] if report.integrity == "ok" else [f"integrity_check: {report.integrity}"]),
        *(f"written outside the notebook folder: {p}" for p in report.stray_files),
        *(f"junk archived as a prompt: {j}" for j in report.junk_archived),
        *(f"prompt not archived: {p}" for p in report.prompts_missing),
    ]


def _checks_ok(report: BatchReport) -> bool:
    return not _problems(report)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help=f"the first {QUICK} of each kind")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--json", type=Path, help="also write the summary here")
    args = parser.parse_args()
    batches = comm_batches(args.seed)
    if args.quick:
        batches = tuple(replace(b, probes=b.probes[:QUICK]) for b in batches)
    rows = [row(report) for report in run(batches)]
    head = (
        "kind",
        "messages",
        "notice",
        "ignored",
        "replied",
        "worst answer",
        "print(1)",
        "sessions",
        "checks",
    )
    print("Comm fuzz: hostile sidebar messages by kind (seconds)")
    print("{:22} {:>8} {:>6} {:>7} {:>7} {:>12} {:>8} {:>8} {:>6}".format(*head))
    for r in rows:
        print(
            f"{r['kind']:22} {r['messages']:>8} {r['notice']:>6} {r['ignored']:>7} "
            f"{r['replied']:>7} {r['worst_answer_s']:>12.3f} {r['print_1_s']:>8.3f} "
            f"{r['sessions_s']:>8.3f} {'ok' if r['checks_ok'] else 'FAIL':>6}"
        )
        for problem in r["problems"]:
            print(f"    {problem[:200]}")
    total = sum(r["messages"] for r in rows)
    print(f"{total} messages; worst print(1) {max(r['print_1_s'] for r in rows):.3f} s")
    if args.json:
        summary = {"seed": args.seed, "quick": args.quick, "messages": total, "kinds": rows}
        args.json.write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    return 0 if all(r["checks_ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
