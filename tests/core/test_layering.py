"""The layers of docs/architecture.md, as data, checked on every import of the package.

Every ``import`` counts: module level, inside functions and under ``TYPE_CHECKING``.
A unit may import itself and any unit of a lower layer; units of one layer are
independent of each other unless the layer says otherwise. Only
``loom_jupyter.jupyter`` imports the Jupyter stack (DESIGN §1.5), and importing the
package stays light.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

import loom_jupyter

PACKAGE = Path(loom_jupyter.__file__).parent


@dataclass(frozen=True)
class Layer:
    name: str
    units: frozenset[str]
    units_share: bool = False  # may the layer's units import each other?
    never: frozenset[str] = frozenset()  # lower units this layer still may not import


def layer(
    name: str, *units: str, units_share: bool = False, never: frozenset[str] = frozenset()
) -> Layer:
    return Layer(name, frozenset(units), units_share, never)


# Lowest first. Keep in step with the "Layers" section of docs/architecture.md.
LAYERS = (
    layer(
        "values",
        "_version",
        "cells",
        "errors",
        "messages",
        "records",
        "query",
        "lineage",
        "effects",
        "readers",
        "settings",
        "folders",
        "trust",
        "skills",
        "controls",
        "importguard",
        "apikey",
        "own_writes",
        "policy",
        "spend",
        units_share=True,
    ),
    layer("storage, model seam, tools", "archive", "models", "tools"),
    # MCP servers' tools: built on tools/ (Tool, approval, output), below everything that runs them.
    layer("tool sources", "mcp"),
    # The engine reads the archive through loom_jupyter.readers protocols only.
    layer("engine", "engine", never=frozenset({"archive"})),
    # OpenTelemetry (DESIGN §16): sees the engine's events; the session and orchestrator use it.
    layer("telemetry", "telemetry", never=frozenset({"archive"})),
    layer("session", "session"),
    layer("orchestrator", "orchestrator"),
    layer("host", "host"),
    layer("test kit", "testing"),
    layer("fronts", "jupyter"),
    # Outside agents (DESIGN §14): `loom-jupyter mcp` reaches a kernel through Jupyter Server
    # and loads Loom the sidebar's way (jupyter/autoload.py), never the Jupyter stack itself.
    layer("outside agents", "outside"),
    # `loom-jupyter eval` (DESIGN §17): real kernels through jupyter_client, reading each
    # task's archive after the run; Loom itself runs inside those kernels, never here.
    layer("evaluation", "eval", never=frozenset({"jupyter"})),
    # The command line starts the MCP server; it still never imports the Jupyter front.
    layer("command line", "cli", never=frozenset({"jupyter"})),
    # Writes the generated files (the protocol's schema, the page's tables): nothing imports it.
    layer("build tools", "buildtools"),
)
# Units that may not import a lower unit all the same: the kernel's fronts read the
# archive only through the host (history, sessions, search: loom_jupyter/host/services/views.py).
NEVER_BY_UNIT = {"jupyter": frozenset({"archive"})}
JUPYTER_STACK = frozenset({"IPython", "ipykernel", "ipywidgets", "comm", "jupyter_server"})
JUPYTER_UNITS = frozenset({"jupyter"})
# Inside the Jupyter layer, lowest first: a sub-package imports only those before it.
# Keep in step with loom_jupyter/jupyter/__init__.py and docs/architecture.md.
JUPYTER_PARTS = (
    "autoload",
    "server",
    "kernel",
    "cell",
    "sidebar",
    "delegation",
    "panel",
    "coworker",
    "magics",
    "extension",
)
# Inside the host, lowest first, the same way. Keep in step with loom_jupyter/host/__init__.py.
HOST_PARTS = ("wire", "runtime", "upkeep", "services", "host", "commands")
ROOMS = {"jupyter": JUPYTER_PARTS, "host": HOST_PARTS}


def unit_of(module: str) -> str | None:
    """``loom_jupyter.engine.agent`` -> ``engine``; the package root itself is ``None``."""
    parts = module.split(".")
    return parts[1] if parts[0] == "loom_jupyter" and len(parts) > 1 else None


def layer_index(unit: str) -> int:
    for index, candidate in enumerate(LAYERS):
        if unit in candidate.units:
            return index
    raise AssertionError(f"unit {unit!r} is in no layer: add it to LAYERS and the map")


def may_import(importer: str, imported: str) -> bool:
    if importer == imported:
        return True
    here, there = layer_index(importer), layer_index(imported)
    if imported in LAYERS[here].never | NEVER_BY_UNIT.get(importer, frozenset()):
        return False
    return there < here or (there == here and LAYERS[here].units_share)


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> list[tuple[int, str]]:
    """Every module ``path`` imports (absolute names), with line numbers."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            found.append((node.lineno, base))
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
    return found


