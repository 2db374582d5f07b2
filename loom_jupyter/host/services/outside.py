"""An outside agent's tool call, run through this kernel's host (DESIGN §14).

``loom-jupyter mcp`` lets an outside agent (Claude Code, any MCP client) call Loom's tools
in the notebook's kernel. Each call arrives as an ``outside_call`` on its link and passes
the session's one gate (:mod:`loom_jupyter.engine.gate`), exactly as the agent's own call:
the tool from the session's registry, the session's approval mode and the folder's trust,
the rails and the protected files checked after it, output redacted and capped. Its
questions go to the open pages' card; with no page to ask on, a write call is refused at
once with a word naming ``%cowork approval`` (the gate's :class:`Asker` is "nobody").
Notebook edits go through the page that holds the notebook (shown as diffs there). The call
takes the host's floor as a turn of its own: it waits for a running Loom turn (or says so
after :data:`WAIT_SECONDS`), a sidebar message sent meanwhile queues behind it, Stop ends
it, and its gate events reach every page as tool cards marked with the client's name. It is
archived in the notebook's session as a ``tool`` turn marked with the client's name, and the
model's next turn is told of it (:func:`outside_note`).
"""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import TYPE_CHECKING, Any, Protocol

from loom_jupyter.engine.events import ToolDraft, ToolFinished
from loom_jupyter.engine.gate import ToolCallDone, summarize_input
from loom_jupyter.errors import LoomError
from loom_jupyter.host.runtime.history import cap, first_line
from loom_jupyter.host.wire.protocol import (
    OutsidePart,
    OutsideResult,
    Status,
)
from loom_jupyter.messages import ImageBlock, TextBlock, ToolResultBlock, ToolUseBlock, TurnDraft
from loom_jupyter.tools.approval import Asker
from loom_jupyter.tools.base import ToolOutput
from loom_jupyter.tools.registry import OUTSIDE_TOOLS

if TYPE_CHECKING:
    from collections.abc import Mapping

    from loom_jupyter.host.runtime.floor import TurnFloor
    from loom_jupyter.host.services.executions import ExecutionLog
    from loom_jupyter.host.wire.protocol import OutsideCall
    from loom_jupyter.session.conversation import CoworkSession

__all__ = [
    "NO_NOTEBOOK_PAGE",
    "NO_PAGE",
    "STOPPED",
    "WAIT_SECONDS",
    "OutsideHost",
    "failed",
    "outside_note",
    "run_outside_call",
]

NOTE_LINES = 20
"""The most outside calls a turn's note lists (the newest)."""
WAIT_SECONDS = 120.0
"""How long a call waits for a running Loom turn before it says so."""
NO_PAGE = (
    "{tool} changes the notebook's kernel or cells, and this notebook's approval mode is "
    "`ask`, but no page with the Loom sidebar is open on it to ask the person, so it was not "
    "run. Ask the person to open the notebook in JupyterLab (the Loom sidebar shows the "
    "approval card), or to run `%cowork approval auto` in a cell to let calls run without "
    "asking; then call it again."
)
NO_NOTEBOOK_PAGE = (
    "insert_cell needs the notebook open in JupyterLab: Loom inserts cells through its page, "
    "and no page holds this notebook now. Ask the person to open it, then call again (or run "
    "the code with run_python)."
)
STOPPED = (
    "The person pressed Stop in the Loom sidebar, so this call was stopped (code it had "
    "started in the kernel may have run in part). Ask them before calling it again."
)


class OutsideHost(Protocol):
    """What an outside call needs of the :class:`~loom_jupyter.host.host.Host`."""

    @property
    def floor(self) -> TurnFloor:
        """One turn (or outside call) at a time; the stream every page sees."""
        ...

    async def session_async(self) -> CoworkSession:
        """The conversation, once the host has opened it."""
        ...

    @property
    def executions(self) -> ExecutionLog:
        """The archived executions: where a variable came from."""
        ...


def failed(request_id: str, message: str) -> OutsideResult:
    """An error result carrying ``message``."""
    return OutsideResult(request_id, True, (OutsidePart("text", message),))


async def run_outside_call(host: OutsideHost, call: OutsideCall) -> OutsideResult:
    """Run ``call`` through the host (engine loop) and archive it; never raises for the
    call's own problems (an unknown tool, bad input, a refusal: an error result)."""
    if call.tool not in OUTSIDE_TOOLS:
        known = ", ".join(OUTSIDE_TOOLS)
        return failed(call.request_id, f"Unknown tool {call.tool!r}. Loom's tools: {known}.")
    client = " ".join(call.client.split())[:80] or "An outside agent"
    session = await host.session_async()
    floor = host.floor
    if not await floor.until_idle(WAIT_SECONDS):
        who = "the sidebar" if floor.sidebar_turn() else "a cell"
        return failed(
            call.request_id,
            f"A Loom turn started from {who} is running in this notebook; this call waited "
            f"{WAIT_SECONDS:.0f} s for it. Call again once it ends (the person can press "
            "Stop in the Loom sidebar).",
        )
    floor.begin("outside", client, None)  # no await since the wait: nothing overtook it
    try:
        return await _run(host, session, call, client)
    finally:
        floor.end()


