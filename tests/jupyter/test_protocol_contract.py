"""The sidebar protocol written once: generated files are current, and every message type
round-trips through the Python codec and the generated TypeScript validator."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import sys
import typing
from pathlib import Path
from typing import Any

import pytest

from loom_jupyter.buildtools import contract
from loom_jupyter.cells import CellChange, ChangeResult, DocCell, Provenance, RevertStep
from loom_jupyter.host.wire import protocol as p
from loom_jupyter.jupyter.delegation.view import to_sidebar
from loom_jupyter.orchestrator import SubtaskView, TaskSnapshot

ROOT = Path(__file__).resolve().parents[2]
FRONT = ROOT / "labextension"
GENERATED = FRONT / "src" / "generated"
STALE = (
    "is stale: run `python -m loom_jupyter.buildtools.contract` at the repository root, "
    "then `jlpm build` in labextension/, and commit the result"
)


def run(*command: str | Path) -> str:
    proc = subprocess.run(
        [str(part) for part in command],
        cwd=FRONT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, f"{command[:2]} failed:\n{proc.stdout[-3000:]}\n{proc.stderr}"
    return proc.stdout


@pytest.fixture(scope="module")
def front_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The TypeScript generated afresh from the committed schema, and its validators
    compiled to CommonJS for node."""
    node = shutil.which("node")
    assert node is not None, "node is needed (the labextension build needs it too)"
    assert (FRONT / "node_modules").is_dir(), "run `pip install -e .` (it runs jlpm install)"
    out = tmp_path_factory.mktemp("generated")
    run(node, "scripts/generate-protocol.mjs", out)
    tsc = FRONT / "node_modules" / ".bin" / "tsc"
    flags = ("--module", "commonjs", "--target", "es2022", "--skipLibCheck")
    run(tsc, "--outDir", out / "cjs", *flags, out / "validators.ts")
    return out


def ts_verdicts(front_out: Path, samples: list[dict[str, Any]]) -> list[str | None]:
    """What the generated TypeScript validator says of each sample (None: valid)."""
    path = front_out / f"samples-{len(samples)}.json"
    path.write_text(json.dumps(samples))
    verdicts: list[str | None] = json.loads(
        run("node", "test/contract.cjs", front_out / "cjs" / "validators.js", path)
    )
    return verdicts


# -- one sample of every message type -------------------------------------------------

