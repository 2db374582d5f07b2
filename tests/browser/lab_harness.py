"""The pieces behind the browser fixtures: a JupyterLab server and page helpers.

Kept out of conftest.py so tests can import the types and helpers
(``from lab_harness import LabPage, write_notebook``); the fixtures themselves
live in conftest.py.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from jupyter_core.paths import jupyter_path
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from playwright.sync_api import Locator, Page, ViewportSize

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# What playwright's own launch adds for a headless chromium (its chromiumSwitches and
# headless switches): a browser started by the harness (start_browser) behaves the same.
LAUNCH_SWITCHES = [
    "--disable-field-trial-config",
    "--disable-background-timer-throttling",
    "--disable-backgrounding-occluded-windows",
    "--disable-back-forward-cache",
    "--disable-breakpad",
    "--disable-component-extensions-with-background-pages",
    "--no-default-browser-check",
    "--disable-default-apps",
    "--disable-dev-shm-usage",
    "--disable-extensions",
    "--allow-pre-commit-input",
    "--disable-hang-monitor",
    "--disable-ipc-flooding-protection",
    "--disable-popup-blocking",
    "--disable-prompt-on-repost",
    "--disable-renderer-backgrounding",
    "--force-color-profile=srgb",
    "--metrics-recording-only",
    "--password-store=basic",
    "--use-mock-keychain",
    "--no-service-autorun",
    "--disable-search-engine-choice-screen",
    "--hide-scrollbars",
    "--mute-audio",
    "--blink-settings=primaryHoverType=2,availableHoverTypes=2,primaryPointerType=4,"
    "availablePointerTypes=4",
]
VIEWPORT: ViewportSize = {"width": 1400, "height": 900}
BROWSER_START_TIMEOUT_S = 60.0
EXTENSION_NAME = "loom-jupyter"
SIDEBAR_ID = "loom-sidebar"
SERVER_START_TIMEOUT_S = 90.0
SERVER_STOP_TIMEOUT_S = 15.0
# Playwright timeouts are in milliseconds; the first page load compiles nothing
# but still fetches a few MB of JavaScript on a busy 2-core machine.
PAGE_TIMEOUT_MS = 30_000
# Loading and restoring a whole app (JupyterLab or Notebook 7) on a loaded 2-core machine.
APP_TIMEOUT_MS = 90_000
CLOSE_RETRY_S = 5.0
FILE_BROWSER_IN = """(folder) => {
    const browser = Array.from(window.jupyterapp.shell.widgets('left'))
        .find((widget) => widget.id === 'filebrowser');
    return browser === undefined || browser.model.path === (folder === '.' ? '' : folder);
}"""
# Every main-area tab but the launcher JupyterLab opens when the main area empties.
LAUNCHER = "(widget) => widget.id.startsWith('launcher-')"
OPEN_TABS = f"""() => Array.from(window.jupyterapp.shell.widgets('main'))
    .filter((widget) => !({LAUNCHER})(widget)).length"""
# Whether the page runs JupyterLab (not Notebook 7, not a blank or half-loaded page).
LAB_RUNNING = "() => window.jupyterapp?.name === 'JupyterLab'"
# Polled by wait_for_function until the app is restored: its own ``restored`` promise,
# settled into a flag on the app by a then-callback (never a promise awaited by an evaluate:
# a navigation or reload meanwhile would take the awaited promise with it). A new document
# has a new app, which gets its own callback on the next poll. Never throws: a predicate
# that throws ends the wait. Settles to true, or to the reason the promise was rejected.
APP_RESTORED = """() => {
    const app = window.jupyterapp;
    if (app === undefined || app.restored === undefined) { return false; }
    if (app.__harnessRestored === undefined) {
        app.__harnessRestored = false;
        app.restored.then(
            () => { app.__harnessRestored = true; },
            (error) => { app.__harnessRestored = `restored rejected: ${error}`; });
    }
    return app.__harnessRestored;
}"""
OPEN_IN_APP = """async (app, path) => {
    await app.restored;
    await app.commands.execute('docmanager:open', {path});
}"""
# What a page that did not restore in time shows, for the failure message.
APP_FOUND = """() => window.jupyterapp === undefined
    ? 'no window.jupyterapp: the page did not load the app'
    : `${window.jupyterapp.name} loaded, not restored`"""
# The launcher JupyterLab puts in an emptied main area: a page booted on a notebook has none.
CLOSE_LAUNCHERS = f"""(app) => {{
    for (const widget of Array.from(app.shell.widgets('main'))) {{
        if (({LAUNCHER})(widget)) {{ widget.close(); }}
    }}
}}"""
# What one test leaves in a shared page: its tabs (disposed: unsaved changes are dropped
# and no "Save your work?" dialog waits for an answer), the right panel open (a booted page
# shows it closed), the file browser in its folder, observers and globals it put on
# ``window`` (test scripts register observers in ``window.__loomObservers``), focus.
# True when the page is clean again: no tab, no dialog.
RESET_SHELL = f"""async (app) => {{
    for (const widget of Array.from(app.shell.widgets('main'))) {{
        if (!({LAUNCHER})(widget)) {{ widget.dispose(); }}
    }}
    app.shell.collapseRight();
    await app.commands.execute('filebrowser:go-to-path', {{path: '/', dontShowBrowser: true}});
    for (const observer of window.__loomObservers ?? []) {{ observer.disconnect(); }}
    for (const name of Object.keys(window)) {{
        if (name.startsWith('__loom')) {{ delete window[name]; }}
    }}
    document.activeElement?.blur?.();
    const tabs = Array.from(app.shell.widgets('main')).filter((w) => !({LAUNCHER})(w));
    return tabs.length === 0 && document.querySelector('.jp-Dialog') === null;
}}"""
# The news toast covers the bottom of the sidebars and update checks reach out
# to the network: turn both off for the test server.
SETTINGS_OVERRIDES = {
    "@jupyterlab/apputils-extension:notification": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
    # The panel's once-after-install opening is tested on its own (test_first_minute.py).
    "loom-jupyter:sidebar": {"opened": True},
}


@dataclass(frozen=True, kw_only=True)
class LabServer:
    """A running JupyterLab server started for the test session."""

    base_url: str
    token: str
    root_dir: Path
    log_path: Path
    process: subprocess.Popen[bytes]

    def url(self, path: str) -> str:
        """An authenticated URL for a path below the server's base URL."""
        separator = "&" if "?" in path else "?"
        return f"{self.base_url}{path}{separator}token={self.token}"

    def workspace_url(self, notebook: str) -> str:
        """The URL opening ``notebook`` (relative to root_dir) in a fresh workspace."""
        return self.url(f"lab/workspaces/loom-{secrets.token_hex(6)}/tree/{notebook}")

    def log_text(self) -> str:
        """The server's log so far (stdout and stderr)."""
        return self.log_path.read_text(errors="replace")

    @property
    def config_home(self) -> Path:
        """The server's (and its kernels') ``XDG_CONFIG_HOME``: empty at start, so no
        developer's ``loom.yaml``, key or folder trust reaches a test."""
        return self.root_dir.parent / "xdg-config"


