"""Browser fixtures: a real JupyterLab server driven by a real headless chromium.

Reusable by every browser test (the Loom sidebar now, the chat sidebar later):

``lab_server`` (session)
    A :class:`LabServer`: JupyterLab on 127.0.0.1, a free port, a random token,
    temp ``root_dir``/``workspaces_dir``/settings dirs (news and update checks
    off), started once and stopped by its PID. ``lab_server.root_dir`` is the
    folder the server serves; ``lab_server.log_text()`` is its log so far.
``chromium`` (module)
    A playwright ``Browser`` running ``/usr/bin/chromium`` headless. Module
    scope keeps playwright's event loop from leaking into async tests elsewhere;
    do not put ``async def`` tests in a module that uses it.
``notebook_dir`` (function)
    A fresh folder inside the server's root for one test, so tests never share
    files. ``write_notebook(folder, name, sources)`` puts a
    python3 notebook in it.
``lab`` (function)
    A :class:`LabPage`: one JupyterLab page per module (booted by the first test that
    opens a notebook; about 4 s of renderer CPU each time), reset between tests, while
    each test still gets a fresh folder, notebook and kernel. ``lab.open(path)`` opens a
    notebook in the running app (``docmanager:open``; a page that runs none yet loads
    JupyterLab on it under a new workspace) and returns its panel;
    ``lab.boot(path)`` loads the page afresh under a new workspace (a test about a new
    page says so with it); ``lab.reload()`` reloads it;
    ``lab.open_more(path)`` opens another one in the same page;
    ``lab.open_sidebar()`` shows the Loom sidebar and returns its locator;
    ``lab.activate_tab(path)`` clicks a notebook's tab; ``lab.close_all()``
    closes every tab (discarding unsaved changes); ``lab.rename(a, b)`` renames a
    file as the file browser would (never racing the browser's folder listing);
    ``lab.app_eval(js, arg)`` runs a function ``(app, arg) => ...`` against
    ``window.jupyterapp``; ``lab.page`` is the playwright ``Page``. When a
    test fails, its screenshot (``failure.png`` in its tmp_path) and the end of
    the server log are shown in the report.

    After each test (:meth:`LabPage.reset`): every tab closed discarding changes, the
    test's kernels shut down, the right panel closed, the file browser at the root,
    focus and mouse parked, and the observers a test script registered in
    ``window.__loomObservers`` disconnected with every ``window.__loom*`` global gone;
    a test that adds a playwright listener to ``lab.page`` removes it. A test that failed
    or left the page unusable (Notebook 7, a dialog) drops it: the next one gets a new page.
``fresh_lab`` (function)
    A :class:`LabPage` of its own in a fresh browser context, nothing loaded: for the
    few tests that need a new page (the first run after install, a setting read at page
    load, Notebook 7); each says why in one line.

The types and helpers (``LabServer``, ``LabPage``, ``write_notebook``,
``start_lab_server``) live in ``lab_harness.py``; import them from there.

The plain playwright sync API is used (not pytest-playwright's fixtures) so the
browser fixtures do not depend on that plugin's parametrisation or options.
Every test using these fixtures must be marked ``@pytest.mark.browser``.
"""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING, Any

import pytest
from lab_harness import (
    CHROMIUM,
    CHROMIUM_ARGS,
    LAB_RUNNING,
    PAGE_TIMEOUT_MS,
    LabPage,
    LabServer,
    shutdown_kernels,
    start_lab_server,
    stop_lab_server,
)
from playwright.sync_api import Browser, BrowserContext, sync_playwright

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

_REPORTS = pytest.StashKey[dict[str, pytest.TestReport]]()


@pytest.fixture(scope="session")
def lab_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    """JupyterLab with the installed Loom extension, for the whole session."""
    server = start_lab_server(tmp_path_factory.mktemp("jupyterlab"))
    try:
        yield server
    finally:
        stop_lab_server(server)


@pytest.fixture(scope="module")
def chromium() -> Iterator[Browser]:
    """Debian's chromium, headless, driven by playwright (never a downloaded browser).

    Module-scoped on purpose: while the sync API is alive it marks its asyncio
    loop as running in this thread, which breaks pytest-asyncio tests that run
    later in the session. Stopping it at the end of each module clears that.
    """
    if not CHROMIUM.is_file():
        pytest.fail(f"{CHROMIUM} is missing: apt-get install -y chromium", pytrace=False)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        yield browser
        browser.close()


