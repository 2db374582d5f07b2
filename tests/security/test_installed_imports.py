"""Loom never imports from the notebook's folder (DESIGN §12), in real kernels.

A cloned repository is opened: Jupyter starts the kernel in its folder, and IPython puts
that folder on ``sys.path`` ahead of site-packages. The folder here ships a copy of every
top-level module Loom might import late: each name any ``loom_jupyter`` module imports
(read from the code, :func:`imported_by_loom`), and — in a second kernel — also each name
Loom's dependencies imported for Loom while the first kernel was driven (a recorder in
``sys.meta_path`` notes whose each first import was). Each copy leaves a marker file when
imported, then hands over to the real module so the kernel runs on. Each kernel is loaded
the sidebar's way, then driven through everything a person or page can ask: every
``%cowork`` subcommand (``SUBCOMMANDS``), ``%delegate``, a turn that calls every read tool
(and ``run_python``; a regex ``search_files`` runs a child process), every message type a
page sends (``Inbound``) with every kernel-answered slash command, and an outside agent's
calls. No copy Loom imported may run, and the person's own modules beside the notebook
still import in a cell and in ``run_python``.

Out of Loom's reach, and so not counted: the copies ipykernel and IPython import
themselves with no Loom code on the stack (the recorder says whose each import was); the
copies are planted once the kernel has started, as ipykernel's own start-up imports
(``re``, ``json``, ...) are out of reach too.
"""

from __future__ import annotations

import ast
import asyncio
import dataclasses
import functools
import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args

import pytest
from jupyter_client.manager import start_new_kernel
from kernel.sidebar_wire import Wire, hello

import loom_jupyter
from loom_jupyter.host.commands.registry import commands_for
from loom_jupyter.host.wire.protocol import Inbound
from loom_jupyter.jupyter.autoload import TS_PATH, load_code, load_code_ts
from loom_jupyter.jupyter.magics.commands import SUBCOMMANDS
from loom_jupyter.messages import ToolUseBlock
from loom_jupyter.settings import Settings
from loom_jupyter.testing import FakeAnthropic
from loom_jupyter.tools.approval import ApprovalPolicy
from loom_jupyter.tools.base import ToolContext
from loom_jupyter.tools.local_kernel import LocalKernel
from loom_jupyter.tools.registry import default_registry

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from loom_jupyter.tools.approval import ApprovalRequest

REPO = Path(loom_jupyter.__file__).resolve().parents[1]
INSTALLED = str(Path(loom_jupyter.__file__).resolve())
KEY = "sk-ant-api03-" + "d" * 40  # shaped like a key, valid nowhere
# Imported with the folder's entries out of sys.path, then put in place of this copy.
HANDOVER = """\
import importlib, os, sys
open({mark!r}, "w").close()
del sys.modules[__name__]
_saved = list(sys.path)
sys.path[:] = [p for p in _saved if os.path.realpath(p or ".") != {folder!r}]
try:
    _real = importlib.import_module(__name__)
finally:
    sys.path[:] = _saved
sys.modules[__name__] = _real
"""
# Whose each first import of a top-level name is: "loom" when, from the importer outward,
# a frame of Loom's code comes before any frame of a cell (``__main__``), else "other".
RECORDER = """\
def _record_imports():
    import sys

    class LoomImportRecorder:
        def __init__(self):
            self.first = {}
            self.frame = sys._getframe

        def find_spec(self, name, path=None, target=None):
            if path is None and name not in self.first:
                frame, who = self.frame(1), "other"
                while frame is not None:
                    module = frame.f_globals.get("__name__")
                    if module == "__main__":
                        break
                    if isinstance(module, str) and module.partition(".")[0] == "loom_jupyter":
                        who = "loom"
                        break
                    frame = frame.f_back
                self.first[name] = who
            return None

    sys.meta_path.insert(0, LoomImportRecorder())


_record_imports()
del _record_imports
"""
RECORDED = (
    "next(f.first for f in __import__('sys').meta_path if type(f).__name__ == 'LoomImportRecorder')"
)


