"""Typed tool inputs: each built-in tool's input is a frozen dataclass whose JSON schema
pydantic derives; the committed snapshot the sessions read is that derivation; the model's
input is checked into the dataclass, and a bad one is named field by field."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from loom_jupyter.buildtools.tool_schemas import input_types, render
from loom_jupyter.messages import ToolUseBlock
from loom_jupyter.orchestrator.judge import SUBMIT_VERDICT, VerdictInput
from loom_jupyter.orchestrator.plan import SUBMIT_PLAN, PlanInput
from loom_jupyter.tools.base import TypedTool
from loom_jupyter.tools.registry import default_registry
from loom_jupyter.tools.schema import SNAPSHOT_PATH, InvalidInput, ToolInput, derive_schema

if TYPE_CHECKING:
    from .conftest import Caller

REGISTRY = default_registry()
TYPED = [tool for tool in REGISTRY if isinstance(tool, TypedTool)]

# What every tool's schema held when it was written by hand (issue 31 item 4): the same
# properties, the same required keys.
FIELDS: dict[str, tuple[set[str], set[str]]] = {
    "conversation_recall": (
        {"action"},
        {
            "action",
            "query",
            "start_turn",
            "end_turn",
            "tool_name",
            "limit",
            "scope",
            "all_sessions",
            "task_id",
            "subtask",
        },
    ),
    "inspect_variables": (set(), {"name"}),
    "read_notebook": (set(), {"start_cell", "end_cell", "include_outputs", "history"}),
    "read_file": ({"path"}, {"path", "start_line", "end_line"}),
    "list_files": (set(), {"path", "pattern", "recursive", "include_hidden", "limit"}),
    "search_files": (
        {"pattern"},
        {"pattern", "path", "regex", "ignore_case", "glob", "limit"},
    ),
    "load_skill": ({"name"}, {"name"}),
    "run_python": ({"code"}, {"code"}),
    "insert_cell": ({"source"}, {"source", "cell_type", "after_cell_id", "run"}),
    "edit_cell": ({"cell_id", "source"}, {"cell_id", "source"}),
    "run_cell": ({"cell_id"}, {"cell_id"}),
    "move_cell": ({"cell_id", "after_cell_id"}, {"cell_id", "after_cell_id"}),
    "delete_cell": ({"cell_id"}, {"cell_id"}),
    "write_file": ({"path", "content"}, {"path", "content"}),
    "edit_file": (
        {"path", "old_string", "new_string"},
        {"path", "old_string", "new_string", "replace_all"},
    ),
    "shell": ({"command"}, {"command"}),
    "delegate_task": ({"goal"}, {"goal", "context", "wait"}),
    "rebuild_variables": ({"names"}, {"names"}),
}


def test_every_built_in_tool_has_a_typed_input() -> None:
    assert [tool.spec.name for tool in TYPED] == list(REGISTRY.names())
    for tool in TYPED:
        params = tool.input_type.__dataclass_params__  # type: ignore[attr-defined]
        assert params.frozen, tool.spec.name


def test_the_committed_snapshot_is_the_derivation() -> None:
    """Run ``python -m loom_jupyter.buildtools.tool_schemas`` when this fails."""
    assert SNAPSHOT_PATH.read_text(encoding="utf-8") == render()


@pytest.mark.parametrize("tool", TYPED, ids=lambda tool: tool.spec.name)
def test_each_schema_is_derived_from_its_dataclass(tool: TypedTool[object]) -> None:
    schema = tool.spec.input_schema  # type: ignore[attr-defined]
    assert json.dumps(schema) == json.dumps(derive_schema(tool.input_type))  # order too
    fields = dataclasses.fields(tool.input_type)  # type: ignore[arg-type]
    required = {
        f.name
        for f in fields
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    }
    assert list(schema["properties"]) == [f.name for f in fields]
    assert set(schema.get("required", ())) == required
    assert (set(schema.get("required", ())), set(schema["properties"])) == FIELDS[tool.spec.name]
    assert schema["additionalProperties"] is False
    assert "title" not in json.dumps(schema)  # nothing the model does not need


def test_the_forced_tools_schemas_are_derived_too() -> None:
    assert SUBMIT_PLAN.input_schema == derive_schema(PlanInput)
    assert SUBMIT_VERDICT.input_schema == derive_schema(VerdictInput)
    assert {PlanInput, VerdictInput} <= set(input_types())
    items = SUBMIT_PLAN.input_schema["properties"]["subtasks"]["items"]
    assert items["required"] == ["id", "description", "depends_on", "acceptance", "check"]
    assert items["properties"]["check"]["type"] == ["string", "null"]
    assert SUBMIT_VERDICT.input_schema["properties"]["verdict"]["enum"] == ["pass", "fail"]


def test_descriptions_bounds_defaults_and_enums_reach_the_model() -> None:
    spec = {tool.spec.name: tool.spec.input_schema for tool in REGISTRY}
    path = spec["read_file"]["properties"]["path"]
    assert path == {"description": "Path relative to the notebook's folder.", "type": "string"}
    assert spec["run_python"]["properties"]["code"]["description"] == "Python source to run."
    names = spec["rebuild_variables"]["properties"]["names"]
    assert names["description"] == "Variable names to rebuild."
    assert (names["minItems"], names["items"]["minLength"]) == (1, 1)
    limit = spec["list_files"]["properties"]["limit"]
    assert (limit["minimum"], limit["maximum"], limit["default"]) == (1, 5000, 200)
    history = spec["read_notebook"]["properties"]["history"]
    assert (history["minimum"], history["maximum"], history["default"]) == (0, 100, 10)
    cell_type = spec["insert_cell"]["properties"]["cell_type"]
    assert (cell_type["enum"], cell_type["default"]) == (["code", "markdown"], "code")
    assert spec["move_cell"]["properties"]["after_cell_id"]["type"] == ["string", "null"]
    assert spec["search_files"]["properties"]["pattern"]["maxLength"] == 2000
    # a key that may be left out shows its type alone (null is read as leaving it out)
    assert spec["read_file"]["properties"]["start_line"] == {"minimum": 1, "type": "integer"}


async def test_a_bad_input_is_an_error_result_naming_each_field(call: Caller) -> None:
    out = await call("read_notebook", start_cell=0, history="5", include_outputs="yes", at=1)
    assert out.is_error
    text = out.text_content
    assert text.startswith("Invalid input for read_notebook: ")
    assert "start_cell must be at least 1; got 0" in text
    assert "history must be an integer, got a string ('5')" in text
    assert "include_outputs must be a boolean (true or false), got a string ('yes')" in text
    assert "unknown key 'at' (known keys: start_cell, end_cell, include_outputs, history)" in text
    assert text.endswith("Check the tool's input schema and call it again.")


async def test_an_array_item_is_named_by_its_index(call: Caller) -> None:
    out = await call("rebuild_variables", names=["df", 3, ""])
    assert out.is_error
    assert "names[1] must be a string, got an integer (3)" in out.text_content
    assert "names[2] must not be empty" in out.text_content
    empty = await call("rebuild_variables", names=[])
    assert "names must have at least 1 item(s)" in empty.text_content


async def test_input_that_is_not_an_object_is_refused(call: Caller) -> None:
    for raw in (None, [], "x", 1):
        out = await call.registry.run(_use("shell", raw), call.ctx)
        assert out.is_error
        assert "input must be an object" in out.text_content


@pytest.mark.parametrize("tool", TYPED, ids=lambda tool: tool.spec.name)
def test_every_tool_names_a_wrong_field(tool: TypedTool[object]) -> None:
    schema = tool.spec.input_schema  # type: ignore[attr-defined]
    for name in schema["properties"]:
        with pytest.raises(InvalidInput) as bad:
            tool.parse({name: {"not": "this"}})
        assert any(p.startswith(f"{name} must be") for p in bad.value.problems), bad.value
    for name in schema.get("required", ()):
        with pytest.raises(InvalidInput) as missing:
            tool.parse({})
        assert f"missing required key {name!r}" in missing.value.problems


def test_the_handler_gets_the_typed_value() -> None:
    from loom_jupyter.tools.cells import InsertCell, InsertCellInput
    from loom_jupyter.tools.files import SearchFiles, SearchFilesInput

    found = SearchFiles().parse({"pattern": "x", "glob": None, "limit": 5})
    assert found == SearchFilesInput(pattern="x", limit=5)
    assert (found.path, found.regex, found.glob) == (".", False, None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        found.limit = 6  # type: ignore[misc]
    cell = InsertCell().parse({"source": "1", "after_cell_id": None, "run": True})
    assert cell == InsertCellInput(source="1", run=True)  # null: left out (below the cell)


def test_opening_a_session_s_tools_does_not_import_pydantic() -> None:
    """The specs come from the snapshot: pydantic waits for the first tool call."""
    probe = (
        "import sys\n"
        "from loom_jupyter.tools.registry import default_registry\n"
        "from loom_jupyter.orchestrator.plan import SUBMIT_PLAN\n"
        "specs = default_registry().specs()\n"
        "assert len(specs) == 18 and SUBMIT_PLAN.input_schema\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'pydantic'))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.strip() == "[]"


def _use(name: str, raw: object) -> ToolUseBlock:
    return ToolUseBlock("toolu_raw", name, raw)  # type: ignore[arg-type]


@dataclasses.dataclass(frozen=True, kw_only=True)
class _Titled(ToolInput):
    """A class docstring is for people, not for the model."""

    title: str
    """What the model reads about this field."""
    note: str | None = None


def test_derivation_keeps_fields_named_like_keywords_and_their_docstrings() -> None:
    assert derive_schema(_Titled) == {
        "additionalProperties": False,
        "properties": {
            "title": {"description": "What the model reads about this field.", "type": "string"},
            "note": {"type": "string"},
        },
        "required": ["title"],
        "type": "object",
    }