def package_modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "labextension" not in p.parts)


def violations() -> list[str]:
    found = []
    for path in package_modules():
        importer = unit_of(module_name(path))
        for line, imported in imports_of(path):
            where = f"{path.relative_to(PACKAGE.parent)}:{line} imports {imported}"
            if imported.split(".")[0] in JUPYTER_STACK and importer not in JUPYTER_UNITS:
                found.append(f"{where} (only loom_jupyter.jupyter may import the Jupyter stack)")
            target = unit_of(imported)
            if importer is None or target is None or not _is_unit(target):
                continue
            if not may_import(importer, target):
                found.append(f"{where} ({importer} may not import {target})")
    return found


def room_of(module: str, unit: str) -> str | None:
    """``loom_jupyter.jupyter.magics.cowork`` -> ``magics`` (for ``jupyter``); else ``None``."""
    parts = module.split(".")
    return parts[2] if parts[:2] == ["loom_jupyter", unit] and len(parts) > 2 else None


def room_violations(unit: str) -> list[str]:
    """Imports inside ``unit`` that run against the order of its rooms (``ROOMS``)."""
    rooms = ROOMS[unit]
    found = []
    for path in package_modules():
        importer = room_of(module_name(path), unit)
        if importer is None:
            continue
        assert importer in rooms, f"{importer} is in no room of {unit}: add it to ROOMS"
        for line, imported in imports_of(path):
            target = room_of(imported, unit)
            if target in (None, importer) or target not in rooms:
                continue
            if rooms.index(target) > rooms.index(importer):
                where = f"{path.relative_to(PACKAGE.parent)}:{line} imports {imported}"
                found.append(f"{where} ({importer} may not import {target})")
    return found