SUMMARY = p.SessionSummary("s1", "Churn", 3, 9, "claude-sonnet-5-5", "ask", "2026-01-02T03:04:05")
HISTORY = (
    p.HistoryItem("user", 1, "load the csv"),
    p.ToolItem(2, "c1", "run_python", {"code": "1 + 1"}, "ran", False, "2"),
    p.HistoryItem("assistant", 3, "Done."),
)
TASK = to_sidebar(
    TaskSnapshot(
        task_id="t1",
        goal="Profile every file",
        status="running",
        subtasks=(
            SubtaskView(
                id="load",
                description="Load",
                status="passed",
                attempt=1,
                elapsed_s=2.04,
                tokens=12,
                last_tool="run_python",
                reason="checked",
            ),
        ),
    )
)
OUTBOUND: tuple[p.Outbound, ...] = (
    p.Welcome(SUMMARY, HISTORY, 1, False, p.Status("idle"), (p.Queued("q1", "hi"),), True, (TASK,),
              None, p.ApprovalModeView("ask", "default"), p.TrustView("/srv", "changed", ()),
              commands=(p.SlashCommand("new", "", "start", front=True),
                        p.SlashCommand("rebuild", "NAME [NAME ...] [--yes]", "make again"))),
    p.History(HISTORY, None),
    p.TurnStartedMsg(4, "sidebar", "plot it", "q1"),
    p.TextMsg(4, "Here"),
    p.ThinkingMsg(4, "Let me look", False),
    p.OptionsMsg(p.ModelOptions("claude-sonnet-5-5", "adaptive", "high", True, ("low", "high"))),
    p.ToolInputMsg(4, "c2", "run_python", '{"code": "pl'),
    p.ToolStartedMsg(4, "c2", "run_python", "plot", {"code": "plot()"}),
    p.ToolFinishedMsg(4, "c2", "run_python", "plot", False, 31, "ok", {"code": "plot()"}),
    p.Approval("r1", "write_file", {"path": "a.py"}, "+ a = 1", "write a.py"),
    p.ApprovalClosed("r1", "always", "stdin"),
    p.UsageMsg(1200, 80, 0.0123, 1200, 200_000),
    p.TurnDoneMsg(4, "end_turn", "Here it is."),
    p.TurnErrorMsg(None, "overloaded", "ModelError"),
    p.TurnErrorMsg(None, "No Anthropic API key yet.", "MissingKeyError", "q3"),
    p.Status("waiting-cell", "waiting for your cell to finish"),
    p.QueueMsg((p.Queued("q2", "and then?"),)),
    p.SessionsMsg((p.SessionRow("s1", "Churn", 3, 9, "2026-01-02", "active", True),)),
    p.SessionChanged(None, (), None),
    p.SearchResults("churn", (p.SearchHitItem("s1", 1, "user", "churn", "phrase"),)),
    TASK,
    p.NoticeMsg("Kernel restarted — history intact.", "warning"),
    p.CellProposal("df.describe()"),
    p.NotebookRequest("n1", CellChange(
        "edit", "c1", None, "x = 2", "code", "x = 1", True,
        Provenance("s1", 4, "c2", "edited"), ({"output_type": "stream", "name": "stdout",
                                              "text": "2"},), 3,
        (RevertStep("c1", "edited", "x = 1", "x = 2", "code", 0, None),), False, True,
    )),
    p.Completions("d", (p.CompletionItem("variable", "df", "DataFrame (3, 2)"),
                        p.CompletionItem("cell", "cell:c1", "x = 1"),
                        p.CompletionItem("file", "data/", "folder"))),
    p.CommandResult("mcp", "**MCP servers**\n\n| server |\n|---|\n| toolbox |"),
    p.Origin("df.columns", "df", True, "cell [7]", "2026-11-24 08:30:11 UTC",
             "df = pd.read_csv('a.csv')", 2, (p.OriginStep("cell [2]", "import pandas as pd"),),
             1, 0.42, ""),
    p.ApprovalModeMsg(p.ApprovalModeView("auto", "project")),
    p.ApprovalModeMsg(
        p.ApprovalModeView(
            "ask",
            "env",
            managed="managed by your organisation (/etc/loom/managed.yaml): approval: ask at most",
            overrides=("approval: auto (a LOOM_* variable) is not allowed; ask is used (…)",),
            by_policy=True,
        )
    ),
    p.TrustMsg(p.TrustView("/srv/repo", "untrusted",
                           ("mcp server tools: sh -c 'id > ran'", "approval: auto")), True),
    p.KeyMsg(True, "~/.config/loom/anthropic-api-key (readable by you only)"),
    p.KeyMsg(False, "", "That does not look like an API key: nothing was saved."),
    p.ExamplesMsg(("Describe `df`: its columns, types and missing values", "Plot `df` by month")),
    p.OutsideResult("o1", False, (
        p.OutsidePart("text", "made 42"),
        p.OutsidePart("image", data="iVBORw0KGgo=", media_type="image/png"),
    )),
    p.Ping("ping-1"),
    p.PagesMsg(1, True, 2.5),
    p.PagesMsg(0, False),
)  # fmt: skip
INBOUND: tuple[p.Inbound, ...] = (
    p.Hello("nb.ipynb", 12, "k1", "notebook7", "/srv", p.PROTOCOL_MAJOR, True, p.PROTOCOL_MINOR),
    p.Send("q1", "hi"),
    p.CancelQueued("q1"),
    p.Stop(),
    p.SetOptions("adaptive", "default"),
    p.Approve("r1", "deny"),
    p.LoadMore(5),
    p.Sessions(),
    p.Resume("s1"),
    p.New(),
    p.Fork(3),
    p.Search("churn"),
    p.SetNotebook("renamed.ipynb", "/srv"),
    p.NotebookReply("n1", ChangeResult(
        True, "", "", (DocCell("c1", "code", "x = 2", 3, "2", None,
                               Provenance("s1", 4, "c2", "edited")),),
        DocCell("c1", "code", "x = 2"), 0, "x = 1", ("c3",),
    )),
    p.RevertTurn(4),
    p.Complete("df", "variable"),
    p.Command("delegate", "clean the data"),
    p.WhereFrom("df"),
    p.TrustDecisionMsg("trust"),
    p.SetKey("sk-ant-api03-not-a-real-key-0000"),
    p.Examples(),
    p.OutsideCall("o1", "Claude Code", "run_python", {"code": "answer = 42"}),
    p.Focus(True),
    p.Pong("ping-1", on_screen=True),
)  # fmt: skip


def wire(message: p.Outbound | p.Inbound) -> dict[str, Any]:
    """The JSON a message travels as: the kernel's encoding, or what a front sends."""
    if isinstance(message, typing.get_args(p.Inbound)):
        return dataclasses.asdict(message)
    return p.encode(message, seq=7, kernel_session="k1", turn=4)  # type: ignore[arg-type]


