"""Browser fixtures: a real JupyterLab server driven by a real headless chromium.

Reusable by every browser test (the Loom sidebar now, the chat sidebar later):

``lab_server`` (session)
    A :class:`LabServer`: JupyterLab on 127.0.0.1, a free port, a random token,
    temp ``root_dir``/``workspaces_dir``/settings dirs (news and update checks
    off), started once and stopped by its PID. ``lab_server.root_dir`` is the
    folder the server serves; ``lab_server.log_text()`` is its log so far.
``chromium`` (module)
    A playwright ``Browser``: a connection (over CDP) to ``/usr/bin/chromium``, headless,
    which the harness starts once per session with playwright's launch switches (and again
    if it died). Module scope keeps playwright's event loop from leaking into async tests
    elsewhere; do not put ``async def`` tests in a module that uses it.
``notebook_dir`` (function)
    A fresh folder inside the server's root for one test, so tests never share
    files. ``write_notebook(folder, name, sources)`` puts a
    python3 notebook in it.
``lab`` (function)
    A :class:`LabPage`: one JupyterLab page, the page of the browser's default context,
    booted by the first test that opens a notebook (about 4 s of renderer CPU each time)
    and kept from test to test and from module to module, reset between tests, while
    each test still gets a fresh folder, notebook and kernel. ``lab.open(path)`` opens a
    notebook in the running app (``docmanager:open``; a page that runs none yet loads
    JupyterLab on it under a new workspace) and returns its panel;
    ``lab.boot(path)`` loads the page afresh under a new workspace (a test about a new
    page says so with it); ``lab.reload()`` reloads it; both return once the app is
    restored (``lab.wait_restored()``, which polls the app's own signal and holds across
    a navigation); ``lab.open_more(path)`` opens another one in the same page;
    ``lab.open_sidebar()`` shows the Loom sidebar and returns its locator;
    ``lab.activate_tab(path)`` clicks a notebook's tab; ``lab.close_all()``
    closes every tab (discarding unsaved changes); ``lab.rename(a, b)`` renames a
    file as the file browser would (never racing the browser's folder listing);
    ``lab.app_eval(js, arg)`` runs a function ``(app, arg) => ...`` against
    ``window.jupyterapp``; ``lab.page`` is the playwright ``Page``. When a
    test fails, its screenshot (``failure.png`` in its tmp_path) and the end of
    the server log are shown in the report.

    After each test (:meth:`LabPage.reset`): every tab disposed (changes dropped), the
    right panel closed, the file browser at the root, focus and mouse parked, and the
    observers a test script registered in ``window.__loomObservers`` disconnected with
    every ``window.__loom*`` global gone; a test that adds a playwright listener to
    ``lab.page`` removes it. A test that failed or left the page unusable (Notebook 7, a
    dialog) drops it: the next one gets a new page. The test's kernels are listed when it
    ends and shut down on a thread (the next test does not wait for them to exit).
``fresh_lab`` (function)
    A :class:`LabPage` of its own in a fresh browser context, nothing loaded: for the
    few tests that need a new page (the first run after install, a setting read at page
    load, Notebook 7); each says why in one line.
``kernels_settled`` (function)
    Waits until no kernel of an earlier test is still shutting down: for a test whose
    subject lists every kernel the server runs (an outside agent).

Every ``expect`` waits up to ``PAGE_TIMEOUT_MS`` (a busy 2-core machine); it passes as
soon as what it expects is there.

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
    LAB_RUNNING,
    PAGE_TIMEOUT_MS,
    VIEWPORT,
    BrowserProcess,
    KernelReaper,
    LabPage,
    LabServer,
    start_browser,
    start_lab_server,
    stop_browser_process,
    stop_lab_server,
)
from playwright.sync_api import Browser, BrowserContext, expect, sync_playwright

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

_REPORTS = pytest.StashKey[dict[str, pytest.TestReport]]()

# An expectation waits as long as an action may (playwright's own default is 5 s, short for
# a renderer sharing 2 cores with a kernel, a server and another lane). A longer cap only
# changes how long a failing expectation takes to say so: every one passes at once when
# what it expects is there.
expect.set_options(timeout=PAGE_TIMEOUT_MS)


@pytest.fixture(scope="session")
def lab_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    """JupyterLab with the installed Loom extension, for the whole session."""
    server = start_lab_server(tmp_path_factory.mktemp("jupyterlab"))
    try:
        yield server
    finally:
        stop_lab_server(server)


@pytest.fixture(scope="session")
def _kernel_reaper(lab_server: LabServer) -> Iterator[KernelReaper]:
    reaper = KernelReaper(lab_server)
    try:
        yield reaper
    finally:
        reaper.join()


@pytest.fixture
def kernels_settled(_kernel_reaper: KernelReaper) -> None:
    """No kernel of an earlier test is still shutting down when this test starts (for a
    test whose subject lists every kernel the server runs)."""
    _kernel_reaper.join()


class _BrowserProcesses:
    """The session's chromium, started when first needed and again if it died."""

    def __init__(self, base: Path) -> None:
        self._base = base
        self._started = 0
        self._current: BrowserProcess | None = None

    def endpoint(self) -> str:
        if self._current is None or self._current.process.poll() is not None:
            self._started += 1
            self._current = start_browser(self._base / f"chromium-{self._started}")
        return self._current.endpoint

    def stop(self) -> None:
        if self._current is not None:
            stop_browser_process(self._current.process)


