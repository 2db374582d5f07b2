"""What Loom itself wrote into places the protected-file check watches.

The check after a call that runs code (``engine/gate.py``) puts back any change to the
protected files the person did not approve. Loom writes some of them itself while a call
may run (the person trusts a folder from the card, saves the API key): those writes are
the person's, so the writers note the bytes here and the check leaves a file holding
exactly what Loom last wrote to it. Other bytes at that path are still undone.
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path

__all__ = ["REMOVED", "by_loom", "wrote"]

REMOVED = "removed"
"""The digest of a path Loom removed."""

_lock = threading.Lock()
_written: dict[str, str] = {}  # real path -> sha256 of the bytes Loom wrote there last


def wrote(path: str | os.PathLike[str], data: bytes | None) -> None:
    """Note that Loom wrote ``data`` to ``path`` (None: removed it), from any thread."""
    key, digest = _key(path), REMOVED if data is None else hashlib.sha256(data).hexdigest()
    with _lock:
        _written[key] = digest


def by_loom(path: str | os.PathLike[str], digest: str) -> bool:
    """Whether ``path`` holds what Loom itself last wrote to it (``digest``: the sha256 of
    what it holds now, or :data:`REMOVED`)."""
    with _lock:
        return _written.get(_key(path)) == digest


def _key(path: str | os.PathLike[str]) -> str:
    return os.path.realpath(Path(path).expanduser())
