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
    A :class:`LabPage` in a fresh browser context: ``lab.open(path)`` opens a
    notebook under a new workspace and waits until the app is restored;
    ``lab.open_more(path)`` opens another one in the same page;
    ``lab.open_sidebar()`` shows the Loom sidebar and returns its locator;
    ``lab.activate_tab(path)`` clicks a notebook's tab; ``lab.close_all()``
    closes every tab (discarding unsaved changes); ``lab.rename(a, b)`` renames a
    file as the file browser would (never racing the browser's folder listing);
    ``lab.app_eval(js, arg)`` runs a function ``(app, arg) => ...`` against
    ``window.jupyterapp``; ``lab.page`` is the playwright ``Page``. When a
    test fails, its screenshot (``failure.png`` in its tmp_path) and the end of
    the server log are shown in the report.

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
    PAGE_TIMEOUT_MS,
    LabPage,
    LabServer,
    shutdown_kernels,
    start_lab_server,
    stop_lab_server,
)
from playwright.sync_api import Browser, sync_playwright

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


@pytest.fixture
def lab(
    lab_server: LabServer, chromium: Browser, request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[LabPage]:
    """A fresh browser context on the test server (no shared storage or layout).

    When the test fails, a screenshot goes to the test's tmp_path and the end of
    the server log is added to the report.
    """
    context = chromium.new_context(viewport={"width": 1400, "height": 900})
    context.set_default_timeout(PAGE_TIMEOUT_MS)
    lab = LabPage(page=context.new_page(), server=lab_server)
    try:
        yield lab
        call = request.node.stash.get(_REPORTS, {}).get("call")
        if call is not None and call.failed:
            shot = tmp_path / "failure.png"
            lab.page.screenshot(path=str(shot))
            log_tail = "\n".join(lab_server.log_text().splitlines()[-40:])
            request.node.add_report_section("teardown", "jupyterlab", f"{shot}\n{log_tail}")
    finally:
        context.close()
        shutdown_kernels(lab_server)  # each test's kernels end with it
