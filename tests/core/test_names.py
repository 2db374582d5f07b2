"""Names that explain themselves: no two public classes of the package share a name.

Two ``Provenance`` or two ``SearchHit`` in one codebase make a reader guess which one a
signature means; the package keeps one public class per name.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import loom_jupyter

PACKAGE = Path(loom_jupyter.__file__).parent


def public_classes() -> dict[str, list[str]]:
    """Each public top-level class name -> the modules defining it."""
    found: dict[str, list[str]] = defaultdict(list)
    for path in sorted(PACKAGE.rglob("*.py")):
        if "labextension" in path.parts:
            continue
        for node in ast.parse(path.read_text(), str(path)).body:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                found[node.name].append(str(path.relative_to(PACKAGE.parent)))
    return found


def test_no_two_public_classes_share_a_name() -> None:
    shared = {name: where for name, where in public_classes().items() if len(where) > 1}
    assert shared == {}


def test_the_finder_sees_classes_in_every_room() -> None:
    classes = public_classes()
    assert classes["Host"] == ["loom_jupyter/host/host.py"]
    assert "CoworkSession" in classes
    assert "TurnFloor" in classes
