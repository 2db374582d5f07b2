"""Which notebook this kernel belongs to, and so which archive it writes.

Resolution order:

1. an explicit path (``%cowork --notebook PATH``);
2. ``JPY_SESSION_NAME`` — JupyterLab sets it in the kernel's environment to the
   notebook's absolute path (fixed at kernel start);
3. IPython's ``__session__`` in the user namespace (ipykernel copies the same
   value there);
4. otherwise (plain terminal IPython, or a kernel started without a notebook)
   a pseudo-notebook named ``ipython-session`` in the current working
   directory, so the archive is ``./.loom/ipython-session.sqlite``. Every
   terminal session started in the same folder therefore shares one archive
   and resumes the most recent conversation, just like a notebook does.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["TERMINAL_SESSION_NAME", "NotebookLocation", "PathSource", "resolve_notebook"]

TERMINAL_SESSION_NAME = "ipython-session"
PathSource = Literal["explicit", "env", "session", "terminal"]


@dataclass(frozen=True)
class NotebookLocation:
    """The notebook path and where it came from."""

    path: Path
    source: PathSource

    @property
    def directory(self) -> Path:
        """The folder the archive, settings and file tools are anchored to."""
        return self.path.parent

    def archive_path(self) -> Path:
        """The notebook's archive file (its ``.loom/`` folder is made when missing)."""
        from loom_jupyter.archive import archive_path_for

        return archive_path_for(self.path)


def resolve_notebook(
    user_ns: Mapping[str, Any],
    *,
    explicit: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> NotebookLocation:
    """Find the notebook path (see the module docstring for the order)."""
    environ = os.environ if env is None else env
    if explicit:
        return NotebookLocation(_absolute(Path(explicit), cwd), "explicit")
    if environ.get("JPY_SESSION_NAME"):
        return NotebookLocation(_absolute(Path(environ["JPY_SESSION_NAME"]), cwd), "env")
    session = user_ns.get("__session__")
    if isinstance(session, str) and session:
        return NotebookLocation(_absolute(Path(session), cwd), "session")
    base = cwd or Path.cwd()
    return NotebookLocation(base.resolve() / TERMINAL_SESSION_NAME, "terminal")


def _absolute(path: Path, cwd: Path | None) -> Path:
    path = path.expanduser()
    if not path.is_absolute():
        path = (cwd or Path.cwd()) / path
    return path.resolve()
