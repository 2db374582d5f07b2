"""A rebuild says what it runs (security review F6).

A real archive holds executions whose stored ``effects`` column says nothing (an archive
committed with a repository, or written by an older judge); each hides a side effect
behind a name. The rebuild judges each step from its code at replay time, shows the whole
code, and runs none of them without the person's consent.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

import pytest

from loom_jupyter.lineage import execution_record, plan_rebuild
from loom_jupyter.messages import ToolUseBlock
from loom_jupyter.settings import Settings
from loom_jupyter.tools.approval import ApprovalPolicy
from loom_jupyter.tools.base import ToolContext
from loom_jupyter.tools.local_kernel import LocalKernel
from loom_jupyter.tools.registry import default_registry

if TYPE_CHECKING:
    from pathlib import Path

    from loom_jupyter.archive import Archive
    from loom_jupyter.tools.approval import ApprovalRequest

HIDDEN = {
    "an import alias": "import os as o\no.system('touch {marker}')\ntotal = 1",
    "a from-import alias": "from os import system as tidy\ntidy('touch {marker}')\ntotal = 1",
    "a name bound to it": "import os\nsh = os.system\nsh('touch {marker}')\ntotal = 1",
    "getattr": "import os\ngetattr(os, 'sys' + 'tem')('touch {marker}')\ntotal = 1",
    "shutil": "import shutil as S\nS.copy('{marker}.src', '{marker}')\ntotal = 1",
    "built code": "exec(\"import os; os.system('touch {marker}')\")\ntotal = 1",
    "os.remove": "import os as o\no.remove('{marker}.keep')\ntotal = 1",
}


async def _archived(archive: Archive, code: str) -> None:
    """``code`` archived as a cell whose stored effects say it does nothing."""
    record = execution_record(
        code, source="cell", changed=["total"], namespace={"total": 1}, duration_s=0.1
    )
    await archive.record_execution(replace(record, effects=()))


@pytest.mark.attack(
    attack="An archived cell hides a side effect behind an alias (`o.system`, `from os import "
    "system as tidy`, `getattr(os, ...)`, `exec`); the rebuild trusted the stored effects "
    "column and a name heuristic, and replayed it",
    stopped_by="Each step is judged from its code at replay time, seeing through aliases, "
    "getattr, shutil, os.* and built code; such steps run only with --yes",
    ref="F6",
)
@pytest.mark.parametrize("shape", sorted(HIDDEN))
async def test_a_hidden_side_effect_needs_consent(
    archive: Archive, tmp_path: Path, shape: str
) -> None:
    marker = tmp_path / "MARK"
    await _archived(archive, HIDDEN[shape].format(marker=marker))
    kernel = LocalKernel()
    ctx = ToolContext(notebook_dir=tmp_path, settings=Settings(), kernel=kernel, executions=archive)
    call = ToolUseBlock("t1", "rebuild_variables", {"names": ["total"]})

    plan = plan_rebuild(await archive.executions(), ["total"])
    output = await default_registry().run(call, ctx, policy=ApprovalPolicy("auto"))

    assert plan.consent_steps, plan.steps[0].effects
    assert output.is_error
    assert "Nothing was run" in output.text_content
    assert "total" not in kernel.namespace
    assert not marker.exists()


@pytest.mark.attack(
    attack="The rebuild's approval showed only the variables' names (and the plan only each "
    "step's first line), so a harmless first line hid the rest",
    stopped_by="The approval and the plan show every step's whole code and its effects",
    ref="F6",
)
async def test_the_approval_shows_every_step_whole(archive: Archive, tmp_path: Path) -> None:
    first = "base = 3"
    second = "area = base * 2  # harmless first line\nprint('second line, shown too')"
    for code, names, values in ((first, ["base"], {"base": 3}), (second, ["area"], {"area": 6})):
        record = execution_record(
            code, source="cell", changed=names, namespace=values, duration_s=0.1
        )
        await archive.record_execution(record)
    asked: list[ApprovalRequest] = []

    async def approver(request: ApprovalRequest) -> Any:
        asked.append(request)
        return "no"

    kernel = LocalKernel()
    ctx = ToolContext(notebook_dir=tmp_path, settings=Settings(), kernel=kernel, executions=archive)
    call = ToolUseBlock("t1", "rebuild_variables", {"names": ["area"]})

    output = await default_registry().run(
        call, ctx, policy=ApprovalPolicy("ask", approver=approver)
    )

    [request] = asked
    assert "base = 3" in request.detail
    assert "print('second line, shown too')" in request.detail
    assert "2 step(s)" in request.summary
    assert output.is_error
    assert "area" not in kernel.namespace
