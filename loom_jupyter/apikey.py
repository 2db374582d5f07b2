"""The Anthropic API key, kept outside every notebook (DESIGN §12, "The key").

The environment comes first: ``ANTHROPIC_API_KEY`` or ``ANTHROPIC_AUTH_TOKEN`` set
before Jupyter started. Otherwise the key the person gave ``%cowork login`` or the
sidebar's key field: in the system keyring through the ``keyring`` package when it is
installed and has a real backend (not its ``fail`` or ``null`` one), else in
``$XDG_CONFIG_HOME/loom/anthropic-api-key`` (``~/.config/loom/``, beside the person's
``loom.yaml``), a file created 0600 in a folder made 0700. Never the notebook, its
folder, the archive, an output or the process environment (which every subprocess
inherits).

The key read last is remembered in this process (:func:`known_key`), so redaction
(:func:`loom_jupyter.tools.output.secret_values`) counts it without reading the store
on every call; :func:`stored_key` reads the store again and updates that memory.
Nothing here prints, logs or repeats a key: errors name where, never what.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from loom_jupyter.errors import LoomError
from loom_jupyter.own_writes import wrote
from loom_jupyter.settings import user_config_path

__all__ = [
    "ENV_NAMES",
    "KEY_FILE_NAME",
    "KeyShapeError",
    "KeyState",
    "check_shape",
    "environment_key",
    "forget_key",
    "key_file_path",
    "key_state",
    "known_key",
    "save_key",
    "stored_key",
]

ENV_NAMES = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
"""The environment variables the SDK reads; they win over a stored key."""
KEY_FILE_NAME = "anthropic-api-key"
KEYRING_SERVICE = "loom-jupyter"
KEYRING_USER = "anthropic-api-key"
MIN_KEY_CHARS = 20
MAX_KEY_CHARS = 500

KeySource = Literal["environment", "keyring", "file", "none"]


class KeyShapeError(LoomError):
    """What was given does not look like an API key (the message never repeats it)."""


@dataclass(frozen=True)
class KeyState:
    """Whether a key is there and where it comes from (never the key itself)."""

    source: KeySource
    where: str
    """In words: "ANTHROPIC_API_KEY in the environment", "the system keyring (...)", a path."""

    @property
    def has_key(self) -> bool:
        """A key (or token) is configured."""
        return self.source != "none"


def key_file_path() -> Path:
    """``$XDG_CONFIG_HOME/loom/anthropic-api-key`` (``~/.config/loom/`` by default)."""
    return user_config_path().with_name(KEY_FILE_NAME)


def check_shape(text: str) -> str:
    """``text`` without surrounding blanks when it looks like a key, else KeyShapeError.

    Light on purpose: printable ASCII without spaces, 20 to 500 characters (Anthropic's
    keys start ``sk-ant-``, but a gateway's token may not)."""
    key = text.strip()
    if not key:
        raise KeyShapeError("No key was given: nothing was saved.")
    if any(ch.isspace() for ch in key) or not all(33 <= ord(ch) < 127 for ch in key):
        raise KeyShapeError(
            "That does not look like an API key (it holds spaces or characters a key does "
            "not have): nothing was saved. Copy the key again from the Anthropic Console."
        )
    if not MIN_KEY_CHARS <= len(key) <= MAX_KEY_CHARS:
        raise KeyShapeError(
            f"That does not look like an API key ({len(key)} characters; keys have "
            f"{MIN_KEY_CHARS} to {MAX_KEY_CHARS}): nothing was saved."
        )
    return key


def environment_key() -> str | None:
    """``ANTHROPIC_API_KEY`` or ``ANTHROPIC_AUTH_TOKEN`` from the environment, if set."""
    for name in ENV_NAMES:
        value = os.environ.get(name)
        if value:
            return value
    return None


# -- the process's memory of the stored key ---------------------------------------------

_lock = threading.Lock()
_known: tuple[Path, str | None] | None = None  # (the file it was read for, the key)


def _remember(key: str | None) -> str | None:
    global _known
    with _lock:
        _known = (key_file_path(), key)
    return key


def known_key() -> str | None:
    """The stored key as last read by this process (read once when never read, or when
    ``XDG_CONFIG_HOME`` points elsewhere since): cheap enough for every redaction."""
    known = _known
    if known is not None and known[0] == key_file_path():
        return known[1]
    return stored_key()


# -- the store ----------------------------------------------------------------------------


def stored_key() -> str | None:
    """The key ``%cowork login`` or the sidebar saved (keyring first, then the file), read
    now; None when there is none or the store cannot be read."""
    key = _keyring_get()
    if key is None:
        key = _file_get(key_file_path())
    return _remember(key)


def save_key(text: str) -> KeyState:
    """Check ``text``'s shape and store it (keyring, else the 0600 file); where it went."""
    key = check_shape(text)
    backend = _keyring()
    if backend is not None and _keyring_set(backend, key):
        _file_remove(key_file_path())  # one copy: an older file would only confuse
        _remember(key)
        return KeyState("keyring", f"the system keyring ({_backend_name(backend)})")
    path = key_file_path()
    _file_put(path, key)
    _remember(key)
    return KeyState("file", f"{_home_short(path)} (readable by you only)")


def forget_key() -> list[str]:
    """Remove the stored key wherever it is; the places it was removed from."""
    removed = []
    backend = _keyring()
    if backend is not None and _keyring_delete(backend):
        removed.append(f"the system keyring ({_backend_name(backend)})")
    path = key_file_path()
    if _file_remove(path):
        removed.append(_home_short(path))
    _remember(None)
    return removed


def key_state(*, refresh: bool = True) -> KeyState:
    """Where the key in force comes from: the environment first, then the store."""
    for name in ENV_NAMES:
        if os.environ.get(name):
            return KeyState("environment", f"{name} in the environment")
    key = stored_key() if refresh else known_key()
    if key is None:
        return KeyState("none", "")
    backend = _keyring()
    if backend is not None and _keyring_get() is not None:
        return KeyState("keyring", f"the system keyring ({_backend_name(backend)})")
    return KeyState("file", f"{_home_short(key_file_path())} (readable by you only)")


# -- the file -----------------------------------------------------------------------------


def _file_get(path: Path) -> str | None:
    """The key in ``path`` (never following a link); a looser mode is tightened to 0600."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    with os.fdopen(fd, "r", encoding="ascii", errors="replace") as handle:
        if os.fstat(fd).st_mode & 0o077:
            with contextlib.suppress(OSError):
                os.fchmod(fd, 0o600)
        text = handle.read(MAX_KEY_CHARS + 2).strip()
    return text or None


def _file_put(path: Path, key: str) -> None:
    """Write ``key`` to ``path``: a new 0600 file in a 0700 folder, then renamed over."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(temp, flags, 0o600)  # 0600 from the start: never readable by others
        with os.fdopen(fd, "w", encoding="ascii") as handle:
            handle.write(key + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        temp.replace(path)
        wrote(path, (key + "\n").encode("ascii"))
    except OSError as exc:
        raise LoomError(
            f"The key could not be saved in {_home_short(path)} ({exc.strerror or exc}). "
            "Set ANTHROPIC_API_KEY in the environment before starting Jupyter instead."
        ) from None


def _file_remove(path: Path) -> bool:
    try:
        path.unlink()
        wrote(path, None)
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise LoomError(
            f"The key file {_home_short(path)} could not be removed ({exc.strerror or exc})."
        ) from None
    return True


def _home_short(path: Path) -> str:
    """``~/...`` for a path under the home folder."""
    with contextlib.suppress(RuntimeError, ValueError):
        return "~/" + str(path.relative_to(Path.home()))
    return str(path)


# -- the keyring (only when installed and backed by something real) ------------------------


def _keyring() -> Any | None:
    """The ``keyring`` backend in force, when the package is installed and that backend
    stores something (its ``fail`` and ``null`` backends, priority <= 0, do not)."""
    from loom_jupyter.importguard import from_folder

    try:
        import keyring  # type: ignore[import-not-found,unused-ignore]
    except Exception:  # not installed, or broken: the file serves
        return None
    if from_folder(keyring):  # a cell imported the folder's copy first: never hand it the key
        return None
    try:
        backend = keyring.get_keyring()
        priority = float(getattr(backend, "priority", 0))
    except Exception:
        return None
    backend_module = sys.modules.get(type(backend).__module__)
    if backend_module is None or from_folder(backend_module):
        return None
    module = type(backend).__module__
    if priority <= 0 or module.endswith((".fail", ".null")):
        return None
    return backend


def _backend_name(backend: Any) -> str:
    return str(getattr(backend, "name", type(backend).__name__))


def _keyring_get() -> str | None:
    backend = _keyring()
    if backend is None:
        return None
    try:
        value = backend.get_password(KEYRING_SERVICE, KEYRING_USER)
    except Exception:  # locked, no session bus...: the file may still hold one
        return None
    return value if isinstance(value, str) and value.strip() else None


def _keyring_set(backend: Any, key: str) -> bool:
    try:
        backend.set_password(KEYRING_SERVICE, KEYRING_USER, key)
    except Exception:  # the keyring refused (locked, no session bus): use the file
        return False
    return True


def _keyring_delete(backend: Any) -> bool:
    try:
        backend.delete_password(KEYRING_SERVICE, KEYRING_USER)
    except Exception:  # nothing stored there (PasswordDeleteError) or unusable
        return False
    return True