def imported_by_loom() -> set[str]:
    """Every top-level module name a ``loom_jupyter`` module imports, anywhere in it."""
    names: set[str] = set()
    for path in (REPO / "loom_jupyter").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names |= {alias.name.partition(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.partition(".")[0])
    return names - {"__future__"}


def plant(folder: Path, marks: Path, files: Iterable[str]) -> None:
    """The folder's copies: each leaves ``marks/<module>`` when imported."""
    real = os.path.realpath(folder)
    for name in files:
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        mark = str(marks / name.split("/")[0].removesuffix(".py"))
        path.write_text(HANDOVER.format(mark=mark, folder=real))


def module_files(names: Iterable[str]) -> list[str]:
    """A copy per name: ``loom_jupyter`` as a package, the rest as modules."""
    return [f"{n}/__init__.py" if n == "loom_jupyter" else f"{n}.py" for n in sorted(names)]


def markers(marks: Path) -> list[str]:
    """The folder's copies that ran."""
    return sorted(p.name for p in marks.iterdir())


# -- the fake Messages API: the read-tools turn, delegations, echo for the rest -----------

READ_TURN = "Drive every read tool please"
GOAL = "Summarise the notes file"
READ_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("conversation_recall", {"action": "summary"}),
    ("inspect_variables", {}),
    ("inspect_variables", {"name": "x"}),
    ("read_notebook", {}),
    ("read_file", {"path": "notes.txt"}),
    ("load_skill", {"name": "notes-style"}),  # the person's skill (its YAML, its listing)
    ("list_files", {}),
    ("search_files", {"pattern": "alpha"}),
    ("search_files", {"pattern": "al.ha", "regex": True}),  # a child process
    ("delegate_task", {"goal": GOAL}),
    ("run_python", {"code": "import agent_helper\nprint(agent_helper.VALUE)"}),  # the person's
]
PLAN: dict[str, Any] = {
    "subtasks": [
        {
            "id": "notes",
            "description": "Read notes.txt and say what it holds",
            "depends_on": [],
            "acceptance": "the lines are named",
            "check": None,
        }
    ]
}


def _texts(message: dict[str, Any]) -> list[str]:
    content = message["content"]
    if isinstance(content, str):
        return [content]
    return [b["text"] for b in content if b.get("type") == "text"]


def respond(body: dict[str, Any]) -> Any:
    """The planner, the judge, and the read-tools turn (one tool a request); else echo."""
    choice = (body.get("tool_choice") or {}).get("name")
    if choice == "submit_plan":
        return {"content": [{"type": "tool_use", "name": "submit_plan", "input": PLAN}]}
    if choice == "submit_verdict":
        verdict = {"verdict": "pass", "feedback": "fine"}
        return {"content": [{"type": "tool_use", "name": "submit_verdict", "input": verdict}]}
    messages = body["messages"]
    asked = [
        i
        for i, m in enumerate(messages)
        if m["role"] == "user" and any(not t.startswith("<") for t in _texts(m))
    ]
    if not asked or not any(READ_TURN in t for t in _texts(messages[asked[-1]])):
        return None
    done = sum(
        1
        for m in messages[asked[-1] :]
        if isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    )
    if done < len(READ_CALLS):
        name, tool_input = READ_CALLS[done]
        return {"content": [{"type": "tool_use", "name": name, "input": tool_input}]}
    return "Every read tool ran."


# -- driving a kernel ------------------------------------------------------------------


def run_cell(wire: Wire, code: str, answers: tuple[str, ...] = ()) -> str:
    """Run a cell to its end, typing ``answers`` into its prompts; what it printed."""
    return wire.typed(code, answers)[0]


def names(wire: Wire) -> list[str]:
    """The person's namespace, read without adding to it (a silent user expression)."""
    return list(ast.literal_eval(silent_value(wire, "sorted(globals())")))


def silent_value(wire: Wire, expression: str) -> str:
    """The repr of ``expression``, evaluated without a trace in the person's history."""
    msg_id = wire.kc.execute(
        "", silent=True, store_history=False, user_expressions={"v": expression}
    )
    found = wire.reply_of(msg_id)["user_expressions"]["v"]
    assert found["status"] == "ok", found
    return str(found["data"]["text/plain"])


def autoload(wire: Wire) -> dict[str, Any]:
    """The sidebar's request, exactly (labextension/src/connection.ts ``load``)."""
    msg_id = wire.kc.execute(load_code(), silent=True, store_history=False, allow_stdin=False)
    return wire.reply_of(msg_id)


