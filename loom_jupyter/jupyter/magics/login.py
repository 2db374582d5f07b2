"""``%cowork login`` and ``%cowork logout``: the API key, kept outside the notebook.

``%cowork login`` asks for the key with a password prompt (``getpass``: JupyterLab shows
a password box, nothing is echoed, nothing lands in the cell's output or the saved
``.ipynb``) and stores it with :mod:`loom_jupyter.apikey` — the system keyring, else a
0600 file in the person's Loom config folder. Under nbclient, papermill or
``jupyter execute`` there is no one to ask: it says so and how to give the key instead.
Open sidebars hear that there is a key now (the key itself never leaves the kernel).
"""

from __future__ import annotations

import getpass
import os
from typing import TYPE_CHECKING, Any

from IPython.core.error import StdinNotImplementedError

import loom_jupyter.apikey as apikey
from loom_jupyter.errors import LoomError

if TYPE_CHECKING:
    from loom_jupyter.host.commands.arguments import LoginArgs

__all__ = ["NO_STDIN", "PROMPT", "login", "logout"]

PROMPT = "Anthropic API key (not shown; Enter saves it): "
NO_STDIN = (
    "loom: %cowork login cannot ask for the key here: this run has no input box "
    "(nbclient, papermill and jupyter execute give a notebook none). Give the key another "
    "way, never in a cell: export ANTHROPIC_API_KEY=... in the terminal before starting the "
    "run, or run %cowork login once in JupyterLab (or paste the key into the Loom sidebar's "
    "key field): a saved key serves every notebook of yours."
)


def login(shell: Any, args: LoginArgs) -> None:
    """Ask for the key without echo and store it outside the notebook."""
    if getattr(args, "logout", False):
        logout(shell, args)
        return
    in_env = [name for name in apikey.ENV_NAMES if os.environ.get(name)]
    if in_env:
        print(
            f"loom: {in_env[0]} is set in this kernel's environment and wins over a saved "
            "key; the key you give now serves where it is not set."
        )
    try:
        text = getpass.getpass(PROMPT)
    except StdinNotImplementedError:
        print(NO_STDIN)
        return
    except (EOFError, KeyboardInterrupt):
        print("loom: no key given: nothing was saved.")
        return
    try:
        state = apikey.save_key(text)
    except LoomError as exc:
        print(f"loom: {exc}")
        return
    print(
        f"loom: key saved in {state.where}, outside this notebook and its folder. "
        "%cowork and the sidebar use it from the next message; %cowork logout removes it."
    )
    _tell_sidebars(shell)


def logout(shell: Any, args: object) -> None:
    """Remove the stored key (the keyring entry and the file)."""
    del args
    try:
        removed = apikey.forget_key()
    except LoomError as exc:
        print(f"loom: {exc}")
        return
    if removed:
        print(f"loom: the saved key was removed from {' and '.join(removed)}.")
    else:
        print("loom: no saved key to remove.")
    if apikey.environment_key() is not None:
        print("loom: ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN) in the environment still works.")
    _tell_sidebars(shell)


def _tell_sidebars(shell: Any) -> None:
    """Every open sidebar of this kernel hears whether there is a key now."""
    from loom_jupyter.jupyter.coworker.registry import current

    cowork = current(shell)
    if cowork is None or not cowork.loop_thread.alive:
        return
    cowork.loop_thread.loop.call_soon_threadsafe(cowork.host.keys.tell)
