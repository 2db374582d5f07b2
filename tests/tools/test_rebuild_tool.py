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
    assert "b: present" in output.text_content
    assert reader.records[-1].fingerprints["b"] == fingerprint(7)


async def test_names_it_cannot_make_are_said_with_the_reason(
    call: Caller, reader: Executions
) -> None:
    reader.records = _records("a = 2")
    output = await call("rebuild_variables", names=["nowhere"])
    assert output.is_error
    assert "nowhere: no archived execution sets it" in output.text_content


async def test_steps_with_side_effects_are_not_run(
    call: Caller, kernel: LocalKernel, reader: Executions
) -> None:
    record = replace(_records("c = 5")[0], effects=("writes files",))
    reader.records = [record]
    output = await call("rebuild_variables", names=["c"])
    assert output.is_error
    assert "%cowork rebuild c --yes" in output.text_content
    assert "c" not in kernel.namespace


async def test_without_an_execution_archive_it_says_so(call: Caller) -> None:
    output = await call("rebuild_variables", names=["x"])
    assert output.is_error
    assert "No execution archive" in output.text_content


def test_it_asks_as_a_write_tool() -> None:
    from loom_jupyter.tools.rebuild import RebuildVariables

    assert RebuildVariables.access == "write"
