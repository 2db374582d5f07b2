"""Loom never imports from the notebook's folder (DESIGN §12), in real kernels.

A cloned repository is opened: Jupyter starts the kernel in its folder, and IPython puts
that folder on ``sys.path`` ahead of site-packages. The folder here ships copies of
``loom_jupyter``, of Loom's dependencies and of standard modules; each copy leaves a
marker file when it is imported (and then hands over to the real module, so code from
before this rule runs on and the markers say what happened). The sidebar's auto-load,
a turn (a regex ``search_files``: a child process), the sidebar's comm and the panel
leave no marker, and the person's own module beside the notebook still imports.

The copies are planted once the kernel has started: what ipykernel itself imports at
start-up (``re``, ``json``, ...) is out of Loom's reach.
"""

from __future__ import annotations

import ast
import asyncio
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import pytest
from jupyter_client.manager import start_new_kernel
from kernel.sidebar_wire import Wire, hello

import loom_jupyter
from loom_jupyter.jupyter.autoload import TS_PATH, load_code, load_code_ts
from loom_jupyter.messages import ToolUseBlock
from loom_jupyter.settings import Settings
from loom_jupyter.testing import FakeAnthropic
from loom_jupyter.tools.approval import ApprovalPolicy
from loom_jupyter.tools.base import ToolContext
from loom_jupyter.tools.local_kernel import LocalKernel
from loom_jupyter.tools.registry import default_registry

if TYPE_CHECKING:
    from collections.abc import Iterator

    from loom_jupyter.tools.approval import ApprovalRequest

REPO = Path(loom_jupyter.__file__).resolve().parents[1]
INSTALLED = str(Path(loom_jupyter.__file__).resolve())
# What the folder ships: Loom itself, the dependencies Loom imports lazily (on the engine
# thread, a comm's thread and the main thread), and standard modules a child could take.
PLANTED = (
    "loom_jupyter/__init__.py",
    "yaml/__init__.py",
    "anthropic/__init__.py",
    "pydantic/__init__.py",
    "ipywidgets/__init__.py",
    "aiosqlite.py",
    "sqlite3.py",
    "json.py",
    "re.py",
)
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


def plant(folder: Path, marks: Path, files: tuple[str, ...] = PLANTED) -> None:
    """The folder's copies: each leaves ``marks/<module>`` when imported."""
    real = os.path.realpath(folder)
    for name in files:
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        mark = str(marks / name.split("/")[0].removesuffix(".py"))
        path.write_text(HANDOVER.format(mark=mark, folder=real))


def markers(marks: Path) -> list[str]:
    """The folder's copies that ran."""
    return sorted(p.name for p in marks.iterdir())


@dataclass
class Cloned:
    """A kernel started in a cloned folder, after the sidebar's auto-load."""

    folder: Path
    marks: Path
    wire: Wire
    loaded: dict[str, Any]  # the auto-load's execute_reply
    names_before: list[str]
    names_after: list[str]

    def names(self) -> list[str]:
        return names(self.wire)

    def autoload(self) -> dict[str, Any]:
        """The sidebar's request, exactly (labextension/src/connection.ts ``load``)."""
        kc = self.wire.kc
        msg_id = kc.execute(load_code(), silent=True, store_history=False, allow_stdin=False)
        return self.wire.reply_of(msg_id)


def names(wire: Wire) -> list[str]:
    """The person's namespace, read without adding to it (a silent user expression)."""
    listing = wire.kc.execute(
        "", silent=True, store_history=False, user_expressions={"n": "sorted(globals())"}
    )
    found = wire.reply_of(listing)["user_expressions"]["n"]
    assert found["status"] == "ok", found
    return list(ast.literal_eval(found["data"]["text/plain"]))


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        yield server


@pytest.fixture(scope="module")
def cloned(tmp_path_factory: pytest.TempPathFactory, fake: FakeAnthropic) -> Iterator[Cloned]:
    root = tmp_path_factory.mktemp("cloned")
    folder, marks = root / "repo", root / "marks"
    folder.mkdir()
    marks.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "LOOM_", "JPY_"))}
    env.update(
        JPY_SESSION_NAME=str(folder / "analysis.ipynb"),
        ANTHROPIC_BASE_URL=fake.base_url,
        ANTHROPIC_API_KEY="test-key",
        LOOM_APPROVAL="auto",
        XDG_CONFIG_HOME=str(root / "config"),
    )
    km, kc = start_new_kernel(kernel_name="python3", env=env, cwd=str(folder))
    wire = Wire(km, kc)
    try:
        plant(folder, marks)
        (folder / "helper_mod.py").write_text("VALUE = 42\n")
        (folder / "agent_helper.py").write_text("VALUE = 'from the folder'\n")
        (folder / "notes.txt").write_text("alpha\nbeta\n")
        before = names(wire)
        clone = Cloned(folder, marks, wire, {}, before, [])
        clone.loaded = clone.autoload()
        clone.names_after = names(wire)
        yield clone
    finally:
        wire.shutdown()


