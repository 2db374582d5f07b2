"""The approval policy: ask (answers yes/no/always; nobody to ask), auto, read-only."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import pytest

from loom_jupyter.errors import ApprovalDeniedError, LoomConfigError
from loom_jupyter.messages import ToolUseBlock
from loom_jupyter.settings import Settings
from loom_jupyter.tools.approval import ApprovalAnswer, ApprovalPolicy, ApprovalRequest
from loom_jupyter.tools.registry import default_registry

if TYPE_CHECKING:
    from pathlib import Path

    from loom_jupyter.tools.base import Tool, ToolContext


class Person:
    """An approver that answers from a script and remembers what it was shown."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.seen: list[ApprovalRequest] = []

    async def __call__(self, request: ApprovalRequest) -> ApprovalAnswer:
        self.seen.append(request)
        # Scripts may hold invalid answers on purpose; the policy must cope with them.
        return cast("ApprovalAnswer", self.answers.pop(0))


def tool(name: str) -> Tool:
    found = default_registry().get(name)
    assert found is not None
    return found


RUN = ToolUseBlock("c1", "run_python", {"code": "x = 1\nprint(x)"})
CALLS = {
    "run_python": RUN,
    "write_file": ToolUseBlock("c2", "write_file", {"path": "out.txt", "content": "x"}),
    "edit_file": ToolUseBlock(
        "c3", "edit_file", {"path": "out.txt", "old_string": "a", "new_string": "b"}
    ),
    "shell": ToolUseBlock("c4", "shell", {"command": "ls"}),
    "insert_cell": ToolUseBlock("c5", "insert_cell", {"source": "1 + 1"}),
}
"""A valid call of each write tool (the registry checks inputs before approval does)."""


async def test_read_tools_never_ask() -> None:
    person = Person()
    for mode in ("ask", "read-only", "auto"):
        policy = ApprovalPolicy(mode, approver=person)
        decision = await policy.check(
            tool("read_file"), ToolUseBlock("c", "read_file", {"path": "a"})
        )
        assert decision.allowed
    assert person.seen == []


async def test_ask_yes_runs_and_shows_the_code() -> None:
    person = Person("yes")
    decision = await ApprovalPolicy("ask", approver=person).check(tool("run_python"), RUN)
    assert decision.allowed
    assert decision.asked
    [request] = person.seen
    assert request.tool_name == "run_python"
    assert request.detail == "x = 1\nprint(x)"
    assert request.summary == "run Python code (2 lines)"
    assert request.call_id == "c1"
    assert request.input == {"code": "x = 1\nprint(x)"}


async def test_ask_no_is_a_denial_the_model_reads() -> None:
    person = Person("no")
    decision = await ApprovalPolicy("ask", approver=person).check(tool("run_python"), RUN)
    assert not decision.allowed
    output = decision.to_output()
    assert output.is_error
    assert "declined" in output.text_content
    assert isinstance(decision.error(), ApprovalDeniedError)


async def test_always_is_remembered_for_that_tool_only() -> None:
    person = Person("always", "no")
    policy = ApprovalPolicy("ask", approver=person)
    assert (await policy.check(tool("run_python"), RUN)).allowed
    assert (await policy.check(tool("run_python"), RUN)).allowed
    assert len(person.seen) == 1
    assert policy.always_allowed == frozenset({"run_python"})
    shell = ToolUseBlock("c2", "shell", {"command": "ls"})
    assert not (await policy.check(tool("shell"), shell)).allowed
    assert len(person.seen) == 2
    policy.reset()
    assert policy.always_allowed == frozenset()


async def test_allow_and_deny_spellings_are_accepted() -> None:
    policy = ApprovalPolicy("ask", approver=Person("allow", "deny"))
    assert (await policy.check(tool("run_python"), RUN)).allowed
    assert not (await policy.check(tool("run_python"), RUN)).allowed


async def test_ask_without_an_approver_denies_with_a_way_out() -> None:
    decision = await ApprovalPolicy("ask").check(
        tool("shell"), ToolUseBlock("c", "shell", {"command": "ls"})
    )
    assert not decision.allowed
    assert "nobody to ask" in decision.reason
    assert "%cowork approval auto" in decision.reason


async def test_an_approver_that_fails_denies_naming_the_error() -> None:
    async def broken(request: ApprovalRequest) -> str:
        raise EOFError("stdin is closed")

    decision = await ApprovalPolicy("ask", approver=broken).check(tool("run_python"), RUN)  # type: ignore[arg-type]
    assert not decision.allowed
    assert "EOFError: stdin is closed" in decision.reason


