"""The sidebar's ``origin`` from a traced provenance: names checked, code and chain capped."""

from __future__ import annotations

import pytest

from loom_jupyter.errors import LoomError
from loom_jupyter.host.services.origins import check_name, origin
from loom_jupyter.host.wire.protocol import OriginStep
from loom_jupyter.lineage import ExecutionRecord, trace
from loom_jupyter.tools.rebuild import SHOWN_LINES, SHOWN_STEPS


def record(n: int, code: str, reads: tuple[str, ...], sets: tuple[str, ...]) -> ExecutionRecord:
    return ExecutionRecord(
        id=n,
        source="cell",
        code=code,
        reads=reads,
        sets=sets,
        duration_s=0.5,
        execution_count=n,
        created_at=f"2026-11-24T08:30:{n:02d}.123456+00:00",
    )


def test_a_long_chain_and_long_code_are_capped_and_counted() -> None:
    chain = [record(1, "v1 = 0", (), ("v1",))]
    chain += [record(n, f"v{n} = v{n - 1} + 1", (f"v{n - 1}",), (f"v{n}",)) for n in range(2, 21)]
    body = "\n".join(f"line_{i} = {'x' * 200}" for i in range(9))
    chain.append(record(21, f"total = v20\n{body}", ("v20",), ("total",)))
    found = origin("total", trace(chain, "total"))
    assert (found.found, found.setter, found.when) == (True, "cell [21]", "2026-11-24 08:30:21 UTC")
    assert found.code.splitlines()[0] == "total = v20"
    assert len(found.code.splitlines()) == SHOWN_LINES
    assert found.more_lines == 10 - SHOWN_LINES
    assert max(len(line) for line in found.code.splitlines()) == 160
    assert found.steps[:2] == (
        OriginStep("cell [1]", "v1 = 0"),
        OriginStep("cell [2]", "v2 = v1 + 1"),
    )
    assert len(found.steps) == SHOWN_STEPS
    assert found.more_steps == 20 - SHOWN_STEPS
    assert found.estimated_s == pytest.approx(21 * 0.5)


def test_nothing_found_says_why() -> None:
    missing = origin("gone", trace([record(1, "x = 1", (), ("x",))], "gone"))
    assert (missing.found, missing.why, missing.steps) == (
        False,
        "no archived execution sets it",
        (),
    )


def test_names_are_identifiers_dotted_ones_traced_by_their_variable() -> None:
    assert check_name("df") == "df"
    assert check_name("df.columns") == "df"
    for bad in ("df.head()", "x + 1", "", "a..b", "1x", "x" * 201):
        with pytest.raises(LoomError, match="no variable name"):
            check_name(bad)