async def _run(
    host: OutsideHost, session: CoworkSession, call: OutsideCall, client: str
) -> OutsideResult:
    floor = host.floor
    sid = await session.ensure_session_id()
    number = await session.archive.last_turn_number(sid) + 1  # the row this call becomes
    use = ToolUseBlock(f"outside_{uuid.uuid4().hex[:20]}", call.tool, dict(call.input))
    if floor.mirror is not None:
        floor.mirror.turn = number  # its tool card and messages are numbered as its row
    floor.broadcast(Status("thinking", f"{client} runs {call.tool}"), number)
    await floor.publish(ToolDraft(use.id, use.name, json.dumps(use.input, default=str)))
    session.answering = number  # its executions are recorded under this turn
    running = asyncio.ensure_future(_output(host, session, use, sid, number))
    floor.stop_outside = running.cancel  # the sidebar's Stop ends the call
    try:
        await asyncio.wait({running})
        output = _error(STOPPED) if running.cancelled() else running.result()
    except LoomError as exc:
        output = _error(str(exc))
    finally:
        session.answering, floor.stop_outside = None, None
    text = output.text_content
    blocks = tuple(b for b in output.content if isinstance(b, TextBlock | ImageBlock))
    draft = TurnDraft(
        role="tool",
        content=text,
        blocks=(ToolResultBlock(use.id, blocks, output.is_error),),
        tool_name=use.name,
        tool_call_id=use.id,
        tool_input=dict(use.input),
        is_error=output.is_error,
        token_count=_tokens(text, blocks),
        kernel_session=session.owner,
    )
    number = await session.archive.append_outside_call(sid, draft, client)
    line = output.summary or first_line(text) or summarize_input(use)
    await floor.publish(
        ToolFinished(use.id, use.name, line, output.is_error, number, dict(use.input), cap(text))
    )
    failed_word = " — it failed" if output.is_error else ""
    floor.outside_seen.append(f"- {client} ran {use.name} ({line}){failed_word}: turn {number}")
    return OutsideResult(call.request_id, output.is_error, _parts(blocks))


def outside_note(floor: TurnFloor) -> str | None:
    """What outside agents did since the last turn, for the model (None: nothing); told
    once. Their calls are ``tool`` rows of no call of the model's, so its window leaves them
    out: this note is how it knows."""
    seen, floor.outside_seen = floor.outside_seen, []
    if not seen:
        return None
    shown = seen[-NOTE_LINES:]
    more = f"\n- … and {len(seen) - len(shown)} earlier call(s)" if len(seen) > len(shown) else ""
    return (
        "Since your last turn, an outside agent worked in this notebook through "
        "loom-jupyter mcp (Loom's tools, run and archived here; conversation_recall "
        "action=tool_calls shows their results):\n" + "\n".join(shown) + more
    )


async def _output(
    host: OutsideHost, session: CoworkSession, use: ToolUseBlock, sid: str, number: int
) -> ToolOutput:
    """The call through the session's one gate (the agent's own steps), asking in the open
    pages or nobody; the gate's question and start reach every page as the agent's do."""
    if use.name == "variable_provenance":
        return await _provenance(host, use.input)
    document = session.environment.document
    page = document is not None and document.available
    if use.name == "insert_cell" and not page:  # the kernel's next-cell proposal reaches no one
        return _error(NO_NOTEBOOK_PAGE)
    policy = session.policy
    asker = Asker(policy.approver if host.floor.can_ask() else None, NO_PAGE.format(tool=use.name))
    gate = session.environment.gate(asker)
    output = _error(f"{use.name} ended without a result.")
    async for event in gate.run(use, session.tool_context(sid, number)):
        if isinstance(event, ToolCallDone):
            output = event.output
        else:
            await host.floor.publish(event)
    return output


async def _provenance(host: OutsideHost, args: Mapping[str, Any]) -> ToolOutput:
    """``variable_provenance``: the lineage trace of one variable, as text."""
    from loom_jupyter.host.services.origins import check_name
    from loom_jupyter.tools.rebuild import provenance_text

    name = args.get("name")
    extra = sorted(set(args) - {"name"})
    if not isinstance(name, str) or extra:
        problem = f"unexpected field(s) {', '.join(extra)}" if extra else "'name' must be a string"
        return _error(
            f"Invalid input for variable_provenance: {problem}. Call it with "
            '{"name": "df"}: the variable whose origin you want.'
        )
    try:
        variable = check_name(name)
    except LoomError as exc:
        return _error(f'{exc}. Give a variable\'s name, e.g. {{"name": "df"}}.')
    text = provenance_text(await host.executions.trace(variable))
    return ToolOutput.text(text, summary=first_line(text))


def _error(message: str) -> ToolOutput:
    return ToolOutput.error(message)


def _tokens(text: str, blocks: tuple[TextBlock | ImageBlock, ...]) -> int:
    from loom_jupyter.engine.tokens import turn_tokens

    return turn_tokens(text, blocks)


def _parts(blocks: tuple[TextBlock | ImageBlock, ...]) -> tuple[OutsidePart, ...]:
    parts = []
    for block in blocks:
        if isinstance(block, ImageBlock):
            parts.append(OutsidePart("image", data=block.data, media_type=block.media_type))
        elif block.text:
            parts.append(OutsidePart("text", block.text))
    return tuple(parts) or (OutsidePart("text", "(no output)"),)
