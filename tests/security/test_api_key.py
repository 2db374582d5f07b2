"""The key stays out of the notebook (DESIGN §12, "The key"; security review F9).

``%cowork login`` in a real ipykernel, answered through the stdin channel the way
JupyterLab's password box answers it; the key then serves the next ``%cowork`` against
the fake Messages API (its ``Authorization`` header), and it is in no iopub message,
not in the archive's bytes, not in the kernel's environment and not in what a tool
shows the model. The store is a 0600 file outside the notebook's folder (the
``keyring`` package is not installed here; the suite gives it its null backend anyway).
Under nbclient nobody can type: ``login`` says how else to give the key. No message or
document suggests ``%env ANTHROPIC_API_KEY=``, which IPython echoes into the notebook.
"""

from __future__ import annotations

import json
import os
import queue
import re
import stat
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import nbformat
import pytest
from jupyter_client.manager import start_new_kernel
from kernel.sidebar_wire import Wire, hello
from nbclient import NotebookClient

import loom_jupyter.apikey as apikey
from loom_jupyter.errors import MissingApiKeyError
from loom_jupyter.host.services.keys import MISSING_KEY, missing_key_message
from loom_jupyter.jupyter.magics.login import NO_STDIN
from loom_jupyter.models.failures import ErrorContext, Failure, to_error
from loom_jupyter.testing import FakeAnthropic
from loom_jupyter.tools.output import REDACTED, redact_secrets, secret_values

if TYPE_CHECKING:
    from collections.abc import Iterator

    from jupyter_client.blocking.client import BlockingKernelClient

KEY = "sk-ant-api03-LOGINCANARY-" + "x7Qz" * 8
TIMEOUT = 90.0
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path]:
    """The notebook's folder and the person's config folder, apart."""
    notebook_dir, config = tmp_path / "project", tmp_path / "home-config"
    notebook_dir.mkdir()
    return notebook_dir, config


class KernelRun:
    """A real kernel; every iopub message it sends is kept (the whole test's)."""

    def __init__(self, kc: BlockingKernelClient) -> None:
        self.kc = kc
        self.iopub: list[dict[str, Any]] = []
        self.prompts: list[dict[str, Any]] = []

    def run(self, code: str, *, answer: str | None = None) -> str:
        """Execute ``code`` (answering one input request with ``answer``); its stdout and
        displays (as JSON)."""
        msg_id = self.kc.execute(code, allow_stdin=answer is not None)
        out: list[str] = []
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            if answer is not None and self._answer(answer):
                answer = None
            try:
                msg = self.kc.get_iopub_msg(timeout=0.1)
            except queue.Empty:
                continue
            self.iopub.append(msg)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            if msg["msg_type"] == "stream":
                out.append(msg["content"]["text"])
            elif msg["msg_type"] in ("display_data", "update_display_data"):
                out.append(json.dumps(msg["content"]["data"]))
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                return "".join(out)
        raise TimeoutError(f"cell did not finish: {code!r}")

    def _answer(self, answer: str) -> bool:
        try:
            request = self.kc.get_stdin_msg(timeout=0.01)
        except queue.Empty:
            return False
        self.prompts.append(request["content"])
        self.kc.input(answer)
        return True


@pytest.fixture
def kernel(folders: tuple[Path, Path], fake: FakeAnthropic) -> Iterator[KernelRun]:
    """A kernel on ``project/nb.ipynb`` with no key in its environment."""
    notebook_dir, config = folders
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "LOOM_", "JPY_"))}
    env.update(
        JPY_SESSION_NAME=str(notebook_dir / "nb.ipynb"),
        ANTHROPIC_BASE_URL=fake.base_url,
        XDG_CONFIG_HOME=str(config),
        LOOM_APPROVAL="auto",
    )
    km, kc = start_new_kernel(kernel_name="python3", env=env, cwd=str(notebook_dir))
    try:
        yield KernelRun(kc)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        yield server


def _bytes_under(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in folder.rglob("*") if p.is_file())


