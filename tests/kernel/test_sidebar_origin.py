"""Where a variable came from, asked over the sidebar's comm of a real ipykernel (issue 21).

The page sends ``where_from`` when the person hovers a variable mentioned in the chat;
the hub answers that comm alone with ``origin``, built from the archived executions.
One kernel serves the module; everything waits on conditions, never on time.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from .sidebar_wire import Wire, hello

pytestmark = pytest.mark.kernel


@pytest.fixture(scope="module")
def comm(wire: Wire) -> str:
    """An open sidebar, welcomed (the archive is open: cells are recorded from now on),
    after three cells: an unrelated one, ``scores`` and ``total`` from it."""
    opened = wire.open_comm(hello())
    wire.wait(lambda: wire.events(opened, "welcome"), "the welcome")
    for code in ("unused = 'not needed'", "scores = [1, 2, 3]", "total = sum(scores)"):
        assert wire.run(code)["status"] == "ok"
    return opened


def ask(wire: Wire, comm: str, name: str, kind: str = "origin") -> dict[str, Any]:
    """Send ``where_from name``; the next ``kind`` message that answers it."""
    before = len(wire.events(comm, kind))
    wire.send(comm, {"type": "where_from", "name": name})
    answers = wire.wait(
        lambda: found if len(found := wire.events(comm, kind)) > before else None,
        f"the {kind} for {name!r}",
    )
    return answers[before]


def test_a_variable_set_by_a_cell_names_that_cell_and_the_chain(wire: Wire, comm: str) -> None:
    origin = ask(wire, comm, "total")
    assert origin["name"] == origin["variable"] == "total"
    assert origin["found"] is True
    assert re.fullmatch(r"cell \[\d+\]", origin["setter"])
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", origin["when"])
    assert origin["code"] == "total = sum(scores)"
    assert origin["more_lines"] == 0
    assert [step["first_line"] for step in origin["steps"]] == ["scores = [1, 2, 3]"]
    assert re.fullmatch(r"cell \[\d+\]", origin["steps"][0]["label"])
    assert origin["steps"][0]["label"] != origin["setter"]
    assert origin["estimated_s"] >= 0
    assert origin["why"] == ""

    dotted = ask(wire, comm, "scores.copy")  # an attribute: traced by its variable
    assert (dotted["variable"], dotted["found"], dotted["steps"]) == ("scores", True, [])
    assert dotted["code"] == "scores = [1, 2, 3]"


def test_a_name_nothing_set_says_why_and_a_bad_name_gets_a_notice(wire: Wire, comm: str) -> None:
    missing = ask(wire, comm, "never_assigned")
    assert missing["found"] is False
    assert missing["why"] == "no archived execution sets it"
    assert (missing["setter"], missing["code"], missing["steps"]) == ("", "", [])

    bad = ask(wire, comm, "df.head()", kind="notice")
    assert bad["level"] == "error"
    assert "'df.head()' is no variable name" in bad["message"]
    long = ask(wire, comm, "x" * 201, kind="notice")
    assert "over 200 characters" in long["message"]
    assert len(long["message"]) < 200


def test_the_answer_goes_to_the_asking_sidebar_only(wire: Wire, comm: str) -> None:
    other = wire.open_comm(hello())
    wire.wait(lambda: wire.events(other, "welcome"), "the second welcome")
    ask(wire, comm, "scores")
    ask(wire, other, "total")
    assert [o["name"] for o in wire.events(other, "origin")] == ["total"]


def test_a_sidebar_opened_after_a_restart_is_offered_the_rebuild(wire: Wire) -> None:
    offer = "RestartOffer(('lost', 'gone'), 0, steps=2, recorded=5, estimated_s=1.5, risky=0)"
    code = (
        "from loom_jupyter.jupyter.coworker.registry import current\n"
        "from loom_jupyter.host.services.restart import RestartOffer\n"
        f"current(get_ipython()).host.restarts.offer = {offer}"
    )
    assert wire.run(code)["status"] == "ok"
    opened = wire.open_comm(hello())
    notices = wire.wait(lambda: wire.events(opened, "notice"), "the restart offer")
    assert "`/rebuild lost gone` makes them again: 2 of 5 recorded" in notices[0]["message"]
    assert notices[0]["level"] == "info"
    assert wire.run(code.replace(offer, "None"))["status"] == "ok"


def test_the_sidebar_offers_only_what_the_namespace_lacks_when_it_opens(
    wire: Wire, comm: str
) -> None:
    """Issue 30: ``scores`` exists again (re-created before the sidebar opened): only
    ``total`` is offered, and its rebuild plan is made again for it alone."""
    offer = "RestartOffer(('scores', 'total'), 0, steps=2, recorded=9, estimated_s=1.5, risky=0)"
    code = (
        "from loom_jupyter.jupyter.coworker.registry import current\n"
        "from loom_jupyter.host.services.restart import RestartOffer\n"
        f"current(get_ipython()).host.restarts.offer = {offer}\n"
        "del total"
    )
    assert wire.run(code)["status"] == "ok"
    try:
        opened = wire.open_comm(hello())
        notices = wire.wait(lambda: wire.events(opened, "notice"), "the restart offer")
        message = notices[0]["message"]
        assert "are gone with the previous kernel: total." in message, message
        assert "`/rebuild total` makes them again" in message, message
    finally:
        restore = "current(get_ipython()).host.restarts.offer = None\ntotal = sum(scores)"
        assert wire.run(code.split("current(", 1)[0] + restore)["status"] == "ok"