def _tool_results(fake: FakeAnthropic) -> str:
    """The tool results the last request sent back, as JSON text."""
    body = fake.message_requests[-1].body
    assert body is not None
    return json.dumps(
        [
            block
            for message in body["messages"]
            for block in message["content"]
            if isinstance(block, dict) and block.get("type") == "tool_result"
        ]
    )


def _real_path(wire: Wire, expression: str) -> str:
    return wire.value(f"__import__('os').path.realpath({expression})")


def _idle(wire: Wire, msg_id: str) -> bool:
    return any(
        channel == "iopub"
        and msg["msg_type"] == "status"
        and msg["content"]["execution_state"] == "idle"
        and msg["parent_header"].get("msg_id") == msg_id
        for channel, msg in wire.log
    )


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
def test_the_sidebars_autoload_loads_the_installed_loom(cloned: Cloned) -> None:
    assert cloned.loaded["status"] == "ok", cloned.loaded
    assert markers(cloned.marks) == []
    assert cloned.names_after == cloned.names_before  # no name left in the namespace
    assert _real_path(cloned.wire, "__import__('loom_jupyter').__file__") == repr(INSTALLED)
    assert "%cowork sessions" in _stdout(cloned.wire, "%cowork --help")
    again = cloned.autoload()  # Loom already loaded: the Load button works all the same
    assert again["status"] == "ok", again
    assert markers(cloned.marks) == []


@pytest.mark.kernel
@pytest.mark.attack(
    attack=(
        "A cloned folder's `yaml/`, `anthropic/`, `pydantic/`, `ipywidgets/` or `aiosqlite.py` "
        "runs when Loom first imports the name (opening the archive, the first turn, the "
        "sidebar, the panel)"
    ),
    stopped_by=(
        "`%load_ext` installs an import finder: Loom's threads, and Loom's code on the "
        "kernel's own threads, import top-level modules only from where they are installed; "
        "the person's imports (cells, `run_python`) are unchanged"
    ),
    ref="F2",
)
def test_loom_s_later_imports_and_its_child_skip_the_folder_and_the_persons_do_not(
    cloned: Cloned, fake: FakeAnthropic
) -> None:
    wire = cloned.wire
    comm = wire.open_comm(hello(notebook_path=str(cloned.folder / "analysis.ipynb")))
    wire.wait(lambda: wire.events(comm, "welcome"), "the sidebar's welcome")  # pydantic
    search = {"pattern": "al.ha", "regex": True}  # a regex search runs in a child process
    run = {"code": "import agent_helper\nprint(agent_helper.VALUE)"}  # the person's namespace
    fake.add(
        {"content": [{"type": "tool_use", "name": "search_files", "input": search}]},
        {"content": [{"type": "tool_use", "name": "run_python", "input": run}]},
        {"content": ["Found it."]},
    )
    assert wire.run("%cowork where is alpha?")["status"] == "ok"  # yaml, anthropic, ...
    results = _tool_results(fake)
    assert "notes.txt:1: alpha" in results
    assert "from the folder" in results  # run_python imports as the person does
    assert wire.run("%cowork status")["status"] == "ok"  # the panel: ipywidgets
    assert wire.run("import helper_mod")["status"] == "ok"  # a cell, after Loom loaded
    assert wire.value("helper_mod.VALUE") == "42"

    assert markers(cloned.marks) == []
    for name in ("yaml", "anthropic", "pydantic", "ipywidgets", "aiosqlite"):  # all imported
        origin = _real_path(wire, f"__import__('sys').modules[{name!r}].__file__")
        assert "site-packages" in origin, origin
    helper = str((cloned.folder / "agent_helper.py").resolve())
    assert _real_path(wire, "__import__('agent_helper').__file__") == repr(helper)


def _stdout(wire: Wire, code: str) -> str:
    msg_id = wire.execute(code)
    assert wire.reply_of(msg_id)["status"] == "ok"
    # iopub and shell are separate channels: the output is all there once iopub says idle
    wire.wait(lambda: _idle(wire, msg_id), f"iopub idle after {code!r}")
    return "".join(
        msg["content"]["text"]
        for channel, msg in wire.log
        if channel == "iopub"
        and msg["msg_type"] == "stream"
        and msg["parent_header"].get("msg_id") == msg_id
    )


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
