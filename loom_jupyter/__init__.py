"""loom_jupyter: a notebook-native AI coworker that lives in the kernel and never forgets.

Load it in a notebook with ``%load_ext loom_jupyter``, then talk with
``%cowork`` / ``%%cowork``. Importing this package imports nothing heavy: the
Jupyter front, the archive and the model client load on first use.
"""

from __future__ import annotations

from typing import Any

from loom_jupyter._version import __version__

__all__ = ["__version__", "load_ipython_extension", "unload_ipython_extension"]


def load_ipython_extension(ipython: Any) -> None:
    """Entry point of ``%load_ext loom_jupyter``."""
    from loom_jupyter.jupyter.extension import load

    load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """Entry point of ``%unload_ext loom_jupyter``."""
    from loom_jupyter.jupyter.extension import unload

    unload(ipython)


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    """Jupyter Server's entry point: kernel websockets without Nagle's delay."""
    return [{"module": "loom_jupyter.jupyter.server"}]


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    """Where JupyterLab finds the prebuilt sidebar extension."""
    return [{"src": "labextension", "dest": "loom-jupyter"}]
