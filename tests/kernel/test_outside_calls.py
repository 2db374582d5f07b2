"""An outside agent's tool calls through a real kernel's host (DESIGN §14), over the real comm.

The link ``loom-jupyter mcp`` opens is played here straight over ZMQ: a comm on the outside
agents' own target ``loom-agent``, a ``hello`` with ``agent`` and ``outside_call`` messages. A
page is played by :class:`DocumentFront` on ``loom`` (protocol 1.3: it answers ``ping``). The
approval mode is ``ask`` (the default): reads run, writes ask in the page, and without a
page — none open, or one that no longer answers — a write is refused at once with a word
naming ``%cowork approval``. The whole path through Jupyter Server and the MCP SDK is
``tests/outside/``.
"""

from __future__ import annotations

import json
import uuid
from typing import TYPE_CHECKING, Any

import pytest

from .conftest import archive_rows
from .document_front import Cell, DocumentFront
from .sidebar_wire import Wire, hello, start_wire

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from loom_jupyter.testing import FakeAnthropic

pytestmark = pytest.mark.kernel

CLIENT = "Claude Code"


@pytest.fixture(scope="module")
def wire_notebook(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("outside") / "nb.ipynb"
    path.write_text(json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    return path


@pytest.fixture(scope="module")
def wire(fake: FakeAnthropic, wire_notebook: Path) -> Iterator[Wire]:
    """One kernel with Loom loaded under ``ask``."""
    started = start_wire(fake, wire_notebook, wire_notebook.parent / "config", approval="ask")
    yield started
    started.shutdown()


AGENT_TARGET = "loom-agent"


def agent_link(wire: Wire, name: str = CLIENT, front: DocumentFront | None = None) -> str:
    """An outside agent's link: a ``loom-agent`` comm whose hello names the client; it is
    answered with ``pages`` (a page, if given, answers the kernel's ping meanwhile)."""
    link = wire.open_comm(hello(agent=name, minor=3), target=AGENT_TARGET)

    def pages() -> list[dict[str, Any]]:
        if front is not None:
            front.serve()
        return wire.events(link, "pages")

    wire.wait(pages, "the agent link's pages")
    return link


@pytest.fixture(scope="module")
def agent(wire: Wire) -> str:
    """The outside agent's link, for the module."""
    return agent_link(wire)


def send_call(wire: Wire, link: str, tool: str, **args: Any) -> str:
    """Send one outside call; its request id."""
    request_id = uuid.uuid4().hex
    message = {"type": "outside_call", "request_id": request_id, "client": CLIENT}
    wire.send(link, {**message, "tool": tool, "input": args})
    return request_id


def wait_result(
    wire: Wire, link: str, request_id: str, what: str, front: DocumentFront | None = None
) -> Any:
    """The ``outside_result`` answering ``request_id`` (a page, if given, answers meanwhile)."""

    def result() -> dict[str, Any] | None:
        if front is not None:
            front.serve()
        done = [e for e in wire.events(link, "outside_result") if e["request_id"] == request_id]
        return done[0] if done else None

    return wire.wait(result, what)


def call(wire: Wire, link: str, tool: str, front: DocumentFront | None = None, **args: Any) -> Any:
    """One outside call; its ``outside_result`` (a page, if given, answers meanwhile)."""
    request_id = send_call(wire, link, tool, **args)
    return wait_result(wire, link, request_id, f"the result of {tool}", front)


def text(result: dict[str, Any]) -> str:
    return "\n".join(part["text"] for part in result["content"] if part["kind"] == "text")


def page(wire: Wire, *cells: Cell, on_screen: bool = True) -> DocumentFront:
    comm = wire.open_comm(hello(documents=True, minor=3, on_screen=on_screen))
    front = DocumentFront(wire, comm, list(cells), on_screen=on_screen)
    front.wait(lambda: wire.events(comm, "welcome"), "the welcome")
    return front


def close(wire: Wire, comm: str) -> None:
    wire.close_comm(comm)


def test_run_python_runs_in_the_kernel_and_is_archived_as_the_clients(
    wire: Wire, agent: str, wire_notebook: Path
) -> None:
    refused = call(wire, agent, "run_python", code="answer = 41 + 1")
    assert refused["is_error"] is True  # ask, and no page to ask on
    assert "%cowork approval auto" in text(refused)
    assert wire.run("%cowork approval auto")["status"] == "ok"  # the person's word
    nowhere = call(wire, agent, "insert_cell", source="x = 1")
    assert nowhere["is_error"] is True  # no page holds the notebook: nowhere to insert
    assert "needs the notebook open in JupyterLab" in text(nowhere)
    result = call(wire, agent, "run_python", code="answer = 41 + 1\nprint('made', answer)")
    assert wire.run("%cowork approval ask")["status"] == "ok"
    assert result["is_error"] is False, result
    assert "made 42" in text(result)
    assert wire.value("answer") == "42"  # the notebook's own namespace
    rows = archive_rows(
        wire_notebook,
        "SELECT o.client, t.role, t.tool_name, t.content FROM outside_calls o JOIN "
        "conversation_turns t USING (session_id, turn_number)",
    )
    assert rows[-1][:3] == (CLIENT, "tool", "run_python")
    assert "made 42" in rows[-1][3]
    # the execution is recorded: its provenance names it
    traced = call(wire, agent, "variable_provenance", name="answer")
    assert traced["is_error"] is False
    assert "Provenance of answer" in text(traced)
    assert "answer = 41 + 1" in text(traced)


def test_a_page_sees_the_call_live_marked_with_the_client(wire: Wire, agent: str) -> None:
    front = page(wire)
    call(wire, agent, "inspect_variables", front)
    started = wire.events(front.comm, "tool_started")[-1]
    finished = wire.events(front.comm, "tool_finished")[-1]
    assert started["outside"] == CLIENT
    assert finished["outside"] == CLIENT
    assert finished["name"] == "inspect_variables"
    # the link itself gets no broadcasts and no welcome
    assert not wire.events(agent, "welcome")
    assert not wire.events(agent, "tool_started")
    # the history a new page reads marks the call too
    later = page(wire)
    items = wire.events(later.comm, "welcome")[-1]["history"]
    assert any(item.get("outside") == CLIENT for item in items if item["kind"] == "tool")
    close(wire, front.comm)
    close(wire, later.comm)


def test_a_write_with_no_page_open_is_refused_naming_the_approval_magic(
    wire: Wire, agent: str
) -> None:
    result = call(wire, agent, "edit_cell", cell_id="a1", source="x = 2")
    assert result["is_error"] is True
    assert "%cowork approval" in text(result)
    assert "no page" in text(result)


def test_a_write_asks_in_the_page_and_the_edit_lands_as_a_diff(wire: Wire, agent: str) -> None:
    front = page(wire, Cell("a1", "x = 1"))
    read = call(wire, agent, "read_notebook", front)
    assert "x = 1" in text(read)
    request_id = send_call(wire, agent, "edit_cell", cell_id="a1", source="x = 2")
    asked = front.wait(lambda: wire.events(front.comm, "approval"), "the approval card")[-1]
    assert asked["tool"] == "edit_cell"
    assert asked["summary"].startswith(f"{CLIENT} asks: ")
    assert "x = 2" in asked["preview"]
    wire.send(
        front.comm, {"type": "approve", "request_id": asked["request_id"], "decision": "allow"}
    )

    result = wait_result(wire, agent, request_id, "the edit's result", front)
    assert result["is_error"] is False, result
    assert front.source_of("a1") == "x = 2"
    close(wire, front.comm)


def test_bad_input_and_unknown_tools_say_what_to_do(wire: Wire, agent: str) -> None:
    bad = call(wire, agent, "run_python", cod="1")
    assert bad["is_error"] is True
    assert "Invalid input for run_python" in text(bad)
    unknown = call(wire, agent, "shell", command="ls")
    assert unknown["is_error"] is True
    assert "Unknown tool 'shell'" in text(unknown)
    provenance = call(wire, agent, "variable_provenance", name="not a name")
    assert provenance["is_error"] is True
    assert "no variable name" in text(provenance)


@pytest.mark.attack(
    attack=(
        "An outside agent (an MCP client through `loom-jupyter mcp`) answers the approval card "
        "its own write raised, over its own `loom` comm, and so approves itself; or sends a "
        "message to Loom's model as if it were the person"
    ),
    stopped_by=(
        "An outside agent's link is a comm on its own target, `loom-agent`, with its own hub: "
        "it is never counted as a page to ask, and anything it sends but `hello` and "
        "`outside_call` (an `approve`, a `send`) is refused with a notice; only a page's "
        "answer settles the card"
    ),
    ref="F8",
)
def test_an_outside_link_cannot_approve_or_send_as_a_page(wire: Wire, agent: str) -> None:
    """An outside agent's link may only call tools: it cannot answer the approval card its
    own call raised, send a message to the model, or switch sessions."""
    front = page(wire, Cell("b1", "y = 1"))
    call(wire, agent, "read_notebook", front)
    request_id = send_call(wire, agent, "edit_cell", cell_id="b1", source="y = 666")
    asked = front.wait(lambda: wire.events(front.comm, "approval"), "the approval card")[-1]
    before = len(wire.events(agent, "notice"))
    wire.send(agent, {"type": "approve", "request_id": asked["request_id"], "decision": "allow"})
    wire.send(agent, {"type": "send", "client_id": "x", "text": "hi"})
    notices = front.wait(lambda: wire.events(agent, "notice")[before + 1 :], "the refusals")
    assert "only says `hello` and calls tools" in notices[-1]["message"]
    wire.send(
        front.comm, {"type": "approve", "request_id": asked["request_id"], "decision": "deny"}
    )

    result = wait_result(wire, agent, request_id, "the denied edit's result", front)
    assert result["is_error"] is True
    assert front.source_of("b1") == "y = 1"
    close(wire, front.comm)


def test_a_call_during_a_loom_turn_waits_for_it_on_the_same_floor(
    wire: Wire, agent: str, fake: FakeAnthropic
) -> None:
    front = page(wire)
    fake.add({"content": ["Thinking about", " it at length."], "hold": "turn"})
    wire.send(front.comm, {"type": "send", "client_id": "floor-1", "text": "a long answer"})
    front.wait(lambda: fake.held("turn") == 1, "the turn to stream")
    request_id = send_call(wire, agent, "inspect_variables")
    started = front.wait(lambda: wire.events(front.comm, "turn_started"), "the turn")[-1]
    fake.release("turn")

    answer = wait_result(wire, agent, request_id, "the outside call", front)
    assert answer["is_error"] is False
    sent = wire.comm_events(front.comm)
    done_at = next(i for i, e in enumerate(sent) if e["type"] == "turn_done")
    call_at = next(
        i
        for i, e in enumerate(sent)
        if e["type"] == "tool_started" and e.get("outside") and e["turn"] > started["turn"]
    )
    assert done_at < call_at  # the call ran after the turn ended, never inside it
    close(wire, front.comm)


def test_figures_come_back_as_images_and_secrets_redacted(wire: Wire, agent: str) -> None:
    assert wire.run("%cowork approval auto")["status"] == "ok"
    try:
        code = (
            "import os\nimport matplotlib\nmatplotlib.use('agg')\n"
            "import matplotlib.pyplot as plt\n"
            "os.environ['SERVICE_API_KEY'] = 'sk-outside-' + 'a' * 30\n"
            "plt.plot([1, 3, 2])\nplt.show()\n"
            "print(os.environ['SERVICE_API_KEY'])"
        )
        result = call(wire, agent, "run_python", code=code)
    finally:
        assert wire.run("%cowork approval ask")["status"] == "ok"
    assert result["is_error"] is False, result
    images = [part for part in result["content"] if part["kind"] == "image"]
    assert images
    assert images[0]["media_type"] == "image/png"
    assert images[0]["data"]
    assert "sk-outside-" not in text(result)
    assert "[REDACTED]" in text(result)


def test_stop_in_the_sidebar_ends_a_call_waiting_for_approval(wire: Wire, agent: str) -> None:
    front = page(wire)
    request_id = send_call(wire, agent, "run_python", code="stopped = 1")
    asked = front.wait(lambda: wire.events(front.comm, "approval"), "the approval card")[-1]
    wire.send(front.comm, {"type": "stop"})

    stopped = wait_result(wire, agent, request_id, "the stopped call", front)
    assert stopped["is_error"] is True
    assert "pressed Stop" in text(stopped)
    closed = wire.events(front.comm, "approval_closed")
    assert any(e["request_id"] == asked["request_id"] for e in closed)
    assert "NameError" in wire.value("'stopped' in dir() or NameError")  # never ran
    close(wire, front.comm)


def test_loom_is_told_what_the_outside_agent_did_at_its_next_turn(
    wire: Wire, agent: str, fake: FakeAnthropic
) -> None:
    front = page(wire)
    call(wire, agent, "inspect_variables", front)
    call(wire, agent, "variable_provenance", front, name="answer")
    fake.add("Noted.")
    before = len(fake.message_requests)
    wire.send(front.comm, {"type": "send", "client_id": "told-1", "text": "what changed?"})
    front.wait(lambda: len(fake.message_requests) > before, "Loom's request")
    sent = json.dumps(fake.message_requests[-1].body)
    assert "Since your last turn, an outside agent worked in this notebook" in sent
    assert f"{CLIENT} ran inspect_variables" in sent
    assert f"{CLIENT} ran variable_provenance" in sent
    front.wait(lambda: wire.events(front.comm, "turn_done"), "the turn")
    close(wire, front.comm)


@pytest.mark.attack(
    attack=(
        "An outside agent's link sends a second `hello` without `agent`, becomes a page, "
        "receives the welcome with the pending approval card and approves its own `run_python`"
    ),
    stopped_by=(
        "A link's kind is fixed by the comm it opened: on `loom-agent` a hello without `agent` "
        "is refused with a notice and the link stays an agent's — no welcome, no card, its "
        "`approve` refused; the page's answer decides"
    ),
    ref="R8",
)
def test_a_second_hello_without_agent_does_not_make_the_agent_link_a_page(
    wire: Wire, agent: str
) -> None:
    """Security review R8: the agent's link re-hellos as a page and approves itself."""
    front = page(wire)
    request_id = send_call(wire, agent, "run_python", code="self_approved = 1")
    asked = front.wait(lambda: wire.events(front.comm, "approval"), "the approval card")[-1]
    before = len(wire.events(agent, "notice"))
    wire.send(agent, hello(documents=True, minor=3))  # "I am a page now"
    wire.send(agent, {"type": "approve", "request_id": asked["request_id"], "decision": "allow"})
    refusals = front.wait(lambda: wire.events(agent, "notice")[before + 1 :], "the refusals")
    said = [notice["message"] for notice in wire.events(agent, "notice")[before:]]
    assert any("names its agent" in message for message in said), said
    assert any("only says `hello` and calls tools" in message for message in said), said
    assert refusals
    assert not wire.events(agent, "welcome")
    assert not wire.events(agent, "approval")  # the pending card never reached it
    assert not wire.events(agent, "tool_started")
    wire.send(
        front.comm, {"type": "approve", "request_id": asked["request_id"], "decision": "deny"}
    )

    result = wait_result(wire, agent, request_id, "the denied call", front)
    assert result["is_error"] is True
    assert "NameError" in wire.value("'self_approved' in dir() or NameError")  # never ran
    closed = [
        e
        for e in wire.events(front.comm, "approval_closed")
        if e["request_id"] == asked["request_id"]
    ]
    assert [e["decision"] for e in closed] == ["deny"]
    close(wire, front.comm)


def test_a_page_and_the_agent_racing_one_approval_the_page_decides(wire: Wire, agent: str) -> None:
    """Both answer the same card at once: the agent's answer is refused, the page's runs."""
    front = page(wire)
    request_id = send_call(wire, agent, "run_python", code="raced = 'by the page'")
    asked = front.wait(lambda: wire.events(front.comm, "approval"), "the approval card")[-1]
    before = len(wire.events(agent, "notice"))
    answer = {"type": "approve", "request_id": asked["request_id"]}
    wire.send(agent, {**answer, "decision": "deny"})
    wire.send(front.comm, {**answer, "decision": "allow"})

    result = wait_result(wire, agent, request_id, "the raced call", front)
    assert result["is_error"] is False, result  # the page allowed it: the agent's deny was void
    assert wire.value("raced") == "'by the page'"
    refused = wire.events(agent, "notice")[before:]
    assert any("only says `hello` and calls tools" in n["message"] for n in refused)
    close(wire, front.comm)


def test_a_page_comm_takes_no_outside_call_and_no_agent_hello(wire: Wire) -> None:
    """The pages' target `loom` is a page's only: an `outside_call` is refused, and a hello
    naming an agent is not welcomed (an old bridge's way) — nor counted as a page."""
    front = page(wire)
    wire.send(front.comm, {"type": "outside_call", "request_id": "r1", "client": "x",
                           "tool": "inspect_variables", "input": {}})  # fmt: skip
    notice = front.wait(lambda: wire.events(front.comm, "notice"), "the refusal")[-1]
    assert "comes from an outside agent's own link" in notice["message"]
    assert not wire.events(front.comm, "outside_result")
    posing = wire.open_comm(hello(agent="Old Bridge", minor=1))
    refused = front.wait(lambda: wire.events(posing, "notice"), "the refused hello")[-1]
    assert "opens the `loom-agent` comm" in refused["message"]
    assert not wire.events(posing, "welcome")
    close(wire, front.comm)
    agent = agent_link(wire, "Counting Agent")
    assert wire.events(agent, "pages")[-1]["pages"] == 0  # the posing link is no page
    close(wire, posing)
    close(wire, agent)


def test_the_agent_hears_the_pages_and_which_shows_the_notebook(wire: Wire) -> None:
    """An agent link's hello is answered with `pages`: the live pages, whether one shows the
    notebook, and how long since one brought it on screen (`focus`)."""
    front = page(wire, on_screen=False)
    link = agent_link(wire, "Looking Agent", front)
    first = wire.events(link, "pages")[-1]
    assert (first["pages"], first["on_screen"]) == (1, False)
    wire.send(front.comm, {"type": "focus", "on_screen": True})  # its tab became current
    front.on_screen = True
    wire.send(link, hello(agent="Looking Agent", minor=3))  # ask again
    again = front.wait(lambda: wire.events(link, "pages")[1:], "the second pages")[-1]
    assert (again["pages"], again["on_screen"]) == (1, True)
    assert again["focused_ago"] is not None
    assert not wire.events(link, "welcome")
    close(wire, front.comm)
    close(wire, link)


def test_a_write_is_refused_at_once_when_the_page_closed_or_went_silent(
    wire: Wire, agent: str
) -> None:
    """Pages that went away are noticed, not waited for: a page that closed its comm, and a
    page that stopped answering (a browser tab that closed without closing its comm)."""
    closed = page(wire)
    close(wire, closed.comm)
    refused = call(wire, agent, "run_python", code="after_close = 1")
    assert refused["is_error"] is True
    assert "no page with the Loom sidebar is open" in text(refused)

    silent = page(wire)  # welcomed, then its tab closed: it never answers a ping again
    silent_request = send_call(wire, agent, "run_python", code="after_silence = 1")
    result = wait_result(wire, agent, silent_request, "the refusal")  # the page is not served
    assert result["is_error"] is True
    assert "no page with the Loom sidebar is open" in text(result)
    assert any(e["type"] == "ping" for e in wire.comm_events(silent.comm))
    assert not wire.events(silent.comm, "approval")  # no card for a page that is gone
    assert "NameError" in wire.value("'after_silence' in dir() or NameError")
    read = call(wire, agent, "read_notebook")  # nor is the notebook read through it (D1)
    assert "did not answer in time" not in text(read)
    assert not wire.events(silent.comm, "notebook_request")
    close(wire, silent.comm)