@dataclass
class LabPage:
    """A JupyterLab page in a browser context; one page may serve many tests in turn.

    :meth:`open` opens a notebook in the JupyterLab the page already runs, as the file
    browser would; only a page that runs none yet loads one (:meth:`boot`). A test that
    needs the page itself loaded again calls :meth:`boot` or :meth:`reload`.
    """

    page: Page
    server: LabServer
    # The folder a /tree/ URL the page last loaded will send the file browser to, until
    # it has gone there (see rename()).
    _tree_folder: str | None = field(default=None, init=False, repr=False)

    def open(self, notebook: str) -> Locator:
        """Open ``notebook`` and return its notebook panel once it is the current tab.

        In a page that already runs JupyterLab this is ``docmanager:open`` (and the
        launcher an emptied main area shows is closed, as on a freshly loaded page);
        otherwise the page loads JupyterLab on it under a new workspace (:meth:`boot`).
        """
        if not self.page.evaluate(LAB_RUNNING):
            return self.boot(notebook)
        self.app_eval(OPEN_IN_APP, notebook)
        panel = self._panel(notebook)
        self.app_eval(CLOSE_LAUNCHERS)
        return panel

    def boot(self, notebook: str) -> Locator:
        """Load JupyterLab afresh on ``notebook`` under a new workspace (a page load);
        return its notebook panel once the app is restored."""
        self.page.goto(self.server.workspace_url(notebook))
        self._restored()
        return self._panel(notebook)

    def reload(self) -> None:
        """Reload the page (the same workspace; the URL names the current notebook) and
        wait until the app is restored."""
        self.page.reload()
        self._restored()

    def wait_layout_saved(self, holds: Callable[[dict[str, Any]], bool], what: str) -> None:
        """Wait until the server's copy of this page's workspace has a layout for which
        ``holds`` is true. JupyterLab saves the layout a moment after it changes, and a
        reload restores what the server holds, not what the page showed."""
        workspace = self.page.url.partition("/lab/workspaces/")[2].partition("/")[0]
        assert workspace, f"{self.page.url} names no workspace"
        url = self.server.url(f"lab/api/workspaces/{urllib.parse.quote(workspace)}")
        deadline = time.monotonic() + APP_TIMEOUT_MS / 1000
        layout: dict[str, Any] = {}
        while time.monotonic() < deadline:
            with urllib.request.urlopen(url, timeout=30) as response:
                layout = json.load(response).get("data", {}).get("layout-restorer:data", {})
            if holds(layout):
                return
            time.sleep(0.1)
        pytest.fail(f"The server never saved a layout where {what}: {layout}", pytrace=False)

    def _restored(self) -> None:
        self.wait_restored()
        tree = self.page.url.split("?")[0].partition("/tree/")[2]
        self._tree_folder = Path(urllib.parse.unquote(tree)).parent.as_posix() if tree else None

    def wait_restored(self, timeout_ms: float = APP_TIMEOUT_MS) -> None:
        """Wait until the app the page runs (JupyterLab or Notebook 7) is restored, by polling
        a flag its ``restored`` promise sets: it holds across a navigation or a reload the
        app makes meanwhile (nothing awaits a promise of a document that may go away)."""
        try:
            state = self.page.wait_for_function(APP_RESTORED, timeout=timeout_ms).json_value()
        except PlaywrightTimeoutError:
            url, found = self.page.url, self.page.evaluate(APP_FOUND)
            pytest.fail(
                f"The app at {url} was not restored within {timeout_ms / 1000:.0f} s ({found})",
                pytrace=False,
            )
        if state is not True:
            pytest.fail(f"The app at {self.page.url} did not restore: {state}", pytrace=False)

    def open_more(self, notebook: str) -> Locator:
        """Open another notebook in this page (it becomes the active one)."""
        self.app_eval(
            "async (app, path) => { await app.commands.execute('docmanager:open', {path}); }",
            notebook,
        )
        return self._panel(notebook)

    def open_sidebar(self) -> Locator:
        """Show the Loom sidebar by clicking its tab; return the visible panel."""
        sidebar = self.page.locator(f"#{SIDEBAR_ID}")
        if not sidebar.is_visible():
            self.page.locator(f'.jp-SideBar.jp-mod-right li[data-id="{SIDEBAR_ID}"]').click()
        sidebar.wait_for(state="visible")
        return sidebar

    def activate_tab(self, notebook: str) -> None:
        """Click the main-area tab of an open notebook, as a person would."""
        name = Path(notebook).name
        self.page.locator("#jp-main-dock-panel .lm-TabBar-tab", has_text=name).click()

    def close_all(self) -> None:
        """Close every main-area tab, answering "Discard" to unsaved-change dialogs.

        A notebook becomes dirty as soon as its kernel reports language info, so
        whether a dialog shows up depends on timing; a close that lands while the
        notebook is still settling can be dropped, so it is repeated until done.
        """
        discard = self.page.locator(".jp-Dialog").get_by_role("button", name="Discard").first
        deadline = time.monotonic() + PAGE_TIMEOUT_MS / 1000
        next_close = 0.0
        while self.page.evaluate(OPEN_TABS) > 0:
            now = time.monotonic()
            if now > deadline:
                dialogs = self.page.locator(".jp-Dialog").all_inner_texts()
                pytest.fail(f"The notebooks did not close; dialogs: {dialogs}", pytrace=False)
            if discard.is_visible():
                discard.click()
            elif now >= next_close:
                self.app_eval("(app) => { void app.commands.execute('application:close-all'); }")
                next_close = now + CLOSE_RETRY_S
            self.page.wait_for_timeout(100)

    def rename(self, source: str, target: str) -> None:
        """Rename a file through the contents API, as the file browser's Rename does.

        The file browser is first sent to the root folder, which holds only the tests'
        folders: Jupyter Server answers 404 for a whole listing when one of its files
        disappears while it is listed, so a refresh of the renamed file's folder that
        overlaps the rename shows a "Directory not found" dialog over the page. The /tree/
        URL :meth:`boot` and :meth:`reload` load sends the browser to the notebook's folder
        about a second after the app is restored: that move is waited for first, so it
        cannot come after (a notebook opened in the running app moves it nowhere).
        """
        self._settle_file_browser()
        self.app_eval(
            """async (app, [source, target]) => {
                const root = {path: '/', dontShowBrowser: true};
                await app.commands.execute('filebrowser:go-to-path', root);
                await app.serviceManager.contents.rename(source, target);
            }""",
            [source, target],
        )

    def reset(self) -> bool:
        """Make a JupyterLab page that served a test look booted for the next one: every
        tab closed (unsaved changes discarded), the right panel closed, the file browser
        at the root, test observers and ``window.__loom*`` globals gone, nothing focused,
        the mouse in the corner. False when the page runs no JupyterLab (Notebook 7, a
        page that did not load) or a tab or dialog stays open: then it is not reusable.
        Kernels are the caller's to shut down (the page keeps none open after this)."""
        if not self.page.evaluate(LAB_RUNNING):
            return False
        self._settle_file_browser()
        self.page.mouse.move(0, 0)
        clean: bool = self.app_eval(RESET_SHELL)
        return clean

    def _settle_file_browser(self) -> None:
        """Wait until the file browser has made the move the last loaded /tree/ URL asks
        for (about a second after the app is restored), so it cannot come later."""
        if self._tree_folder is not None:
            self.page.wait_for_function(FILE_BROWSER_IN, arg=self._tree_folder)
            self._tree_folder = None

    def app_eval(self, function: str, arg: Any = None) -> Any:
        """Evaluate ``function(app, arg)`` in the page with ``window.jupyterapp``."""
        script = f"async (arg) => await ({function})(window.jupyterapp, arg)"
        return self.page.evaluate(script, arg)

    def _panel(self, notebook: str) -> Locator:
        """Wait until ``notebook`` is the shell's visible current widget."""
        widget_id = self.page.wait_for_function(
            """(path) => {
                const widget = window.jupyterapp?.shell.currentWidget;
                const ready = widget?.context?.path === path && widget.isVisible;
                return ready ? widget.id : null;
            }""",
            arg=notebook,
        ).json_value()
        return self.page.locator(f'[id="{widget_id}"]')