class Comm:
    """A comm the test speaks for, waiting on replies by their ``reply_to``."""

    def __init__(self, wire: Wire, data: dict[str, Any], target: str = "loom") -> None:
        self.wire, self.id, self.count = wire, wire.open_comm(data, target=target), 0

    def send(self, data: dict[str, Any]) -> None:
        self.wire.send(self.id, data)

    def ask(self, data: dict[str, Any]) -> dict[str, Any]:
        """Send a request; its reply (or the notice that answers it)."""
        self.count += 1
        request_id = f"drive-{self.count}"
        self.send({**data, "request_id": request_id})
        return self.wire.wait(lambda: self._reply(request_id), f"the reply to {data}")

    def _reply(self, request_id: str) -> dict[str, Any] | None:
        found = (e for e in self.wire.comm_events(self.id) if e.get("reply_to") == request_id)
        return next(found, None)

    def events(self, kind: str) -> list[dict[str, Any]]:
        return self.wire.events(self.id, kind)


def inbound_types() -> set[str]:
    """Every message type a page (or an outside agent's link) sends."""
    return {
        str(next(f.default for f in dataclasses.fields(cls) if f.name == "type"))
        for cls in get_args(Inbound)
    }


@dataclass
class Driven:
    """What one driven kernel showed."""

    planted: set[str]
    ran: list[str] = field(default_factory=list)  # the markers: copies that ran
    first_imports: dict[str, str] = field(default_factory=dict)  # name -> "loom" | "other"
    loaded: dict[str, Any] = field(default_factory=dict)  # the auto-load's execute_reply
    again: dict[str, Any] = field(default_factory=dict)  # the Load button, Loom loaded
    names_before: list[str] = field(default_factory=list)
    names_after: list[str] = field(default_factory=list)
    loom_file: str = ""
    help_text: str = ""
    helper_in_cell: str = ""
    tool_results: str = ""  # the read-tools turn's results, as the model got them
    origins: dict[str, str] = field(default_factory=dict)  # dependencies' real files
    driven: dict[str, set[str]] = field(default_factory=dict)  # what was asked, by kind

    def loom_ran(self) -> list[str]:
        """Copies that ran for Loom's imports: everything but ipykernel's and IPython's."""
        return [n for n in self.ran if self.first_imports.get(n) != "other"]


CELL_ARGS: dict[str, tuple[str, tuple[str, ...]]] = {
    "sessions": ("", ()),
    "search": ("alpha", ()),
    "status": ("", ()),
    "cost": ("", ()),
    "model": ("", ()),
    "effort": ("", ()),
    "thinking": ("", ()),
    "approval": ("", ()),
    "provenance": ("x", ()),
    "rebuild": ("x", ("n",)),
    "export": ("", ()),
    "instructions": ("", ()),
    "skills": ("", ()),
    "mcp": ("", ()),
    "trust": ("", ("n", "n")),
    "adopt": ("gone.ipynb", ()),
    "recover": ("", ()),
    "login": ("", (KEY,)),
    "logout": ("", ()),
    "fork": ("", ()),
    "new": ("", ()),
    "resume": ("1", ()),
    "close": ("", ()),
    "delete": ("2 --yes", ("n",)),
}
"""Each ``%cowork`` subcommand's arguments and typed answers: none blocks."""
SLASH_ARGS = {"delegate": f"Sidebar: {GOAL}", "rebuild": "x"}
NOTEBOOK = {
    "cells": [
        {
            "cell_type": "code",
            "id": "a1",
            "metadata": {},
            "source": "x = 1",
            "outputs": [],
            "execution_count": None,
        }
    ],
    "metadata": {},
    "nbformat": 4,
    "nbformat_minor": 5,
}