@pytest.fixture(scope="session")
def _browser_processes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[_BrowserProcesses]:
    processes = _BrowserProcesses(tmp_path_factory.mktemp("browser"))
    try:
        yield processes
    finally:
        processes.stop()


@pytest.fixture(scope="module")
def chromium(_browser_processes: _BrowserProcesses) -> Iterator[Browser]:
    """Debian's chromium, headless (never a downloaded browser), driven by playwright.

    The browser runs for the session, started by the harness with playwright's launch
    switches; each module connects to it over CDP. The connection is module-scoped on
    purpose: while the sync API is alive it marks its asyncio loop as running in this
    thread, which breaks pytest-asyncio tests that run later in the session. Ending it at
    the end of each module clears that; the browser and its default context's page stay.
    """
    with sync_playwright() as playwright:
        browser = playwright.chromium.connect_over_cdp(_browser_processes.endpoint())
        try:
            yield browser
        finally:
            browser.close()  # a connected browser: this disconnects, its pages stay


@pytest.fixture
def notebook_dir(lab_server: LabServer, request: pytest.FixtureRequest) -> Path:
    """A fresh folder in the server's root for one test."""
    folder = lab_server.root_dir / f"{request.node.name[:40]}-{secrets.token_hex(3)}"
    folder.mkdir()
    return folder


@pytest.fixture(autouse=True)
def _no_leftover_replies(request: pytest.FixtureRequest) -> Iterator[None]:
    """Each test starts with an empty script in its module's fake API: replies a failed test
    never asked for do not answer the next test's first request (a module's ``fake`` outlives
    the test; one made for the test alone is gone with it)."""
    fake = request.getfixturevalue("fake") if "fake" in request.fixturenames else None
    yield
    if fake is not None:
        fake.clear_script()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Remember each phase's report so ``lab`` can tell whether its test failed."""
    report = yield
    item.stash.setdefault(_REPORTS, {})[report.when] = report
    return report


class _SharedLab:
    """The JupyterLab page the ``lab`` tests share: the one page of the browser's default
    context, which outlives each module's connection, so the next module finds it running
    JupyterLab. :meth:`discard` closes it so the next test gets a new one."""

    def __init__(self, chromium: Browser, server: LabServer) -> None:
        self._context = chromium.contexts[0]
        self._context.set_default_timeout(PAGE_TIMEOUT_MS)
        self._server = server
        self._lab: LabPage | None = None

    def get(self) -> LabPage:
        if self._lab is None:
            pages = [page for page in self._context.pages if not page.is_closed()]
            for extra in pages[1:]:
                extra.close()
            page = pages[0] if pages else self._context.new_page()
            page.set_viewport_size(VIEWPORT)  # a connection's emulation ends with it
            self._lab = LabPage(page=page, server=self._server)
        return self._lab

    def discard(self) -> None:
        if self._lab is not None and not self._lab.page.is_closed():
            self._lab.page.close()
        self._lab = None


def _new_page(chromium: Browser, server: LabServer) -> tuple[BrowserContext, LabPage]:
    """A page in a fresh browser context (no shared storage or layout), nothing loaded."""
    context = chromium.new_context(viewport=VIEWPORT)
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
def _shared_lab(chromium: Browser, lab_server: LabServer) -> _SharedLab:
    return _SharedLab(chromium, lab_server)


@pytest.fixture
def lab(
    _shared_lab: _SharedLab,
    _kernel_reaper: KernelReaper,
    request: pytest.FixtureRequest,
    tmp_path: Path,
) -> Iterator[LabPage]:
    """The shared JupyterLab page, reset for this test (see :meth:`LabPage.reset`).

    When the test fails, a screenshot goes to the test's tmp_path, the end of the server
    log is added to the report, and the page is dropped (the next test gets a new one).
    """
    lab = _shared_lab.get()
    try:
        yield lab
        if _report_failure(request, lab, tmp_path) or not _reset(lab, request):
            _shared_lab.discard()
    finally:
        _kernel_reaper.reap()  # each test's kernels end with it, on a thread


def _reset(lab: LabPage, request: pytest.FixtureRequest) -> bool:
    """Reset the page for the next test; False (with a warning when something went wrong)
    when it cannot serve again. Notebook 7 pages are never reused, silently."""
    try:
        if lab.reset():
            return True
        if lab.page.evaluate(LAB_RUNNING):
            request.node.warn(pytest.PytestWarning("a tab or dialog stayed: page not reused"))
    except (Exception, pytest.fail.Exception) as error:
        request.node.warn(pytest.PytestWarning(f"page not reused, its reset failed: {error}"))
    return False


@pytest.fixture
def fresh_lab(
    lab_server: LabServer,
    chromium: Browser,
    _kernel_reaper: KernelReaper,
    request: pytest.FixtureRequest,
    tmp_path: Path,
) -> Iterator[LabPage]:
    """A page of its own in a fresh browser context, nothing loaded yet: for a test that
    needs what only a new page has (say why where it is used). Failure reports as ``lab``."""
    context, lab = _new_page(chromium, lab_server)
    try:
        yield lab
        _report_failure(request, lab, tmp_path)
    finally:
        context.close()
        _kernel_reaper.reap()  # each test's kernels end with it, on a thread