def write_notebook(folder: Path, name: str, sources: list[str] | None = None) -> Path:
    """Write a python3 notebook (nbformat 4.5) with code cells ``sources``; return its path."""
    cells: list[dict[str, Any]] = [
        {
            "cell_type": "code",
            "id": secrets.token_hex(4),
            "metadata": {},
            "execution_count": None,
            "outputs": [],
            "source": source,
        }
        for source in sources or [""]
    ]
    notebook = {
        "cells": cells,
        "metadata": {
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path = folder / name
    path.write_text(json.dumps(notebook, indent=1))
    return path


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def installed_extension_dir() -> Path:
    """The installed prebuilt extension, or fail saying how to install it."""
    for folder in jupyter_path("labextensions"):
        candidate = Path(folder) / EXTENSION_NAME
        if (candidate / "package.json").is_file():
            return candidate
    pytest.fail(
        f"The {EXTENSION_NAME} labextension is not installed in this environment. "
        "Install the project first: pip install -e '.[test]'",
        pytrace=False,
    )


def _server_command(port: int, token: str, base: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--allow-root",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={base / 'root'}",
        f"--LabApp.workspaces_dir={base / 'workspaces'}",
        f"--LabApp.user_settings_dir={base / 'user-settings'}",
        f"--LabApp.app_settings_dir={base / 'app-settings'}",
        "--LabApp.expose_app_in_browser=True",
        # Notebook 7 (served by the same server at /notebooks/...) reads its own flag.
        "--JupyterNotebookApp.expose_app_in_browser=True",
    ]


def _prepare_dirs(base: Path) -> None:
    (base / "xdg-config").mkdir(parents=True)  # the processes' XDG_CONFIG_HOME, empty
    for name in ("root", "workspaces", "user-settings", "app-settings", "config", "runtime"):
        (base / name).mkdir(parents=True)
    overrides = base / "app-settings" / "overrides.json"
    overrides.write_text(json.dumps(SETTINGS_OVERRIDES, indent=2))


def _wait_until_ready(server: LabServer) -> None:
    deadline = time.monotonic() + SERVER_START_TIMEOUT_S
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            pytest.fail(f"JupyterLab exited at start:\n{server.log_text()}", pytrace=False)
        try:
            with urllib.request.urlopen(server.url("api/status"), timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.25)
    pytest.fail(
        f"JupyterLab did not answer within {SERVER_START_TIMEOUT_S:.0f} s:\n{server.log_text()}",
        pytrace=False,
    )


def kernel_ids(server: LabServer) -> list[str]:
    """The ids of the server's running kernels (none when it does not answer)."""
    try:
        with urllib.request.urlopen(server.url("api/kernels"), timeout=30) as response:
            return [kernel["id"] for kernel in json.load(response)]
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return []


def shutdown_kernels(server: LabServer, ids: list[str] | None = None) -> None:
    """Ask the server to shut kernels down (by default all of them, as the UI's "Shut Down
    All" does); each request returns once its kernel has ended."""
    for kernel_id in kernel_ids(server) if ids is None else ids:
        request = urllib.request.Request(server.url(f"api/kernels/{kernel_id}"), method="DELETE")
        try:
            urllib.request.urlopen(request, timeout=60).close()
        except urllib.error.HTTPError as error:
            if error.code != 404:  # 404: it had ended already (the test shut it down)
                return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            # The server is already gone or stuck: stop_lab_server still ends it by its PID.
            return


class KernelReaper:
    """Shuts each finished test's kernels down on a thread, so the next test does not wait
    the second or two each takes to end (Loom's own shutdown, then the process's exit).

    The ids are listed when the test ends, before the next test can start a kernel, so only
    kernels of finished tests are reaped; one batch at a time; :meth:`join` waits for the
    batch in flight (before the server stops, or for a test that needs no other kernel
    running: an outside agent lists every kernel of the runtime folder)."""

    def __init__(self, server: LabServer) -> None:
        self._server = server
        self._thread: threading.Thread | None = None

    def reap(self) -> None:
        ids = kernel_ids(self._server)
        self.join()
        if ids:
            self._thread = threading.Thread(
                target=shutdown_kernels, args=(self._server, ids), name="kernel-reaper"
            )
            self._thread.start()

    def join(self) -> None:
        if self._thread is not None:
            self._thread.join()
            self._thread = None


def stop_lab_server(server: LabServer) -> None:
    """Shut kernels down, then SIGTERM the server; SIGKILL only if it hangs."""
    process = server.process
    if process.poll() is not None:
        return
    shutdown_kernels(server)
    process.terminate()
    try:
        process.wait(timeout=SERVER_STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@dataclass(frozen=True, kw_only=True)
class BrowserProcess:
    """A headless chromium started by the harness; playwright connects to it over CDP
    (``endpoint``), so it and its pages outlive one playwright connection."""

    endpoint: str
    process: subprocess.Popen[bytes]
    log_path: Path


def start_browser(base: Path) -> BrowserProcess:
    """Start Debian's chromium headless with playwright's launch switches, its profile under
    ``base``, a DevTools port of its own; return once the port is known."""
    if not CHROMIUM.is_file():
        pytest.fail(f"{CHROMIUM} is missing: apt-get install -y chromium", pytrace=False)
    profile = base / "profile"
    profile.mkdir(parents=True)
    command = [
        str(CHROMIUM),
        *CHROMIUM_ARGS,
        *LAUNCH_SWITCHES,
        f"--user-data-dir={profile}",
        "--remote-debugging-port=0",
        f"--window-size={VIEWPORT['width']},{VIEWPORT['height']}",
        "about:blank",
    ]
    log_path = base / "chromium.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )
    port_file = profile / "DevToolsActivePort"  # "<port>\n<browser target path>"
    deadline = time.monotonic() + BROWSER_START_TIMEOUT_S
    while time.monotonic() < deadline and process.poll() is None:
        lines = port_file.read_text().splitlines() if port_file.is_file() else []
        if len(lines) >= 2:
            endpoint = f"ws://127.0.0.1:{lines[0]}{lines[1]}"
            return BrowserProcess(endpoint=endpoint, process=process, log_path=log_path)
        time.sleep(0.05)
    stop_browser_process(process)
    pytest.fail(
        f"chromium gave no DevTools port within {BROWSER_START_TIMEOUT_S:.0f} s:\n"
        f"{log_path.read_text(errors='replace')[-2000:]}",
        pytrace=False,
    )


def stop_browser_process(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM chromium by its PID; SIGKILL only if it hangs."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=SERVER_STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def start_lab_server(base: Path) -> LabServer:
    """Start JupyterLab with its state under ``base``; return once it answers."""
    installed_extension_dir()
    _prepare_dirs(base)
    port, token = _free_port(), secrets.token_hex(16)
    env = {
        **{name: value for name, value in os.environ.items() if not name.startswith("LOOM_")},
        "JUPYTER_CONFIG_DIR": str(base / "config"),
        "JUPYTER_RUNTIME_DIR": str(base / "runtime"),
        "XDG_CONFIG_HOME": str(base / "xdg-config"),
        "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring",  # a saved key: that folder
    }
    log_path = base / "server.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            _server_command(port, token, base),
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
        )
    server = LabServer(
        base_url=f"http://127.0.0.1:{port}/",
        token=token,
        root_dir=base / "root",
        log_path=log_path,
        process=process,
    )
    try:
        _wait_until_ready(server)
    except BaseException:
        stop_lab_server(server)
        raise
    return server


@contextmanager
def standalone_lab(
    width: int = 1400, height: int = 900, timeout_ms: float = 60_000
) -> Iterator[LabPage]:
    """A JupyterLab in a temporary folder and a headless chromium page on it, for scripts
    (benchmarks, screenshots): the server, the browser and the folder go afterwards."""
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        server = start_lab_server(Path(tmp) / "lab")
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
                )
                try:
                    context = browser.new_context(viewport={"width": width, "height": height})
                    context.set_default_timeout(timeout_ms)
                    yield LabPage(page=context.new_page(), server=server)
                finally:
                    browser.close()
        finally:
            stop_lab_server(server)
