"""A cloned folder's ``keyring`` never runs and never sees the key (security review R1).

``loom_jupyter.apikey`` imports ``keyring`` lazily, the first time it reads or saves a
key. A repository that ships ``keyring.py`` (or ``keyring/``) beside its notebooks would
have its copy run there and be handed the key, unless that import is Loom's and so skips
the folder whatever thread makes it. Three ways in, with no key in the environment, each
in a real kernel started in the folder: a ``%cowork`` question on the kernel's main thread
(it looks for a saved key), ``%cowork login`` answered through the kernel's stdin channel
(the handler's body), and the sidebar's ``set_key`` (saved on an executor thread of the
engine loop). The planted module leaves a marker when imported, and its backend would
write whatever key it is given to a file: neither may appear.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest
from jupyter_client.manager import start_new_kernel
from kernel.sidebar_wire import Wire, hello

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

pytestmark = pytest.mark.kernel

KEY = "sk-ant-api03-" + "k" * 40  # shaped like a key; never valid anywhere
PLANTED = """\
open({mark!r}, "a").close()


class _Backend:
    priority = 5
    name = "macOS Keychain"

    def set_password(self, service, user, password):
        with open({stolen!r}, "a") as out:
            out.write(password + "\\n")

    def get_password(self, service, user):
        return None

    def delete_password(self, service, user):
        pass


def get_keyring():
    return _Backend()
"""


def run_cell(wire: Wire, code: str, answers: tuple[str, ...] = ()) -> str:
    """Run a cell to its end, typing ``answers`` into its prompts; what it printed."""
    return wire.typed(code, answers)[0]


def kernel_in(folder: Path, home: Path) -> Wire:
    """A kernel started in ``folder`` (a cloned repository) with no API key anywhere."""
    skip = ("ANTHROPIC_", "LOOM_", "JPY_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(skip)}
    env.update(
        JPY_SESSION_NAME=str(folder / "analysis.ipynb"),
        ANTHROPIC_BASE_URL="http://127.0.0.1:9",  # nothing listens: no request leaves
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
    )
    km, kc = start_new_kernel(kernel_name="python3", env=env, cwd=str(folder))
    return Wire(km, kc)


@pytest.fixture(params=["keyring.py", "keyring/__init__.py"], ids=["module", "package"])
def planted(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Wire, Path, Path]]:
    """A kernel in a folder that ships a ``keyring``; the folder; where its marks land."""
    folder, home, marks = tmp_path / "repo", tmp_path / "home", tmp_path / "marks"
    for made in (folder / ".git", home, marks):
        made.mkdir(parents=True)
    plant = folder / request.param
    plant.parent.mkdir(parents=True, exist_ok=True)
    plant.write_text(PLANTED.format(mark=str(marks / "ran"), stolen=str(marks / "stolen")))
    wire = kernel_in(folder, home)
    try:
        yield wire, folder, marks
    finally:
        wire.shutdown()


def _ran(wire: Wire, marks: Path) -> list[str]:
    """What the planted module did since the last look (then forgotten, so that each way in
    is seen on its own even where an earlier one let the copy in)."""
    seen = sorted(p.name for p in marks.iterdir())
    for path in marks.iterdir():
        path.unlink()
    run_cell(wire, "__import__('sys').modules.pop('keyring', None)")
    return seen


@pytest.mark.attack(
    attack="A cloned folder's `keyring.py` (module or package) runs on the README's first "
    "`%cowork` question with no key exported, and is handed the key on `%cowork login` and "
    "the sidebar's key field (an executor thread)",
    stopped_by="Whose import it is comes from the call stack on every thread: Loom's code, "
    "and what it calls, imports only from where packages are installed",
    ref="R1",
)
def test_a_folders_keyring_never_runs_nor_gets_the_key(planted: tuple[Wire, Path, Path]) -> None:
    wire, folder, marks = planted
    assert run_cell(wire, "%load_ext loom_jupyter")
    ran: dict[str, list[str]] = {"load": _ran(wire, marks)}

    asked = run_cell(wire, "%cowork what is in df?")  # the main thread looks for a saved key
    assert "No Anthropic API key yet" in asked, asked
    ran["question"] = _ran(wire, marks)

    saved = run_cell(wire, "%cowork login", answers=(KEY,))  # the handler, on the main thread
    assert "loom: key saved in" in saved, saved
    ran["login"] = _ran(wire, marks)

    comm = wire.open_comm(hello(notebook_path=str(folder / "analysis.ipynb")))
    wire.wait(lambda: wire.events(comm, "welcome"), "the sidebar's welcome")
    ran["sidebar opens"] = _ran(wire, marks)
    keys_before = len(wire.events(comm, "key"))
    wire.send(comm, {"type": "set_key", "key": KEY})  # saved on an executor thread
    told = wire.wait(lambda: wire.events(comm, "key")[keys_before:], "the sidebar's key reply")
    ran["set_key"] = _ran(wire, marks)

    assert all(not seen for seen in ran.values()), f"the folder's keyring ran: {ran}"
    assert told[-1]["has_key"], told  # saved all the same: in the file only the person reads


@pytest.mark.attack(
    attack="A person's cell imports the cloned folder's `keyring` first (Python's own rule: "
    "the folder comes first); Loom then reuses that module from `sys.modules` and hands it "
    "the key on `%cowork login`",
    stopped_by="Loom never uses a `keyring` (or a backend) loaded from the notebook's folder, "
    "whoever imported it: the key goes to the file only the person reads",
    ref="R1",
)
def test_a_keyring_a_cell_imported_from_the_folder_never_gets_the_key(
    planted: tuple[Wire, Path, Path],
) -> None:
    wire, _folder, marks = planted
    assert run_cell(wire, "%load_ext loom_jupyter")
    run_cell(wire, "import keyring")  # the person's own import: the folder's copy runs
    assert (marks / "ran").exists()

    saved = run_cell(wire, "%cowork login", answers=(KEY,))

    assert "loom: key saved in" in saved, saved
    assert "anthropic-api-key" in saved, saved  # the file, not the planted "keyring"
    assert not (marks / "stolen").exists()
