"""Typos never reach the model, through a real ipykernel (issue 40.1): ``%cowork sesions``
and ``%delegate stauts`` in cells, a sidebar's ``/sesions`` over the ``loom`` comm (the
page sends a ``/word`` it does not know as a message) and ``/model gpt-4o``. The fake
Messages API receives no message request. Everything waits on conditions, never on time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from .sidebar_wire import Wire, hello

if TYPE_CHECKING:
    from loom_jupyter.testing import FakeAnthropic

pytestmark = pytest.mark.kernel


def typed(wire: Wire, code: str) -> str:
    """Run a cell; what it printed."""
    printed, _ = wire.typed(code)
    return printed


def answered(wire: Wire, comm: str, kind: str, before: int) -> dict[str, Any]:
    """The first message of ``kind`` on ``comm`` after the ``before`` already there."""
    found = wire.wait(
        lambda: events if len(events := wire.events(comm, kind)) > before else None, kind
    )
    return found[before]


def test_typos_in_cells_and_in_the_sidebar_send_nothing(wire: Wire, fake: FakeAnthropic) -> None:
    assert "Did you mean `%cowork sessions`?" in typed(wire, "%cowork sesions")
    bad = typed(wire, "%cowork approval yolo")
    assert "`%cowork approval` takes ask, auto or read-only (got `yolo`)." in bad
    delegated = typed(wire, "%delegate stauts")
    assert "Did you mean `%delegate status`? Nothing was delegated." in delegated

    comm = wire.open_comm(hello())
    wire.wait(lambda: wire.events(comm, "welcome"), "the welcome")
    wire.send(comm, {"type": "send", "client_id": "typo-1", "text": "/sesions"})
    error = answered(wire, comm, "turn_error", 0)
    assert error["client_id"] == "typo-1"  # the page takes the text back into its box
    assert error["message"].startswith("Did you mean `/sessions`? Nothing was sent")
    assert wire.events(comm, "turn_started") == []

    wire.send(comm, {"type": "command", "name": "model", "args": "gpt-4o"})
    refused = answered(wire, comm, "command_result", 0)
    assert refused["ok"] is False
    assert "Unknown model `gpt-4o`" in refused["text"]
    assert "claude-sonnet-5-5" in refused["text"]
    assert fake.message_requests == []