@pytest.mark.kernel
@pytest.mark.attack(
    attack=(
        "The quick start told people to set the key with IPython's `%env` magic in a cell: "
        "IPython echoes it, so the key sat in the cell's output and the saved .ipynb"
    ),
    stopped_by=(
        "`%cowork login` asks through a password prompt (stdin, no echo) and keeps the key in "
        "the keyring or a 0600 file in the person's config folder; it never enters the "
        "output, the archive, the kernel's environment or what tools show the model"
    ),
    ref="F9",
)
def test_login_keeps_the_key_out_of_the_notebook_and_the_archive(
    kernel: KernelRun, folders: tuple[Path, Path], fake: FakeAnthropic
) -> None:
    notebook_dir, config = folders
    assert "loom:" in kernel.run("%load_ext loom_jupyter")
    no_key = kernel.run("%cowork hello before any key")
    assert "%cowork login" in no_key
    assert "%env" not in no_key
    assert fake.message_requests == []

    said = kernel.run("%cowork login", answer=KEY)
    assert [p["password"] for p in kernel.prompts] == [True]  # JupyterLab: a password box
    assert "key saved in" in said

    path = config / "loom" / apikey.KEY_FILE_NAME
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert notebook_dir not in path.parents

    fake.add(
        {"content": [{"type": "tool_use", "name": "run_python", "input": {"code": _PEEK}}]},
        "Done.",
    )
    assert "Done." in kernel.run("%cowork show me the key file")
    assert [r.headers.get("authorization") for r in fake.message_requests] == [f"Bearer {KEY}"] * 2
    tool_result = json.dumps(fake.message_requests[1].body["messages"][-2:])
    assert REDACTED in tool_result
    assert KEY not in tool_result
    assert kernel.run("import os; print('ANTHROPIC_API_KEY' in os.environ)").strip() == "False"

    assert KEY not in json.dumps(kernel.iopub, default=str)
    assert KEY.encode() not in _bytes_under(notebook_dir)  # the archive, its WAL, .gitignore

    out = kernel.run("%cowork logout")
    assert "removed" in out
    assert not path.exists()


_PEEK = (
    "import glob, os\n"
    "for p in glob.glob(os.path.expanduser(os.environ['XDG_CONFIG_HOME'] + '/loom/*')):\n"
    "    print(open(p).read())"
)


@pytest.mark.kernel
def test_login_under_nbclient_says_how_to_give_the_key(folders: tuple[Path, Path]) -> None:
    notebook_dir, config = folders
    cells = ["%load_ext loom_jupyter", "%cowork login"]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "LOOM_", "JPY_"))}
    env.update(JPY_SESSION_NAME=str(notebook_dir / "run.ipynb"), XDG_CONFIG_HOME=str(config))
    where = {"metadata": {"path": str(notebook_dir)}}
    NotebookClient(notebook, timeout=120, kernel_name="python3", resources=where).execute(env=env)
    said = "".join(o.get("text", "") for o in notebook.cells[1].outputs)
    assert NO_STDIN in said
    assert "export ANTHROPIC_API_KEY=" in said
    assert "%env" not in said
    assert not (config / "loom" / apikey.KEY_FILE_NAME).exists()


def test_the_key_file_is_0600_from_the_start_whatever_the_umask() -> None:
    old = os.umask(0)  # a person's loose umask must not make it readable, even briefly
    try:
        state = apikey.save_key(f"  {KEY}\n")  # what a paste brings along is trimmed
    finally:
        os.umask(old)
    path = apikey.key_file_path()
    assert state.source == "file"
    assert "readable by you only" in state.where
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert apikey.stored_key() == KEY
    assert apikey.key_state().source == "file"
    assert apikey.forget_key()
    assert apikey.stored_key() is None


def test_the_environment_wins_and_the_stored_key_is_redacted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert missing_key_message() == MISSING_KEY
    apikey.save_key(KEY)
    assert missing_key_message() is None
    assert KEY in secret_values()
    assert redact_secrets(f"the key is {KEY[::-1][::-1]}!") == f"the key is {REDACTED}!"
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-from-the-environment-0000000")
    state = apikey.key_state()
    assert state.source == "environment"
    assert "ANTHROPIC_API_KEY" in state.where
    assert KEY not in state.where


def test_a_shapeless_key_is_refused_without_repeating_it() -> None:
    for bad in ("not a key at all, just words", "short", "sk-ant-\u00e9t\u00e9-" + "x" * 20):
        with pytest.raises(apikey.KeyShapeError) as caught:
            apikey.save_key(bad)
        assert bad.strip() not in str(caught.value)
    assert not apikey.key_file_path().exists()