def direction(message: p.Outbound | p.Inbound) -> str:
    return "front" if isinstance(message, typing.get_args(p.Inbound)) else "kernel"


def test_there_is_a_sample_of_every_message_type() -> None:
    assert {type(m) for m in OUTBOUND} == set(typing.get_args(p.Outbound))
    assert {type(m) for m in INBOUND} == set(typing.get_args(p.Inbound))


# -- the contract -----------------------------------------------------------------------


def test_every_message_round_trips_through_the_codec_and_the_ts_validator(
    front_out: Path,
) -> None:
    messages = [*OUTBOUND, *INBOUND]
    samples = [{"direction": direction(m), "message": wire(m)} for m in messages]
    verdicts = ts_verdicts(front_out, samples)
    names = [type(m).__name__ for m in messages]
    assert dict(zip(names, verdicts, strict=True)) == dict.fromkeys(names)
    for message in OUTBOUND:
        envelope, back = p.decode(wire(message))
        assert back == message
        assert envelope == p.Envelope(7, "k1", getattr(message, "turn", 4))
    for inbound in INBOUND:
        assert p.parse_inbound(wire(inbound)) == inbound


def added_in_a_minor(message: p.Outbound | p.Inbound, field: str) -> bool:
    """Whether ``field`` of ``message`` (or of the envelope) came in a minor version."""
    owner = type(message) if field in {f.name for f in dataclasses.fields(message)} else p.Envelope
    return p.field_since(owner, field) is not None


def test_the_ts_validator_requires_every_field_the_python_side_sends(front_out: Path) -> None:
    drifted, names = [], []
    for message in [*OUTBOUND, *INBOUND]:
        for field in wire(message):
            shorter = {k: v for k, v in wire(message).items() if k != field}
            drifted.append({"direction": direction(message), "message": shorter})
            names.append(f"{type(message).__name__} without {field}")
    verdicts = ts_verdicts(front_out, drifted)
    accepted = [name for name, verdict in zip(names, verdicts, strict=True) if verdict is None]
    later = [
        f"{type(m).__name__} without {f}" for m in [*OUTBOUND, *INBOUND] for f in wire(m)
        if added_in_a_minor(m, f)
    ]  # fmt: skip
    assert later, "the samples carry the fields added in 1.1"
    assert accepted == later  # every 1.0 field is required; one added in a minor never is


# -- version skew: a page reads a kernel one minor version older or newer ---------------


def without_minor_fields(data: dict[str, Any], message: p.Outbound) -> dict[str, Any]:
    """What a 1.0 kernel sends: the message without the fields added since."""
    return {k: v for k, v in data.items() if not added_in_a_minor(message, k)}


def test_the_page_reads_a_welcome_from_a_kernel_one_minor_version_older(
    front_out: Path,
) -> None:
    welcome = next(m for m in OUTBOUND if isinstance(m, p.Welcome))
    old = without_minor_fields(wire(welcome), welcome)
    assert {"reply_to", "protocol", "commands"} <= wire(welcome).keys() - old.keys()
    older = [without_minor_fields(wire(m), m) for m in OUTBOUND]
    verdicts = ts_verdicts(front_out, [{"direction": "kernel", "message": m} for m in older])
    assert verdicts == [None] * len(OUTBOUND)
    envelope, back = p.decode(old)  # a Python client reads it too, with the defaults
    assert envelope.reply_to is None
    assert back == dataclasses.replace(welcome, protocol="1.0", commands=())


def test_the_page_reads_a_welcome_from_a_kernel_one_minor_version_newer(
    front_out: Path,
) -> None:
    welcome = next(m for m in OUTBOUND if isinstance(m, p.Welcome))
    newer = wire(welcome) | {"protocol": "1.5", "a_field_of_1_5": {"anything": [1, 2]}}
    newer["session"] = newer["session"] | {"pinned": True}  # inside values too
    newer["history"] = [item | {"starred": False} for item in newer["history"]]
    newer["state"] = newer["state"] | {"since_ms": 12}
    text = wire(p.TextMsg(4, "Here")) | {"reply_to": None, "style": "bold"}
    samples = [{"direction": "kernel", "message": m} for m in (newer, text)]
    assert ts_verdicts(front_out, samples) == [None, None]
    assert p.decode(newer)[1] == dataclasses.replace(welcome, protocol="1.5")


