"""A managed policy where production reads it: ``{sys.prefix}/etc/loom/managed.yaml`` (the
``prefix`` fixture points ``sys.prefix`` at a temporary folder; ``/etc/loom`` is not on
this machine)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture
def prefix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The environment's prefix, with an empty ``etc/loom/`` for the policy."""
    root = tmp_path / "env"
    (root / "etc" / "loom").mkdir(parents=True)
    monkeypatch.setattr(sys, "prefix", str(root))
    return root


def write_policy(prefix: Path, text: str) -> Path:
    """``text`` as the prefix's ``managed.yaml``; its path."""
    path = prefix / "etc" / "loom" / "managed.yaml"
    path.write_text(text)
    return path
