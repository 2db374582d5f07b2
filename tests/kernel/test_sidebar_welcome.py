"""Issue 40.3 and 40.6 over a real kernel's ``loom`` comm: what a page's ``welcome`` says.

Its ``kernel_process`` stays the same across ``%unload_ext`` / ``%load_ext`` (a new Loom
in the same kernel: the page says nothing of a restart) and changes when the kernel
restarts; its ``usage`` carries the session's cost, so a page opened later shows it in
the footer before any new turn. One kernel serves the module; the tests run in order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from .sidebar_wire import hello

if TYPE_CHECKING:
    from loom_jupyter.testing import FakeAnthropic

    from .sidebar_wire import Wire

pytestmark = pytest.mark.kernel


def welcome_of(wire: Wire) -> dict[str, Any]:
    """A new page's welcome."""
    comm = wire.open_comm(hello())
    return wire.wait(lambda: wire.events(comm, "welcome"), "the welcome")[0]


def test_a_fresh_session_has_no_usage_and_a_turn_gives_it_one(
    wire: Wire, fake: FakeAnthropic
) -> None:
    first = welcome_of(wire)
    assert first["kernel_process"]
    assert first["usage"] is None
    fake.add("An answer that costs something.")
    assert wire.run("%cowork hello")["status"] == "ok"

    later = welcome_of(wire)
    usage = later["usage"]
    assert usage["cost_usd"] > 0
    assert usage["input_tokens"] == usage["context_tokens"] > 0
    assert usage["output_tokens"] > 0
    assert usage["context_budget"] > usage["context_tokens"]
    assert later["kernel_process"] == first["kernel_process"]


def test_an_extension_reload_keeps_the_kernel_process_and_the_cost(wire: Wire) -> None:
    before = welcome_of(wire)
    assert wire.run("%unload_ext loom_jupyter\n%load_ext loom_jupyter")["status"] == "ok"
    after = welcome_of(wire)
    assert after["kernel_session"] != before["kernel_session"]  # a new Loom: replay restarts
    assert after["kernel_process"] == before["kernel_process"]  # ...in the same kernel
    assert after["usage"]["cost_usd"] == pytest.approx(before["usage"]["cost_usd"])


def test_a_kernel_restart_names_another_process(wire: Wire) -> None:
    before = welcome_of(wire)
    wire.km.restart_kernel(now=False)
    wire.kc.wait_for_ready(timeout=120)
    assert wire.run("%load_ext loom_jupyter")["status"] == "ok"
    after = welcome_of(wire)
    assert after["kernel_process"] != before["kernel_process"]
    assert after["usage"]["cost_usd"] == pytest.approx(before["usage"]["cost_usd"])  # resumed