def test_the_kernel_reads_a_page_one_minor_version_older_or_newer() -> None:
    older = {"type": "search", "query": "churn"}  # a 1.0 page: no request_id
    assert p.parse_inbound(older) == p.Search("churn")
    assert p.reply_to(p.parse_inbound(older)) == ""
    newer = {"type": "search", "query": "churn", "request_id": "r7", "scope": "all"}
    assert p.parse_inbound(newer) == p.Search("churn", "r7")
    assert p.reply_to(p.parse_inbound(newer)) == "r7"
    assert p.reply_to(p.Approve("r1", "deny")) == ""  # an approval's id answers nothing
    hello = p.parse_inbound({"type": "hello", "protocol": 1, "minor": 3, "gadget": True})
    assert isinstance(hello, p.Hello)
    assert (hello.understood, hello.version) == (True, "1.3")
    legacy = p.parse_inbound({"type": "hello", "protocol": 1})  # the integer of a 1.0 page
    assert isinstance(legacy, p.Hello)
    assert (legacy.understood, legacy.version) == (True, "1.0")
    other = p.parse_inbound({"type": "hello", "protocol": 2, "minor": 0})
    assert isinstance(other, p.Hello)
    assert not other.understood
    assert (
        f"protocol 2.0, newer than the kernel's loom_jupyter (protocol {p.PROTOCOL_VERSION})"
        in (p.version_notice(other.version))
    )


def test_replies_and_broadcasts_are_told_apart_by_the_envelope() -> None:
    from loom_jupyter.host.runtime.replay import EventLog

    log = EventLog(kernel_session="k1")
    event = log.record(p.NoticeMsg("a broadcast"), None)
    reply = log.reply(p.NoticeMsg("to one front"))
    answer = log.reply(p.SessionsMsg(()), to="r7")
    assert (event["seq"], event["reply_to"]) == (1, None)
    assert (reply["seq"], reply["reply_to"]) == (1, "")  # the current seq, not advanced
    assert answer["reply_to"] == "r7"


def test_the_ts_validator_refuses_a_wrong_kind_and_a_foreign_value(front_out: Path) -> None:
    text = wire(p.TextMsg(1, "x"))
    samples = [
        {"direction": "kernel", "message": {**text, "delta": 5}},
        {"direction": "kernel", "message": {**wire(p.Status("idle")), "state": "dreaming"}},
        {"direction": "kernel", "message": {**text, "type": "dance"}},
        {"direction": "front", "message": {**wire(p.Approve("r1", "deny")), "decision": "maybe"}},
    ]
    verdicts = ts_verdicts(front_out, samples)
    assert verdicts[0] == "/delta must be string"
    assert all(verdict is not None for verdict in verdicts)


def test_the_kernel_reads_only_a_front_messages_own_fields() -> None:
    deep: dict[str, Any] = {}
    for _ in range(600):  # deeper than pydantic's JSON reader goes: ignored, never read
        deep = {"x": deep}
    assert p.parse_inbound({"type": "sessions", "extra": deep}) == p.Sessions()
    assert p.parse_inbound({"type": "hello", "kernel_session": 0}) == p.Hello()  # a hint only
    with pytest.raises(p.ProtocolError, match="'at_turn': input should be a valid integer"):
        p.parse_inbound({"type": "fork", "at_turn": "3"})


# -- generated files --------------------------------------------------------------------


def test_the_schema_and_the_page_tables_are_generated_from_protocol_py() -> None:
    for path, content in contract.render(ROOT).items():
        assert (ROOT / path).read_text(encoding="utf-8") == content, f"{path} {STALE}"


def test_the_committed_typescript_is_generated_from_the_schema(front_out: Path) -> None:
    committed = (GENERATED / "protocol.ts").read_text(encoding="utf-8")
    assert committed == (front_out / "protocol.ts").read_text(encoding="utf-8"), (
        f"labextension/src/generated/protocol.ts {STALE}"
    )


def test_the_page_tables_name_every_message_and_its_fields() -> None:
    tables = contract.tables(contract.schema())
    for table in tables.values():  # one line per row, or the markdown table breaks
        assert all(line[0] == line[-1] == "|" for line in table.splitlines())
    for message in [*OUTBOUND, *INBOUND]:
        table = tables["front-to-kernel" if direction(message) == "front" else "kernel-to-front"]
        row = next(line for line in table.splitlines() if line.startswith(f"| `{message.type}` |"))
        fields = [field.name for field in dataclasses.fields(message) if field.name != "type"]
        assert all(f"`{field}`:" in row for field in fields), row


# -- the kernel side stays light and quick ----------------------------------------------


def test_pydantic_loads_with_the_first_front_message_not_with_load_ext(tmp_path: Path) -> None:
    code = """
import sys
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance()
shell.run_line_magic("load_ext", "loom_jupyter")
print("pydantic" in sys.modules)
from loom_jupyter.host.wire.protocol import parse_inbound
parse_inbound({"type": "stop"})
print("pydantic" in sys.modules)
"""
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split()[-2:] == ["False", "True"]