def drive(root: Path, fake: FakeAnthropic, planting: set[str], cache: Path) -> Driven:
    """A kernel in a cloned folder that ships ``planting``, driven through everything."""
    folder, marks, home = root / "repo", root / "marks", root / "home"
    for made in (folder / ".git", marks, home):
        made.mkdir(parents=True)
    notebook = folder / "analysis.ipynb"
    notebook.write_text(json.dumps(NOTEBOOK))
    (folder / "helper_mod.py").write_text("VALUE = 42\n")
    (folder / "agent_helper.py").write_text("VALUE = 'from the folder'\n")
    (folder / "notes.txt").write_text("alpha\nbeta\n")
    skill = home / ".config" / "loom" / "skills" / "notes-style"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: notes-style\ndescription: How notes read.\n---\nBe brief.\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "LOOM_", "JPY_"))}
    env.update(
        JPY_SESSION_NAME=str(notebook),
        ANTHROPIC_BASE_URL=fake.base_url,
        ANTHROPIC_API_KEY="test-key",
        LOOM_APPROVAL="auto",
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        MPLCONFIGDIR=str(cache),  # matplotlib's font cache, made once for both kernels
    )
    km, kc = start_new_kernel(kernel_name="python3", env=env, cwd=str(folder))
    wire = Wire(km, kc)
    out = Driven(planting)
    try:
        msg_id = wire.kc.execute(RECORDER, silent=True, store_history=False)
        assert wire.reply_of(msg_id)["status"] == "ok"
        plant(folder, marks, module_files(planting))
        out.names_before = names(wire)
        out.loaded = autoload(wire)
        out.names_after = names(wire)
        out.again = autoload(wire)
        out.loom_file = silent_value(
            wire, "__import__('os').path.realpath(__import__('loom_jupyter').__file__)"
        )
        _drive_cells(wire, out)
        _drive_pages(wire, out, notebook)
        out.tool_results = json.dumps(
            [r.body for r in fake.message_requests if r.body and READ_TURN in json.dumps(r.body)]
        )
        for name in ("yaml", "anthropic", "pydantic", "aiosqlite", "matplotlib"):
            out.origins[name] = silent_value(
                wire,
                f"__import__('os').path.realpath(__import__('sys').modules[{name!r}].__file__)",
            )
        out.first_imports = ast.literal_eval(silent_value(wire, RECORDED))
        out.ran = markers(marks)
    finally:
        wire.shutdown()
    return out


def _drive_cells(wire: Wire, out: Driven) -> None:
    out.help_text = run_cell(wire, "%cowork --help")
    run_cell(wire, "x = 1")
    out.helper_in_cell = run_cell(wire, "import helper_mod\nprint(helper_mod.VALUE)")
    run_cell(wire, f"%cowork {READ_TURN}")
    run_cell(wire, f"%delegate {GOAL}")
    run_cell(wire, "%delegate status")
    for name, (args, answers) in CELL_ARGS.items():
        run_cell(wire, f"%cowork {name} {args}".rstrip(), answers)
    out.driven["%cowork"] = set(CELL_ARGS)


def _answered(agent: Comm, request_id: str) -> bool:
    return any(e["request_id"] == request_id for e in agent.events("outside_result"))


def _drive_pages(wire: Wire, out: Driven, notebook: Path) -> None:
    page = Comm(wire, hello(notebook_path=str(notebook)))
    wire.wait(lambda: page.events("welcome"), "the sidebar's welcome")
    agent = Comm(wire, hello(agent="Drive Agent"), target="loom-agent")
    sent = {"hello"}
    page.send(hello(notebook_path=str(notebook)))  # a re-sync
    done = len(page.events("turn_done"))
    page.send({"type": "send", "client_id": "drive-send", "text": "hello from the sidebar"})
    wire.wait(lambda: len(page.events("turn_done")) > done, "the sidebar's turn")
    sent.add("send")
    for request in (
        {"type": "load_more", "before_turn": 3},
        {"type": "sessions"},
        {"type": "search", "query": "alpha"},
        {"type": "complete", "query": "", "kind": "all"},
        {"type": "where_from", "name": "x"},
        {"type": "examples"},
    ):
        page.ask(request)
        sent.add(str(request["type"]))
    slash = [s.name for s in commands_for("sidebar") if "sidebar" not in s.by_front]
    for name in slash:
        page.ask({"type": "command", "name": name, "args": SLASH_ARGS.get(name, "")})
    wire.wait(
        lambda: any(
            e["goal"] == SLASH_ARGS["delegate"] and e["status"] not in ("planning", "running")
            for e in page.events("task")
        ),
        "the sidebar's delegation",
    )
    sent.add("command")
    for tool, tool_input in (
        ("inspect_variables", {}),
        ("variable_provenance", {"name": "x"}),
        ("conversation_recall", {"action": "summary"}),
    ):
        call = {"type": "outside_call", "client": "Drive Agent", "tool": tool, "input": tool_input}
        agent.count += 1
        request_id = f"outside-{agent.count}"
        agent.send({**call, "request_id": request_id})
        wire.wait(functools.partial(_answered, agent, request_id), f"the outside call {tool}")
    sent.add("outside_call")
    for message in (
        {"type": "cancel_queued", "client_id": "drive-nothing"},
        {"type": "stop"},
        {"type": "approve", "request_id": "drive-nothing", "decision": "deny"},
        {"type": "new"},
        {"type": "resume", "session": "1"},
        {"type": "fork", "at_turn": None},
        {"type": "set_notebook", "path": str(notebook), "server_root": ""},
        {"type": "notebook_reply", "request_id": "drive-nothing", "result": {"ok": False}},
        {"type": "revert_turn", "turn": 1},
        {"type": "set_options", "thinking": "off", "effort": "low"},
        {"type": "trust_decision", "decision": "deny"},
        {"type": "focus", "on_screen": True},
        {"type": "pong", "ping_id": "drive-nothing", "on_screen": True},
    ):
        page.send(message)
        sent.add(str(message["type"]))
    keys = len(page.events("key"))
    page.send({"type": "set_key", "key": KEY})
    wire.wait(lambda: len(page.events("key")) > keys, "the key's reply")
    sent.add("set_key")
    page.ask({"type": "sessions"})  # after everything sent before it
    out.driven["page"] = sent
    out.driven["slash"] = set(slash)


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic(responder=respond) as server:
        yield server


