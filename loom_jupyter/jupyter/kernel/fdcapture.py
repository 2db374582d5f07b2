"""Output written straight to file descriptors 1 and 2 while the agent's code runs.

``redirect_stdout`` only sees Python's ``sys.stdout``; a subprocess
(``os.system``), a C extension's ``printf`` or ``faulthandler`` write to the
process's descriptors, which in a kernel end up in the server's log and never
reach the model. :func:`captured_descriptors` points both descriptors at a
spool file for the duration of a run, then hands what was written to the
caller, so it goes through the same capping and secret redaction as the rest
of the tool output.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import tempfile
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import TextIO

__all__ = ["captured_descriptors"]

_FDS = (1, 2)


@contextlib.contextmanager
def captured_descriptors(sink: TextIO) -> Iterator[None]:
    """Write what the block sends to descriptors 1 and 2 into ``sink`` (decoded as UTF-8)."""
    try:
        saved = [os.dup(fd) for fd in _FDS]
    except OSError:  # no such descriptors (a daemon, an embedded interpreter): nothing to catch
        yield
        return
    with tempfile.TemporaryFile() as spool:
        try:
            for fd in _FDS:
                os.dup2(spool.fileno(), fd)
            yield
        finally:
            _flush_c_stdio()
            for fd, copy in zip(_FDS, saved, strict=True):
                os.dup2(copy, fd)
                os.close(copy)
            spool.seek(0)
            sink.write(spool.read().decode("utf-8", errors="replace"))


def _flush_c_stdio() -> None:
    """Flush C ``stdio`` buffers so a C extension's ``printf`` lands in the spool."""
    with contextlib.suppress(OSError, AttributeError, TypeError):
        ctypes.CDLL(None).fflush(None)
