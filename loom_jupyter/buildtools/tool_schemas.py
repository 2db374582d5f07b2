"""The snapshot of the built-in tools' input schemas: ``loom_jupyter/tools/input_schemas.json``.

Each built-in tool's input is a frozen dataclass whose JSON schema pydantic derives
(:func:`~loom_jupyter.tools.schema.derive_schema`). A session needs every schema when it
opens (the tool definitions are part of every request's cached prefix, and the context
window sizes them), which happens during ``%load_ext``; pydantic is not imported there,
so the derived schemas are committed in this snapshot and read from it.

Run ``python -m loom_jupyter.buildtools.tool_schemas`` after changing a tool's input;
``tests/tools/test_input_schemas.py`` fails while the snapshot is stale.
"""

from __future__ import annotations

import json
import sys

from loom_jupyter.orchestrator.judge import VerdictInput
from loom_jupyter.orchestrator.plan import PlanInput
from loom_jupyter.tools.base import TypedTool
from loom_jupyter.tools.registry import default_tools
from loom_jupyter.tools.schema import SNAPSHOT_PATH, derive_schema

__all__ = ["input_types", "render", "snapshot", "write"]


def input_types() -> list[type[object]]:
    """The input dataclasses of the built-in tools and of the orchestrator's forced tools."""
    tools = [tool.input_type for tool in default_tools() if isinstance(tool, TypedTool)]
    return [*tools, PlanInput, VerdictInput]


def snapshot() -> dict[str, dict[str, object]]:
    """Every input's derived schema by ``module.QualName`` (the snapshot's content), in the
    order of the names; each schema's keys in pydantic's order (the fields' own order)."""
    found = {f"{cls.__module__}.{cls.__qualname__}": derive_schema(cls) for cls in input_types()}
    return dict(sorted(found.items()))


def render() -> str:
    """The snapshot file's text."""
    return json.dumps(snapshot(), indent=2, ensure_ascii=False) + "\n"


def write() -> bool:
    """Rewrite the snapshot; whether it changed."""
    text = render()
    if SNAPSHOT_PATH.exists() and SNAPSHOT_PATH.read_text(encoding="utf-8") == text:
        return False
    SNAPSHOT_PATH.write_text(text, encoding="utf-8")
    return True


if __name__ == "__main__":
    changed = write()
    sys.stdout.write(f"{SNAPSHOT_PATH}: {'written' if changed else 'up to date'}\n")