@pytest.fixture(scope="module")
def mplconfig(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("mplconfig")


@pytest.fixture(scope="module")
def first(tmp_path_factory: pytest.TempPathFactory, fake: FakeAnthropic, mplconfig: Path) -> Driven:
    """Every name Loom's code imports, planted; the recorder finds what else Loom imported."""
    return drive(tmp_path_factory.mktemp("first"), fake, imported_by_loom(), mplconfig)


@pytest.fixture(scope="module")
def second(
    tmp_path_factory: pytest.TempPathFactory, fake: FakeAnthropic, mplconfig: Path, first: Driven
) -> Driven:
    """...and every name Loom's dependencies imported for Loom in the first kernel."""
    lazily = {name for name, who in first.first_imports.items() if who == "loom"}
    return drive(tmp_path_factory.mktemp("second"), fake, first.planted | lazily, mplconfig)


@pytest.mark.kernel
@pytest.mark.attack(
    attack=(
        "Opening a notebook runs a cloned folder's `loom_jupyter/__init__.py`: the sidebar's "
        "auto-load ran `%load_ext loom_jupyter` with the folder first on `sys.path`"
    ),
    stopped_by=(
        "The auto-load imports `loom_jupyter` with the folder's `sys.path` entries left out, "
        "then loads it; it leaves no names in the notebook's namespace"
    ),
    ref="F2",
)
def test_the_sidebars_autoload_loads_the_installed_loom(first: Driven) -> None:
    assert first.loaded["status"] == "ok", first.loaded
    assert "loom_jupyter" in first.planted
    assert "loom_jupyter" not in first.ran
    assert first.names_after == first.names_before  # no name left in the namespace
    assert first.loom_file == repr(INSTALLED)
    assert "%cowork sessions" in first.help_text
    assert first.again["status"] == "ok", first.again  # the Load button, Loom loaded


@pytest.mark.kernel
@pytest.mark.attack(
    attack=(
        "A cloned folder's `yaml/`, `anthropic/`, `pydantic/`, `matplotlib/` or `aiosqlite.py` "
        "runs when Loom first imports the name (opening the archive, the first turn, the "
        "sidebar, the panel)"
    ),
    stopped_by=(
        "`%load_ext` installs an import finder: an import made while Loom's code is on the "
        "call stack (any thread; what Loom calls too) finds top-level modules only where "
        "they are installed; the person's imports (cells, `run_python`) are unchanged"
    ),
    ref="F2",
)
def test_loom_s_later_imports_and_its_child_skip_the_folder_and_the_persons_do_not(
    first: Driven, second: Driven
) -> None:
    tools = {n for n in default_registry().names() if default_registry().access(n) == "read"}
    assert tools <= {name for name, _ in READ_CALLS}  # a new read tool: drive it too
    assert set(SUBCOMMANDS) == first.driven["%cowork"]  # a new subcommand: drive it too
    assert inbound_types() == first.driven["page"]  # a new message type: send it too
    lazily = second.planted - first.planted
    assert {"keyring", "yaml", "anthropic", "pydantic", "aiosqlite"} <= first.planted
    assert lazily, "the first kernel saw Loom's dependencies import nothing"
    for run in (first, second):
        assert run.loom_ran() == [], f"the folder's copies ran for Loom: {run.loom_ran()}"
        assert run.helper_in_cell.strip() == "42"  # a cell imports from the folder
        assert "from the folder" in run.tool_results  # and so does run_python
        assert "notes.txt:1: alpha" in run.tool_results  # the regex search's child
        for name, origin in run.origins.items():
            assert "site-packages" in origin, (name, origin)


@pytest.mark.attack(
    attack=(
        "A `re.py`, `json.py` or `loom_jupyter/` in the notebook's folder runs when the agent "
        "does one regex `search_files` (a read tool: never asked)"
    ),
    stopped_by=(
        "The regex worker runs as `python -I` (no folder on `sys.path`, `PYTHON*` ignored) in "
        "the folder Loom is installed in"
    ),
    ref="F4",
)
async def test_the_regex_worker_never_imports_from_the_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The kernel's folder (here the current one) was the child's before this rule."""
    folder, marks = tmp_path / "repo", tmp_path / "marks"
    folder.mkdir()
    marks.mkdir()
    plant(folder, marks, ("re.py", "json.py", "loom_jupyter/__init__.py"))
    (folder / "notes.txt").write_text("alpha\nbeta\n")
    monkeypatch.chdir(folder)
    ctx = ToolContext(notebook_dir=folder, settings=Settings(), kernel=LocalKernel())
    asked: list[str] = []

    async def approver(request: ApprovalRequest) -> Literal["deny"]:
        asked.append(request.tool_name)
        return "deny"

    policy = ApprovalPolicy("ask", approver=approver)
    call = ToolUseBlock("toolu_1", "search_files", {"pattern": "al.ha", "regex": True})
    out = await asyncio.wait_for(default_registry().run(call, ctx, policy=policy), 120)
    assert not out.is_error, out.text_content
    assert "notes.txt:1: alpha" in out.text_content
    assert asked == []  # a read tool: nobody was asked, so nothing else may stop it
    assert markers(marks) == []


@pytest.mark.attack(
    attack=(
        "In a kernel whose Python lacks Loom, the sidebar's auto-load imports the cloned "
        "folder's `loom_jupyter/`"
    ),
    stopped_by="The auto-load refuses a `loom_jupyter` found only in the folder, and names it",
    ref="F2",
)
def test_the_autoload_refuses_a_loom_found_only_in_the_folder(tmp_path: Path) -> None:
    """A Python with IPython but without loom_jupyter (a venv that sees the project's
    site-packages, where loom_jupyter is only an editable install's .pth): the folder's
    copy is named and refused, never run."""
    venv, folder, marks = tmp_path / "venv", tmp_path / "repo", tmp_path / "marks"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    ours = next(p for p in sys.path if p.endswith("site-packages") and Path(p).is_dir())
    (Path(site) / "deps.pth").write_text(ours + "\n")  # a path, not its .pth files
    folder.mkdir()
    marks.mkdir()
    plant(folder, marks, ("loom_jupyter/__init__.py",))
    script = tmp_path / "load.ipy"
    script.write_text(
        "try:\n"
        f"    exec(compile({load_code()!r}, 'autoload', 'exec'))\n"
        "except ImportError as exc:\n"
        "    print('REFUSED', exc)\n"
    )
    skip = ("PYTHON", "LOOM_", "JPY_", "VIRTUAL_ENV")  # IPython adds VIRTUAL_ENV's site-packages
    env = {k: v for k, v in os.environ.items() if not k.startswith(skip)}
    env["XDG_CONFIG_HOME"] = str(tmp_path / "config")
    done = subprocess.run(
        [str(python), "-m", "IPython", "--quick", "--no-banner", str(script)],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert "REFUSED loom_jupyter is not installed for this kernel's Python" in done.stdout, (
        done.stdout + done.stderr
    )
    assert str(folder / "loom_jupyter" / "__init__.py") in done.stdout
    assert markers(marks) == []


def test_the_page_sends_this_load_code() -> None:
    """labextension/src/generated/autoload.ts is made from autoload.py (regenerate with
    ``python -m loom_jupyter.jupyter.autoload``), and connection.ts sends it."""
    assert (REPO / TS_PATH).read_text(encoding="utf-8") == load_code_ts()
    connection = (REPO / "labextension" / "src" / "connection.ts").read_text(encoding="utf-8")
    assert "import { LOAD_CODE } from './generated/autoload';" in connection
    assert "code: LOAD_CODE, silent: true, store_history: false, allow_stdin: false" in connection