def import_graph() -> dict[str, set[str]]:
    """Module -> the package modules it imports (every kind of import counts)."""
    modules = {module_name(p): p for p in package_modules()}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets = set()
        for _, imported in imports_of(path):
            parts = imported.split(".")
            while parts and ".".join(parts) not in modules:
                parts.pop()
            if parts and ".".join(parts) != name:
                targets.add(".".join(parts))
        graph[name] = targets
    return graph


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every group of modules that import each other, directly or round about (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = [stack.pop()]
            while group[-1] != node:
                group.append(stack.pop())
            if len(group) > 1:
                circles.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return circles


def _is_unit(name: str) -> bool:
    return (PACKAGE / name).is_dir() or (PACKAGE / f"{name}.py").is_file()


def test_every_unit_of_the_package_is_in_a_layer() -> None:
    units = {unit_of(module_name(p)) for p in package_modules()} - {None}
    for unit in units:
        layer_index(str(unit))


def test_no_import_runs_against_the_layers() -> None:
    assert violations() == []


def test_the_kernel_fronts_reach_the_archive_only_through_the_host() -> None:
    assert not may_import("jupyter", "archive")
    assert may_import("host", "archive")
    assert may_import("jupyter", "host")
    assert may_import("cli", "archive")


@pytest.mark.parametrize("unit", sorted(ROOMS))
def test_the_rooms_of_a_unit_import_only_downwards(unit: str) -> None:
    assert room_violations(unit) == []


def test_the_host_package_map_names_every_room() -> None:
    page = (PACKAGE / "host" / "__init__.py").read_text()
    for room in HOST_PARTS:
        assert f"``{room}" in page, f"loom_jupyter/host/__init__.py does not name {room}"


def test_no_module_imports_itself_round_about() -> None:
    assert import_circles(import_graph()) == []


def test_the_circle_finder_finds_circles() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert import_circles(graph) == [["a", "b", "c"]]


def test_the_checker_sees_function_level_and_type_checking_imports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The checker, run on a copy of the package's shape in ``tmp_path`` (never on files
    written into the package: a parallel worker's ``violations()`` would see them), finds
    every kind of import that runs against the layers."""
    source = textwrap.dedent(
        """
        from typing import TYPE_CHECKING
        if TYPE_CHECKING:
            from loom_jupyter.archive import Archive
        def later():
            import loom_jupyter.session.conversation
        from ..jupyter import render
        import IPython
        from . import agent
        """
    )
    package = tmp_path / "loom_jupyter"
    for unit in ("engine", "archive", "session", "jupyter"):
        (package / unit).mkdir(parents=True)
        (package / unit / "__init__.py").write_text("")
    probe = package / "engine" / "_layering_probe.py"
    probe.write_text(source)
    monkeypatch.setitem(globals(), "PACKAGE", package)  # what the checker walks
    found = [imported for _, imported in imports_of(probe)]
    assert "loom_jupyter.archive" in found
    assert "loom_jupyter.session.conversation" in found
    assert "loom_jupyter.jupyter" in found
    assert "loom_jupyter.engine.agent" in found
    assert not may_import("engine", "archive")
    assert not may_import("engine", "session")
    assert may_import("session", "engine")
    assert not may_import("archive", "tools")
    assert may_import("messages", "errors")
    assert sorted(violations()) == [
        "loom_jupyter/engine/_layering_probe.py:4 imports loom_jupyter.archive "
        "(engine may not import archive)",
        "loom_jupyter/engine/_layering_probe.py:4 imports loom_jupyter.archive.Archive "
        "(engine may not import archive)",
        "loom_jupyter/engine/_layering_probe.py:6 imports loom_jupyter.session.conversation "
        "(engine may not import session)",
        "loom_jupyter/engine/_layering_probe.py:7 imports loom_jupyter.jupyter "
        "(engine may not import jupyter)",
        "loom_jupyter/engine/_layering_probe.py:7 imports loom_jupyter.jupyter.render "
        "(engine may not import jupyter)",
        "loom_jupyter/engine/_layering_probe.py:8 imports IPython "
        "(only loom_jupyter.jupyter may import the Jupyter stack)",
    ]
    assert not (Path(loom_jupyter.__file__).parent / "engine" / "_layering_probe.py").exists()


def test_the_map_names_every_layer() -> None:
    page = (PACKAGE.parent / "docs" / "architecture.md").read_text()
    for each in LAYERS:
        for unit in each.units - {"_version"}:
            named = f"{unit}/" in page or f"{unit}.py" in page or f"`{unit}`" in page
            assert named, f"docs/architecture.md does not place {unit} on the map"


BLOCKER = """
import importlib.abc, sys
BLOCKED = {"IPython", "ipykernel", "ipywidgets", "comm", "jupyter_server"}
class Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(f"blocked in this test: {name}")
        return None
sys.meta_path.insert(0, Blocker())
"""


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_every_core_module_imports_with_jupyter_blocked() -> None:
    code = (
        BLOCKER
        + """
import pkgutil, importlib, loom_jupyter
names = [m.name for m in pkgutil.walk_packages(loom_jupyter.__path__, "loom_jupyter.")
         if not m.name.startswith("loom_jupyter.jupyter") and not m.name.endswith("__main__")]
for name in names:
    importlib.import_module(name)
print(len(names))
"""
    )
    proc = run_python(code)
    assert proc.returncode == 0, proc.stderr
    assert int(proc.stdout.strip()) >= 5


def test_importing_the_package_loads_nothing_heavy() -> None:
    code = """
import sys, loom_jupyter
heavy = {"anthropic", "IPython", "ipywidgets", "aiosqlite", "yaml", "httpx", "httpx2", "numpy"}
print(sorted(m for m in sys.modules if m.split(".")[0] in heavy))
"""
    proc = run_python(code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_labextension_paths_point_inside_the_package() -> None:
    [entry] = loom_jupyter._jupyter_labextension_paths()
    assert entry == {"src": "labextension", "dest": "loom-jupyter"}
