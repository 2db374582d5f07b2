"""The registry: stable specs, and every tool problem becomes an is_error result."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import pytest

from loom_jupyter.errors import ToolError
from loom_jupyter.messages import ToolSpec, ToolUseBlock
from loom_jupyter.tools.base import ToolAccess, ToolContext, ToolOutput, TypedTool
from loom_jupyter.tools.registry import ToolRegistry, default_registry
from loom_jupyter.tools.schema import ToolInput, input_schema

if TYPE_CHECKING:
    from collections.abc import Mapping

    from loom_jupyter.tools.approval import ApprovalRequest

    from .conftest import Caller

PINNED = (
    "conversation_recall",
    "inspect_variables",
    "read_notebook",
    "read_file",
    "list_files",
    "search_files",
    "load_skill",
    "run_python",
    "insert_cell",
    "edit_cell",
    "run_cell",
    "move_cell",
    "delete_cell",
    "write_file",
    "edit_file",
    "shell",
    "delegate_task",
    "rebuild_variables",
)


@dataclass(frozen=True, kw_only=True)
class EchoInput(ToolInput):
    text: str
    mode: Literal["ok", "tool_error", "crash"] | None = None
    count: int | None = None


def _echo(text: str, mode: str | None, count: int | None) -> ToolOutput:
    if mode == "tool_error":
        raise ToolError("the echo chamber is closed; try again later")
    if mode == "crash":
        return {"not": "an output"}["missing"]  # type: ignore[return-value]
    return ToolOutput.text(text * (count if count is not None else 1))


class Echo(TypedTool[EchoInput]):
    """A tiny tool whose behaviour is chosen by its input (typed: ``EchoInput``)."""

    input_type = EchoInput
    access: ClassVar[ToolAccess] = "read"
    spec: ClassVar[ToolSpec] = ToolSpec(
        "echo", "Echo text, or fail on purpose.", input_schema(EchoInput)
    )
    received: ClassVar[list[EchoInput]] = []

    async def run(self, args: EchoInput, ctx: ToolContext) -> ToolOutput:
        self.received.append(args)
        return _echo(args.text, args.mode, args.count)


class RawEcho:
    """The same tool with an outside schema (as an MCP server's tools have): a mapping."""

    access: ClassVar[ToolAccess] = "read"
    spec: ClassVar[ToolSpec] = ToolSpec(
        "echo",
        "Echo text, or fail on purpose.",
        {
            "type": "object",
            "properties": {
                "text": {"type": "string"},
                "mode": {"type": "string", "enum": ["ok", "tool_error", "crash"]},
                "count": {"type": "integer"},
            },
            "required": ["text"],
            "additionalProperties": False,
        },
    )

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        return _echo(args["text"], args.get("mode"), args.get("count"))


@pytest.fixture(params=["typed", "raw"])
def echo_call(ctx: ToolContext, request: pytest.FixtureRequest) -> Caller:
    """The registry checking a typed input (pydantic) and an outside schema, in one wording."""
    from .conftest import Caller

    tool = Echo() if request.param == "typed" else RawEcho()
    return Caller(ToolRegistry([tool]), ctx)


def test_default_registry_has_the_pinned_tools_in_a_stable_order() -> None:
    first, second = default_registry(), default_registry()
    assert first.names() == PINNED
    as_json = [json.dumps(dataclasses.asdict(s), sort_keys=False) for s in first.specs()]
    assert as_json == [json.dumps(dataclasses.asdict(s), sort_keys=False) for s in second.specs()]
    assert first.access("read_file") == "read"
    assert first.access("shell") == "write"
    assert first.access("nope") is None


def test_pinned_inputs_of_recall_and_run_python() -> None:
    registry = default_registry()
    recall = registry.get("conversation_recall")
    run = registry.get("run_python")
    assert recall is not None
    assert run is not None
    props = recall.spec.input_schema["properties"]
    assert props["action"]["enum"] == ["search", "range", "tool_calls", "summary"]
    assert {"query", "start_turn", "end_turn", "tool_name", "limit"} <= set(props)
    assert run.spec.input_schema["required"] == ["code"]
    assert set(run.spec.input_schema["properties"]) == {"code"}


def test_pinned_inputs_of_the_notebook_tools() -> None:
    """DESIGN §9: the names and inputs outside checks drive."""
    registry = default_registry()
    expected = {
        "insert_cell": ({"source"}, {"source", "cell_type", "after_cell_id", "run"}),
        "edit_cell": ({"cell_id", "source"}, {"cell_id", "source"}),
        "delete_cell": ({"cell_id"}, {"cell_id"}),
        "move_cell": ({"cell_id", "after_cell_id"}, {"cell_id", "after_cell_id"}),
        "run_cell": ({"cell_id"}, {"cell_id"}),
    }
    for name, (required, properties) in expected.items():
        tool = registry.get(name)
        assert tool is not None, name
        assert tool.access == "write"
        assert set(tool.spec.input_schema["required"]) == required, name
        assert set(tool.spec.input_schema["properties"]) == properties, name


def test_a_duplicate_name_is_refused() -> None:
    with pytest.raises(ValueError, match="already registered"):
        ToolRegistry([Echo(), Echo()])


async def test_extra_tools_come_after_the_built_ins() -> None:
    registry = default_registry(extra=(Echo(),))
    assert registry.names()[-1] == "echo"
    assert "echo" in registry


async def test_unknown_tool_lists_the_available_ones(echo_call: Caller) -> None:
    out = await echo_call("frobnicate", text="x")
    assert out.is_error
    assert "Unknown tool 'frobnicate'" in out.text_content
    assert "echo" in out.text_content


async def test_missing_required_key_is_explained(echo_call: Caller) -> None:
    out = await echo_call("echo")
    assert out.is_error
    assert "missing required key 'text'" in out.text_content
    assert "call it again" in out.text_content


async def test_wrong_type_enum_and_unknown_key_are_explained(echo_call: Caller) -> None:
    out = await echo_call("echo", text=5, mode="loud", count="3", colour="red")
    assert out.is_error
    message = out.text_content
    assert "text must be a string, got an integer (5)" in message
    assert "mode must be one of 'ok', 'tool_error', 'crash'; got 'loud'" in message
    assert "count must be an integer, got a string ('3')" in message
    assert "unknown key 'colour'" in message


async def test_booleans_are_not_integers(echo_call: Caller) -> None:
    out = await echo_call("echo", text="a", count=True)
    assert out.is_error
    assert "count must be an integer, got a boolean (true)" in out.text_content


async def test_tool_error_becomes_its_message(echo_call: Caller) -> None:
    out = await echo_call("echo", text="a", mode="tool_error")
    assert out.is_error
    assert out.text_content == "the echo chamber is closed; try again later"


async def test_unexpected_exception_names_type_and_message_without_traceback(
    echo_call: Caller,
) -> None:
    out = await echo_call("echo", text="a", mode="crash")
    assert out.is_error
    assert "echo failed unexpectedly: KeyError: 'missing'" in out.text_content
    assert "Traceback" not in out.text_content


async def test_long_output_is_cut_to_head_and_tail(echo_call: Caller) -> None:
    echo_call.ctx = dataclasses.replace(
        echo_call.ctx, settings=echo_call.ctx.settings.replace(tool_output_max_chars=1000)
    )
    out = await echo_call("echo", text="0123456789", count=1000)
    text = out.text_content
    assert len(text) <= 1000
    assert text.startswith("0123456789")
    assert text.rstrip().endswith("789")
    assert "characters cut" in text
    assert "of 10,000 characters" in text


async def test_secret_env_values_are_redacted(
    echo_call: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = "sk-ant-test-abcdefghijklmnop"
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    out = await echo_call("echo", text=f"the key is {key}!")
    assert key not in out.text_content
    assert "the key is [REDACTED]!" in out.text_content


async def test_run_with_a_policy_denies_before_running(ctx: ToolContext, notebook_dir: Any) -> None:
    from loom_jupyter.tools.approval import ApprovalPolicy

    registry = default_registry()
    policy = ApprovalPolicy("read-only")
    call = ToolUseBlock("t1", "write_file", {"path": "a.txt", "content": "x"})
    out = await registry.run(call, ctx, policy=policy)
    assert out.is_error
    assert "read-only" in out.text_content
    assert not (notebook_dir / "a.txt").exists()
    read = await registry.run(ToolUseBlock("t2", "list_files", {}), ctx, policy=policy)
    assert not read.is_error


def test_check_call_returns_the_tool_for_a_valid_call() -> None:
    registry = ToolRegistry([Echo()])
    checked = registry.check_call(ToolUseBlock("t", "echo", {"text": "hi"}))
    assert isinstance(checked, Echo)


async def test_null_for_an_optional_key_means_left_out(echo_call: Caller) -> None:
    out = await echo_call("echo", text="hi", mode=None, count=None)
    assert not out.is_error
    assert out.text_content == "hi"
    required = await echo_call("echo", text=None)
    assert required.is_error
    assert "text must be a string, got null" in required.text_content


async def test_the_handler_receives_the_typed_value(ctx: ToolContext) -> None:
    from .conftest import Caller

    Echo.received.clear()
    out = await Caller(ToolRegistry([Echo()]), ctx)("echo", text="ab", count=2, mode=None)
    assert out.text_content == "abab"
    assert Echo.received == [EchoInput(text="ab", count=2)]


class DescribedEcho(Echo):
    """A write tool whose approval request is built from the typed value."""

    access: ClassVar[ToolAccess] = "write"
    described: ClassVar[list[object]] = []

    def approval_request(self, args: EchoInput, ctx: ToolContext | None) -> ApprovalRequest:
        from loom_jupyter.tools.approval import ApprovalRequest

        self.described.append(args)
        return ApprovalRequest("echo", f"echo {args.text!r}", args.text)


def test_the_approval_policy_describes_the_typed_value() -> None:
    from loom_jupyter.tools.approval import ApprovalPolicy

    call = ToolUseBlock("t", "echo", {"text": "hi", "count": None})
    request = ApprovalPolicy("ask").describe(DescribedEcho(), call)
    assert DescribedEcho.described == [EchoInput(text="hi")]
    assert (request.summary, request.detail, request.call_id) == ("echo 'hi'", "hi", "t")
    bad = ApprovalPolicy("ask").describe(DescribedEcho(), ToolUseBlock("u", "echo", {"text": 1}))
    assert bad.summary == "run echo"  # an input that does not fit: the raw JSON is shown