def test_no_key_messages_point_to_login_not_percent_env() -> None:
    missing = str(to_error(Failure("missing_key"), ErrorContext(model="m")))
    refused = str(to_error(Failure("status", 401, "authentication_error"), ErrorContext(model="m")))
    for message in (MISSING_KEY, missing, refused, NO_STDIN):
        assert "%cowork login" in message, message
        assert "%env" not in message, message
    assert isinstance(to_error(Failure("missing_key"), ErrorContext(model="m")), MissingApiKeyError)


@pytest.mark.kernel
@pytest.mark.attack(
    attack=(
        "A key typed into the sidebar travels on the comm: echoed back, kept in the replay "
        "log or archived, it reaches every page that reconnects and the notebook's folder"
    ),
    stopped_by=(
        "`set_key` is stored outside the notebook (0600) and answered with `key` "
        "(has_key, where) only; a reconnecting page's replay holds no key; a message "
        "sent before had come back as not sent (turn_error with its client_id)"
    ),
    ref="F9",
)
def test_the_sidebar_key_never_comes_back_on_the_comm(
    folders: tuple[Path, Path], fake: FakeAnthropic
) -> None:
    notebook_dir, config = folders
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "LOOM_", "JPY_"))}
    env.update(
        JPY_SESSION_NAME=str(notebook_dir / "nb.ipynb"),
        ANTHROPIC_BASE_URL=fake.base_url,
        XDG_CONFIG_HOME=str(config),
    )
    km, kc = start_new_kernel(kernel_name="python3", env=env, cwd=str(notebook_dir))
    wire = Wire(km, kc)
    try:
        assert wire.run("%load_ext loom_jupyter")["status"] == "ok"
        comm = wire.open_comm(hello())
        welcome = wire.wait(lambda: wire.events(comm, "welcome"), "welcome")[0]
        assert welcome["has_key"] is False
        wire.send(comm, {"type": "send", "client_id": "early", "text": "hello?"})
        error = wire.wait(lambda: wire.events(comm, "turn_error"), "the no-key error")[0]
        assert error["client_id"] == "early"
        assert "%cowork login" in error["message"]
        assert wire.events(comm, "turn_started") == []

        wire.send(comm, {"type": "set_key", "key": "not a key"})
        refused = wire.wait(lambda: wire.events(comm, "key"), "the refusal")[0]
        assert refused["has_key"] is False
        assert refused["problem"]
        assert "not a key" not in refused["problem"]
        wire.send(comm, {"type": "set_key", "key": KEY})
        wire.wait(lambda: [k for k in wire.events(comm, "key") if k["has_key"]], "the key")
        path = config / "loom" / apikey.KEY_FILE_NAME
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        told = wire.wait(lambda: _notices(wire, comm, "Key saved"), "where the key went")
        assert told == [f"Key saved in {path} (readable by you only), outside this notebook and "
                        "its folder. Loom uses it from your next message; %cowork logout "
                        "removes it."]  # issue 40.6: where it went  # fmt: skip

        again = wire.open_comm(hello(since_seq=0, kernel_session=welcome["kernel_session"]))
        wire.wait(lambda: wire.events(again, "key"), "the replay")
        fake.add("Saved key works.")
        wire.send(comm, {"type": "send", "client_id": "later", "text": "hello again"})
        wire.wait(lambda: wire.events(comm, "turn_done"), "the answer")
        assert fake.message_requests[-1].headers.get("authorization") == f"Bearer {KEY}"
        wire.pump()
        assert KEY not in json.dumps([msg for _, msg in wire.log], default=str)
        assert KEY.encode() not in _bytes_under(notebook_dir)
    finally:
        wire.shutdown()


def _notices(wire: Wire, comm: str, words: str) -> list[str]:
    """The notices on ``comm`` that say ``words``."""
    return [n["message"] for n in wire.events(comm, "notice") if words in n["message"]]


_PERCENT_ENV = re.compile(r"%env\s+ANTHROPIC_(API_KEY|AUTH_TOKEN)")


def test_no_message_or_document_suggests_percent_env() -> None:
    places = [REPO / "README.md", REPO / "loom_jupyter", REPO / "labextension" / "src"]
    places += sorted((REPO / "notebooks").glob("*.ipynb")) + sorted((REPO / "docs").glob("*.md"))
    files = [p for place in places for p in ([place] if place.is_file() else place.rglob("*"))]
    texts = [f for f in files if f.is_file() and f.suffix in {".py", ".ts", ".md", ".ipynb"}]
    assert len(texts) > 50
    offenders = [str(f) for f in texts if _PERCENT_ENV.search(f.read_text(errors="replace"))]
    assert offenders == []
