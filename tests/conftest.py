"""Suite-wide guards: no test can reach a real model API or read the developer's config.

Every test starts with ``ANTHROPIC_BASE_URL`` pointing at a closed loopback port,
no API key, and empty ``XDG_CONFIG_HOME`` and ``XDG_STATE_HOME``; tests that need a model use the
``fake_anthropic`` fixture (shipped in ``loom_jupyter.testing``) or a
``ScriptedModel``.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from loom_jupyter.archive import Archive, archive_path_for
from loom_jupyter.tools.local_kernel import LocalKernel

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator

pytest_plugins = ["loom_jupyter.testing.pytest_plugin"]


def pytest_configure(config: pytest.Config) -> None:
    """No test reaches the developer's system keyring: the ``keyring`` package (when
    installed) gets its null backend, here and in every kernel or server a test starts, so
    a saved key goes to the test's own ``XDG_CONFIG_HOME``. The package's own modules are
    byte-compiled first (once, in the process that starts the xdist workers)."""
    os.environ["PYTHON_KEYRING_BACKEND"] = "keyring.backends.null.Keyring"
    if not hasattr(config, "workerinput"):
        _byte_compile_package()
    _hear_ctrl_c()


def _hear_ctrl_c() -> None:
    """Ctrl-C reaches this process and every child a test starts, as in a terminal.

    A suite started in the background by a non-interactive shell (``nohup ... &``, a CI
    runner's script) inherits SIGINT *ignored*, and a child started from here inherits that
    too: then a test that presses Ctrl-C on ``loom-jupyter eval`` waits on a command that never
    hears it. A handler (unlike "ignored") is reset to the default when a child starts, so
    each child's Python installs its own ``KeyboardInterrupt``.
    """
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _byte_compile_package() -> None:
    """Write loom_jupyter's missing or stale ``__pycache__`` files. These machines set
    ``PYTHONDONTWRITEBYTECODE=1`` and a fresh clone has none: every kernel, server and CLI
    process the tests start would compile each Loom module it imports again (a tenth of a
    second of CPU for ``%load_ext`` alone, in each of hundreds of kernels). Up-to-date files
    are left as they are; a file that does not compile is left to the import to report."""
    import compileall

    import loom_jupyter

    compileall.compile_dir(Path(loom_jupyter.__file__).parent, quiet=2)


# What a kernel's first turn imports (about 2.7 s of CPU in each of the suite's ~230 kernels).
# Not ipykernel: its classes read the launcher's environment when they are defined.
ZYGOTE_PRELOAD = ("anthropic",)


@pytest.fixture(scope="session", autouse=True)
def _kernel_zygote() -> Iterator[None]:
    """Kernels fork from a process that has imported ``ZYGOTE_PRELOAD`` already
    (``loom_jupyter/testing/kernel_zygote.py``): every ``python3`` kernel a test starts, with
    jupyter_client, nbclient, a Jupyter server or ``loom-jupyter eval``. Loom is never
    preloaded. Packages whose tests are about what a fresh process imports or how long it
    takes start theirs cold (:data:`COLD_KERNEL_FOLDERS`)."""
    import tempfile

    from loom_jupyter.testing.kernel_zygote import serving

    with (
        tempfile.TemporaryDirectory(prefix="zygote-") as folder,
        serving(Path(folder), ZYGOTE_PRELOAD),
    ):
        yield


# Folders whose tests are about what a fresh kernel imports and loads from its folder, or
# how long that takes: their kernels start cold, as a person's do.
COLD_KERNEL_FOLDERS = frozenset({"security", "benchmarks"})


@pytest.fixture(scope="module", autouse=True)
def _cold_kernels_where_asked(request: pytest.FixtureRequest) -> Iterator[None]:
    """Kernels of a module in :data:`COLD_KERNEL_FOLDERS` start cold (``cold_kernels``)."""
    if request.path.parent.name not in COLD_KERNEL_FOLDERS:
        yield
        return
    from loom_jupyter.testing.kernel_zygote import cold_kernels

    with cold_kernels():
        yield


CLOSED_LOOPBACK_URL = "http://127.0.0.1:9"
"""The discard port: nothing listens there, so a stray request fails fast and locally."""


@pytest.fixture(autouse=True)
def _no_real_model_api(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", CLOSED_LOOPBACK_URL)
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "LOOM_MODEL", "LOOM_APPROVAL"):
        monkeypatch.delenv(name, raising=False)
    for name in ("LOOM_ARCHIVE_DIR", "KERNEL_LOOM_ARCHIVE_DIR", "KERNEL_WORKING_DIR"):
        monkeypatch.delenv(name, raising=False)  # archives beside their notebooks (DESIGN §13)
    config_home = tmp_path_factory.mktemp("xdg-config")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config_home))
    # the managed policy's spend ledger (DESIGN §16) never touches the developer's state
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("xdg-state")))


# -- a notebook beside a real archive, and an in-process kernel (session-level tests) --------
# Directories with their own ``notebook`` or ``archive`` fixture (archive/, kernel/) override these.


@pytest.fixture
def notebook(tmp_path: Path) -> Path:
    """An empty notebook file in a fresh folder."""
    path = tmp_path / "analysis.ipynb"
    path.write_text(json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    return path


@pytest.fixture
async def archive(notebook: Path) -> AsyncIterator[Archive]:
    """The notebook's archive, opened."""
    async with Archive.open(archive_path_for(notebook)) as opened:
        yield opened


@pytest.fixture
def kernel() -> LocalKernel:
    """The in-process kernel bridge (a plain namespace, no Jupyter)."""
    return LocalKernel()
