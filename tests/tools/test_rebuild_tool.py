"""rebuild_variables on a LocalKernel: plan, run, check; side effects are refused."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import pytest

from loom_jupyter.lineage import execution_record, fingerprint

if TYPE_CHECKING:
    from loom_jupyter.lineage import ExecutionRecord
    from loom_jupyter.tools.base import ToolContext
    from loom_jupyter.tools.local_kernel import LocalKernel

    from .conftest import Caller


class Executions:
    """An ExecutionReader over a list."""

    def __init__(self, records: list[ExecutionRecord]) -> None:
        self.records = records

    async def executions(self, limit: int = 5_000) -> list[ExecutionRecord]:
        return self.records[-limit:]


def _records(*cells: str) -> list[ExecutionRecord]:
    """Records as the kernel would make them, running each cell in a scratch namespace."""
    ns: dict[str, object] = {}
    records = []
    for n, code in enumerate(cells, 1):
        before = set(ns)
        exec(code, ns)
        changed = [k for k in ns if k not in before and k != "__builtins__"]
        record = execution_record(
            code, source="cell", changed=changed, namespace=ns, duration_s=0.5, execution_count=n
        )
        records.append(replace(record, id=n))
    return records


@pytest.fixture
def reader(ctx: ToolContext) -> Executions:
    executions = Executions([])
    object.__setattr__(ctx, "executions", executions)
    return executions


async def test_it_reruns_only_the_slice_the_names_need(
    call: Caller, kernel: LocalKernel, reader: Executions
) -> None:
    reader.records = _records("a = 2", "unrelated = 99", "b = a * 3", "b += 1")
    output = await call("rebuild_variables", names=["b"])
    assert not output.is_error, output.text_content
    assert kernel.namespace["b"] == 7
    assert "unrelated" not in kernel.namespace
    assert "a = 2" in output.text_content
    assert "unrelated" not in output.text_content
    assert "b: present, same fingerprint as recorded" in output.text_content
    assert reader.records[-1].fingerprints["b"] == fingerprint(7)


async def test_a_value_that_comes_back_different_fails_the_check(
    call: Caller, kernel: LocalKernel, reader: Executions
) -> None:
    (made,) = _records("drawn = 4")
    reader.records = [replace(made, fingerprints={"drawn": fingerprint(5)})]  # was 5 then
    output = await call("rebuild_variables", names=["drawn"])
    assert output.is_error
    assert kernel.namespace["drawn"] == 4
    assert "drawn: present, but its fingerprint differs from the record" in output.text_content


async def test_inspect_variables_says_where_a_variable_came_from(
    call: Caller, kernel: LocalKernel, reader: Executions
) -> None:
    reader.records = _records("import math", "base = 3", "noise = 1", "area = math.pi * base ** 2")
    await kernel.run_code("import math\nbase = 3\narea = math.pi * base ** 2")
    text = (await call("inspect_variables", name="area")).text_content
    assert "Provenance of area: last set by cell [4]" in text
    assert "    area = math.pi * base ** 2" in text
    assert "depends on 2 earlier execution(s): cell [1] `import math`; cell [2] `base = 3`." in text
    assert "noise" not in text
    await kernel.run_code("stray = 1")
    assert (
        "Provenance of stray: no archived execution sets it."
        in (await call("inspect_variables", name="stray")).text_content
    )


def test_it_asks_as_a_write_tool() -> None:
    from loom_jupyter.tools.rebuild import RebuildVariables

    assert RebuildVariables.access == "write"
