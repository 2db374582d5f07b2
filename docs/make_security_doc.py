"""Write the attack table of docs/security.md from the tests that stop each attack.

    python docs/make_security_doc.py

Every test that reproduces an attack (most live in ``tests/security/``; a few sit beside
the part they test) carries ``@pytest.mark.attack(attack=..., stopped_by=..., ref=...)``;
this script reads those markers (with ``ast``: nothing is imported or run) and rewrites
the table between the ``attacks`` markers of docs/security.md.
``tests/security/test_security_doc.py`` fails when the page and the tests disagree.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
PAGE = ROOT / "docs" / "security.md"
START, END = "<!-- attacks:start -->", "<!-- attacks:end -->"


@dataclass(frozen=True)
class Attack:
    """One attack a test reproduces, and what stops it."""

    attack: str
    stopped_by: str
    ref: str
    test: str  # file::function


def attacks(folder: Path = TESTS) -> list[Attack]:
    """Every ``attack`` marker of the test files under ``folder``: ``tests/security`` first,
    then the rest, file by file, in order."""
    found: list[Attack] = []
    paths = sorted(folder.rglob("test_*.py"), key=lambda p: (p.parent.name != "security", p))
    for path in paths:
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                found += [
                    Attack(**_fields(d), test=f"{_shown(path, folder)}::{node.name}")
                    for d in node.decorator_list
                    if _is_attack(d)
                ]
    return found


def table(found: list[Attack]) -> str:
    """The markdown table: attack, what stops it, the review's finding, the test."""
    rows = ["| attack | what stops it | finding | test |", "|---|---|---|---|"]
    rows += [f"| {_cell(a.attack)} | {_cell(a.stopped_by)} | {a.ref} | `{a.test}` |" for a in found]
    return "\n".join(rows)


def page_with_table(text: str, found: list[Attack]) -> str:
    """``text`` (docs/security.md) with its table replaced."""
    head, _, rest = text.partition(START)
    _, _, tail = rest.partition(END)
    return f"{head}{START}\n{table(found)}\n{END}{tail}"


def _is_attack(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "attack"
    )


def _fields(node: ast.expr) -> dict[str, str]:
    assert isinstance(node, ast.Call)
    values = {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg}
    return {"attack": values["attack"], "stopped_by": values["stopped_by"], "ref": values["ref"]}


def _shown(path: Path, folder: Path) -> str:
    """``test_x.py`` for tests/security, ``orchestrator/test_y.py`` for the others."""
    relative = path.relative_to(folder)
    return path.name if relative.parts[0] == "security" else relative.as_posix()


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


if __name__ == "__main__":
    PAGE.write_text(page_with_table(PAGE.read_text(encoding="utf-8"), attacks()), "utf-8")
    print(f"{PAGE.relative_to(ROOT)}: {len(attacks())} attacks", file=sys.stderr)
