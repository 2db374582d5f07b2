"""A value whose ``repr`` never returns, in a real kernel (security review R10).

Unfixed, ``inspect_variables`` on such a value hung the ``%cowork`` turn and the person's
next cell did not run until a kernel interrupt. Now the call ends at the describing time
limit with an error that names the value and its ``repr``; the turn ends and the next cell
answers at once. The person's own cell that puts such a value in a list ends too (Loom's
``post_run_cell`` fingerprints what a cell set). Timeouts are guards against a hang only.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from loom_jupyter.tools.namespace_reader import DescribeLimits

if TYPE_CHECKING:
    from collections.abc import Callable

    from loom_jupyter.testing import FakeAnthropic

    from .conftest import Kernel

pytestmark = pytest.mark.kernel

SLOW = """\
class Slow:
    def __repr__(self):
        import time
        time.sleep(10**6)

s = Slow()
held = [s]
ok = [1, 2]
"""


def _tool_use(tool: str, **tool_input: Any) -> dict[str, Any]:
    return {"content": [{"type": "tool_use", "name": tool, "input": tool_input}]}


def _tool_results(fake: FakeAnthropic) -> list[str]:
    messages = fake.message_requests[-1].body["messages"]
    return [
        json.dumps(block)
        for message in messages
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]


@pytest.mark.attack(
    attack=(
        "The model calls `inspect_variables` (a read tool: it never asks) on a value whose "
        "`repr` sleeps forever: the turn hangs and the person's next cell never runs"
    ),
    stopped_by=(
        "The kernel bridge describes on a worker thread and holds the main thread at most "
        '10 s: the call ends with "describing `s` took longer than 10 s: its repr did not '
        'finish", the turn ends, the next cell runs; a listing shows such a value by its type'
    ),
    ref="R10",
)
@pytest.mark.attack(
    attack=(
        "The person's own cell keeps such a value in a list (`held = [s]`): Loom's "
        "`post_run_cell` hook fingerprints what the cell set, calls the `repr`, and the cell "
        "never ends"
    ),
    stopped_by=(
        "The hook reads shapes and fingerprints on a worker thread for at most 3 s, then "
        "records the cell with names and types only"
    ),
    ref="R10",
)
def test_a_repr_that_sleeps_forever_ends_the_call_and_the_next_cell_runs(
    start_kernel: Callable[..., Kernel], fake: FakeAnthropic
) -> None:
    kernel = start_kernel()
    assert kernel.run("%load_ext loom_jupyter").status == "ok"
    defined = kernel.run(SLOW)  # Loom's post_run_cell fingerprints `held`: bounded too
    assert defined.status == "ok", defined.text()

    fake.add(
        _tool_use("inspect_variables", name="s"),
        _tool_use("inspect_variables"),
        "`s` cannot be shown.",
    )
    turn = kernel.run("%cowork what is in s?")
    assert turn.status == "ok", turn.text()
    described, listed = _tool_results(fake)
    seconds = f"{DescribeLimits().seconds:g}"
    assert '"is_error": true' in described
    assert f"describing `s` took longer than {seconds} s: its repr did not finish" in described
    assert "the kernel is free" in described
    assert '"is_error": true' not in listed
    rows = json.loads(listed)["content"][0]["text"].splitlines()
    row = {line.split()[0]: line for line in rows[1:]}
    assert row["s"].endswith("(not shown: its repr did not finish when tried earlier)")
    preview = f"{DescribeLimits().preview_seconds:g}"
    assert row["held"].endswith(f"(not shown: its repr did not finish within {preview} s)")
    assert row["ok"].endswith("[1, 2]")

    answer = kernel.run("print(6*7)")
    assert answer.status == "ok"
    assert answer.stdout.strip() == "42"
