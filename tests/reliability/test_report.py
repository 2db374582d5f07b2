"""docs/reliability.md is exactly what the generator renders from the suite's tables."""

from __future__ import annotations

from .report import PAGE, render


def test_the_reliability_page_is_current() -> None:
    assert PAGE.is_file(), "run: python -m tests.reliability.report"
    assert PAGE.read_text(encoding="utf-8") == render(), (
        "docs/reliability.md is stale: run `python -m tests.reliability.report` and commit it"
    )
