"""File-tool and tool cases: the fake model calls a tool with bad input in a real IPython shell.

The tool result (what the model reads) must carry the case's message, nothing
outside the notebook folder may be read or changed, and the archive stays
intact. The cases share one session (each leaves it as it found it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from .cases import TOOL_CASES, Case

if TYPE_CHECKING:
    from pathlib import Path

    from .conftest import Desk

OUTSIDE_TEXT = "OUTSIDE-CANARY the contents of a file outside the notebook folder\n"


def _furnish(desk: Desk) -> Path:
    """Files for the jail cases: a folder outside, links to it, a binary file, a broken notebook."""
    outside = desk.notebook.parent.parent / "outside"
    if outside.exists():
        return outside
    outside.mkdir()
    (outside / "secret.txt").write_text(OUTSIDE_TEXT)
    folder = desk.notebook.parent
    (folder / "link.txt").symlink_to(outside / "secret.txt")
    (folder / "linkdir").symlink_to(outside, target_is_directory=True)
    (folder / "blob.bin").write_bytes(b"\x89PNG\x00\x01\x02" * 100)
    (folder / "archive-link").symlink_to(desk.archive.parent, target_is_directory=True)
    desk.notebook.write_text("{ this is not json")
    return outside


@pytest.mark.parametrize("case", TOOL_CASES, ids=[c.id for c in TOOL_CASES])
def test_tool_case(case: Case, shared_desk: Desk) -> None:
    desk = shared_desk
    outside = _furnish(desk)
    before = sorted(p.name for p in outside.iterdir())
    assert case.tool is not None
    printed = desk.tool_turn(case.tool, case.tool_input)
    assert "done." in printed  # the loop went on after the tool
    content, is_error = desk.last_tool_result()
    assert case.expect in content, content[:2000]
    assert bool(is_error) is case.is_error
    assert "OUTSIDE-CANARY" not in content
    assert (outside / "secret.txt").read_text() == OUTSIDE_TEXT
    assert sorted(p.name for p in outside.iterdir()) == before
    assert len(content) <= 60_000  # capped: tool_output_max_chars plus the cut note
    desk.assert_intact()
    assert desk.archive.parent.joinpath(".gitignore").read_text() == "*\n"
    assert desk.fake.remaining == 0