async def test_an_unexpected_answer_denies() -> None:
    decision = await ApprovalPolicy("ask", approver=Person("maybe")).check(tool("run_python"), RUN)
    assert not decision.allowed
    assert "'maybe'" in decision.reason


async def test_auto_allows_write_tools_without_asking() -> None:
    person = Person()
    decision = await ApprovalPolicy("auto", approver=person).check(tool("shell"), CALLS["shell"])
    assert decision.allowed
    assert person.seen == []


async def test_read_only_denies_write_tools_naming_the_switch() -> None:
    person = Person()
    policy = ApprovalPolicy("read-only", approver=person)
    for name, call in CALLS.items():
        decision = await policy.check(tool(name), call)
        assert not decision.allowed
        assert "read-only" in decision.reason
        assert "%cowork approval ask" in decision.reason
    assert person.seen == []


def test_mode_from_settings_and_env() -> None:
    assert ApprovalPolicy.from_settings(Settings()).mode == "ask"
    settings = Settings.load(None, env={"LOOM_APPROVAL": "read-only"}, user_config=None)
    assert ApprovalPolicy.from_settings(settings).mode == "read-only"


def test_a_bad_mode_is_refused() -> None:
    policy = ApprovalPolicy()
    policy.mode = "auto"
    assert policy.mode == "auto"
    with pytest.raises(LoomConfigError, match="ask, auto, read-only"):
        policy.mode = "sometimes"


async def test_edit_approval_shows_a_diff(notebook_dir: Path, ctx: ToolContext) -> None:
    (notebook_dir / "model.py").write_text("alpha = 0.1\nbeta = 2\n")
    person = Person("yes")
    call = ToolUseBlock(
        "e",
        "edit_file",
        {"path": "model.py", "old_string": "alpha = 0.1", "new_string": "alpha = 0.5"},
    )
    await ApprovalPolicy("ask", approver=person).check(tool("edit_file"), call, ctx)
    detail = person.seen[0].detail
    assert "--- a/model.py" in detail
    assert "-alpha = 0.1" in detail
    assert "+alpha = 0.5" in detail


async def test_write_approval_shows_new_content_or_a_diff(
    notebook_dir: Path, ctx: ToolContext
) -> None:
    person = Person("yes", "yes")
    policy = ApprovalPolicy("ask", approver=person)
    new = ToolUseBlock("w", "write_file", {"path": "n.txt", "content": "hello\n"})
    await policy.check(tool("write_file"), new, ctx)
    assert person.seen[0].summary.startswith("create n.txt")
    assert person.seen[0].detail == "hello\n"
    (notebook_dir / "n.txt").write_text("old\n")
    await policy.check(tool("write_file"), new, ctx)
    assert "-old" in person.seen[1].detail
    assert "+hello" in person.seen[1].detail


async def test_a_request_that_cannot_be_described_falls_back_to_the_raw_input(
    ctx: ToolContext,
) -> None:
    person = Person("no")
    call = ToolUseBlock(
        "w", "edit_file", {"path": "missing.txt", "old_string": "a", "new_string": "b"}
    )
    await ApprovalPolicy("ask", approver=person).check(tool("edit_file"), call, ctx)
    assert '"path": "missing.txt"' in person.seen[0].detail  # no file to diff: the raw input


async def test_a_path_outside_the_folder_is_refused_before_anyone_is_asked(
    ctx: ToolContext,
) -> None:
    """The rail cannot place it: the call is refused with why (fail closed), never asked."""
    person = Person("yes")
    call = ToolUseBlock("w", "write_file", {"path": "../../etc/x", "content": "x"})
    decision = await ApprovalPolicy("ask", approver=person).check(tool("write_file"), call, ctx)
    assert not decision.allowed
    assert "could not tell what it would touch" in decision.reason
    assert person.seen == []


def test_will_ask_matches_what_check_does() -> None:
    policy = ApprovalPolicy("ask", approver=Person())
    assert policy.will_ask(tool("shell"))
    assert not policy.will_ask(tool("read_file"))
    policy.allow_always("shell")
    assert not policy.will_ask(tool("shell"))
    assert not ApprovalPolicy("ask").will_ask(tool("run_python"))  # nobody to ask: denied instead
    assert not ApprovalPolicy("auto", approver=Person()).will_ask(tool("run_python"))