@pytest.fixture
def notebook_dir(lab_server: LabServer, request: pytest.FixtureRequest) -> Path:
    """A fresh folder in the server's root for one test."""
    folder = lab_server.root_dir / f"{request.node.name[:40]}-{secrets.token_hex(3)}"
    folder.mkdir()
    return folder


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Remember each phase's report so ``lab`` can tell whether its test failed."""
    report = yield
    item.stash.setdefault(_REPORTS, {})[report.when] = report
    return report


class _SharedLab:
    """One browser context and page kept for a module's ``lab`` tests (created when the
    first one asks); :meth:`discard` drops it so the next test gets a new one."""

    def __init__(self, chromium: Browser, server: LabServer) -> None:
        self._chromium = chromium
        self._server = server
        self._context: BrowserContext | None = None
        self._lab: LabPage | None = None

    def get(self) -> LabPage:
        if self._lab is None:
            self._context, self._lab = _new_page(self._chromium, self._server)
        return self._lab

    def discard(self) -> None:
        if self._context is not None:
            self._context.close()
        self._context, self._lab = None, None


def _new_page(chromium: Browser, server: LabServer) -> tuple[BrowserContext, LabPage]:
    """A page in a fresh browser context (no shared storage or layout), nothing loaded."""
    context = chromium.new_context(viewport={"width": 1400, "height": 900})
    context.set_default_timeout(PAGE_TIMEOUT_MS)
    return context, LabPage(page=context.new_page(), server=server)


def _report_failure(request: pytest.FixtureRequest, lab: LabPage, tmp_path: Path) -> bool:
    """When the test failed: its screenshot to tmp_path and the end of the server log in
    its report. Whether it failed."""
    call = request.node.stash.get(_REPORTS, {}).get("call")
    if call is None or not call.failed:
        return False
    shot = tmp_path / "failure.png"
    lab.page.screenshot(path=str(shot))
    log_tail = "\n".join(lab.server.log_text().splitlines()[-40:])
    request.node.add_report_section("teardown", "jupyterlab", f"{shot}\n{log_tail}")
    return True


@pytest.fixture(scope="module")
def _shared_lab(chromium: Browser, lab_server: LabServer) -> Iterator[_SharedLab]:
    shared = _SharedLab(chromium, lab_server)
    try:
        yield shared
    finally:
        shared.discard()


@pytest.fixture
def lab(
    _shared_lab: _SharedLab,
    lab_server: LabServer,
    request: pytest.FixtureRequest,
    tmp_path: Path,
) -> Iterator[LabPage]:
    """The module's JupyterLab page, reset for this test (see :meth:`LabPage.reset`).

    When the test fails, a screenshot goes to the test's tmp_path, the end of the server
    log is added to the report, and the page is dropped (the next test gets a new one).
    """
    lab = _shared_lab.get()
    try:
        yield lab
        if _report_failure(request, lab, tmp_path) or not _reset(lab, request):
            _shared_lab.discard()
    finally:
        shutdown_kernels(lab_server)  # each test's kernels end with it


def _reset(lab: LabPage, request: pytest.FixtureRequest) -> bool:
    """Reset the page for the next test; False (with a warning when something went wrong)
    when it cannot serve again. Notebook 7 pages are never reused, silently."""
    try:
        if lab.reset():
            return True
        if lab.page.evaluate(LAB_RUNNING):
            request.node.warn(pytest.PytestWarning("a dialog stayed open: page not reused"))
    except (Exception, pytest.fail.Exception) as error:
        request.node.warn(pytest.PytestWarning(f"page not reused, its reset failed: {error}"))
    return False


@pytest.fixture
def fresh_lab(
    lab_server: LabServer, chromium: Browser, request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[LabPage]:
    """A page of its own in a fresh browser context, nothing loaded yet: for a test that
    needs what only a new page has (say why where it is used). Failure reports as ``lab``."""
    context, lab = _new_page(chromium, lab_server)
    try:
        yield lab
        _report_failure(request, lab, tmp_path)
    finally:
        context.close()
        shutdown_kernels(lab_server)  # each test's kernels end with it
