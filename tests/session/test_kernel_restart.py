"""A kernel restart is part of memory: variables made before it are gone, not live."""

from __future__ import annotations

from typing import TYPE_CHECKING

from loom_jupyter.models.scripted import ScriptedModel, text, tool_call

from .conftest import OpenSession, collect

if TYPE_CHECKING:
    from loom_jupyter.archive import Archive
    from loom_jupyter.models.base import ModelRequest
    from loom_jupyter.tools.local_kernel import LocalKernel


def state_of(request: ModelRequest) -> str:
    return request.messages[-1].text


async def test_a_new_kernel_says_the_kernel_restarted_and_lists_variables_as_gone(
    open_session: OpenSession, archive: Archive, kernel: LocalKernel
) -> None:
    before = await open_session(
        ScriptedModel([tool_call("run_python", {"code": "sales_total = 41 + 1"}), text("Set.")]),
        owner="host:100:kernel-a",
    )
    await collect(before, "set sales_total")
    assert [v.name for v in before.state.variables] == ["sales_total"]
    assert before.session_id is not None
    written = await archive.get_turns(before.session_id)
    assert {t.kernel_session for t in written} == {"host:100:kernel-a"}  # every turn says so
    await before.close()
    del kernel.namespace["sales_total"]  # the restarted kernel's namespace is empty

    model = ScriptedModel(
        [
            text("It is gone."),
            tool_call("run_python", {"code": "sales_total = 4300"}),
            text("Back."),
        ]
    )
    after = await open_session(model, owner="host:200:kernel-b")
    assert after.state.kernel_losses[-1].cause == "restart"
    assert "the kernel restarted" in after.state_event().state_yaml  # what %cowork status shows
    await collect(after, "is sales_total still there?")
    first = state_of(model.requests[0])
    assert "the kernel restarted" in first
    assert "variables_gone:\n- 'sales_total: int (turn 3)'" in first
    assert "variables:\n- sales_total" not in first
    await collect(after, "make it again")
    live, gone = after.state.live_and_gone()
    assert [v.name for v in live] == ["sales_total"]
    assert gone == []


async def test_the_same_kernel_resuming_its_session_loses_nothing(
    open_session: OpenSession,
) -> None:
    first = await open_session(
        ScriptedModel([tool_call("run_python", {"code": "kept = 1"}), text("Ok.")]),
        owner="host:100:kernel-a",
    )
    await collect(first, "set kept")
    await first.close()
    again = await open_session(ScriptedModel([text("hi")]), owner="host:100:kernel-a")
    assert again.state.kernel_losses == ()
    assert [v.name for v in again.state.live_and_gone()[0]] == ["kept"]


async def test_a_name_re_created_outside_the_conversation_is_not_gone_and_each_request_looks(
    open_session: OpenSession, kernel: LocalKernel
) -> None:
    """Issue 30: gone means absent from the namespace when the request is built."""
    code = "prices = [1, 2, 3]\nweights = [3, 2, 1]"
    before = await open_session(
        ScriptedModel([tool_call("run_python", {"code": code}), text("Set.")]),
        owner="host:100:kernel-a",
    )
    await collect(before, "make prices and weights")
    await before.close()
    kernel.namespace.clear()  # a restart
    kernel.namespace["prices"] = [1, 2, 3]  # the person's data cell, run before Loom loaded

    model = ScriptedModel([text("Only weights is gone."), text("Now both are.")])
    after = await open_session(model, owner="host:200:kernel-b")
    assert after.state.recreated == ("prices",)  # read at load
    await collect(after, "what is gone?")
    first = state_of(model.requests[0])
    assert "variables_gone:\n- 'weights: list" in first
    gone = first.split("variables_gone:", 1)[1].split("variables_recreated", 1)[0]
    assert "prices: list" not in gone
    assert "variables_recreated:\n- 'prices: list" in first
    assert "re-created in this kernel by code outside the conversation" in first

    del kernel.namespace["prices"]  # gone now: the next request says so, not the load's word
    await collect(after, "and now?")
    second = state_of(model.requests[1])
    assert "variables_recreated" not in second
    gone = second.split("variables_gone:", 1)[1]
    assert "prices: list" in gone
    assert "weights: list" in gone
