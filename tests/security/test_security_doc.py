"""docs/security.md's attack table is the tests' own list (docs/make_security_doc.py)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def _maker() -> ModuleType:
    script = ROOT / "docs" / "make_security_doc.py"
    spec = importlib.util.spec_from_file_location("make_security_doc", script)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks itself up there
    spec.loader.exec_module(module)
    return module


def test_the_attack_table_is_generated_from_the_tests() -> None:
    maker = _maker()
    page = (ROOT / "docs" / "security.md").read_text(encoding="utf-8")
    found = maker.attacks()
    assert page == maker.page_with_table(page, found), (
        "docs/security.md is out of date: run python docs/make_security_doc.py"
    )
    assert len(found) >= 10


FINDING_KINDS = ("F", "R", "D")
"""F: security review 1; R: security review 5; D: a newcomer's defect (newcomer-5)."""


def test_every_attack_names_what_stops_it_and_its_finding() -> None:
    for attack in _maker().attacks():
        assert attack.attack.strip(), attack.test
        assert attack.stopped_by.strip(), attack.test
        assert attack.ref[:1] in FINDING_KINDS, attack.test
        assert attack.ref[1:].isdigit(), attack.test
