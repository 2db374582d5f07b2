"""Driving the Loom chat sidebar through its pinned ``data-loom`` attributes (DESIGN §6).

Shared by the sidebar browser tests and ``benchmarks/sidebar_bench.py``. Every wait is
on a condition with a generous cap, never on a sleep.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from playwright.sync_api import expect

if TYPE_CHECKING:
    from lab_harness import LabPage
    from playwright.sync_api import Locator

SIDEBAR = '[data-loom="sidebar"]'
STATUS = '[data-loom="status"]'
INPUT = '[data-loom="input"]'
SEND = '[data-loom="send"]'
STOP = '[data-loom="stop"]'
USER = '[data-loom="message"][data-role="user"]'
ASSISTANT = '[data-loom="message"][data-role="assistant"]'
KERNEL_TIMEOUT_MS = 120_000
ANSWER_TIMEOUT_MS = 120_000

# The kernel of the notebook the shell shows, and a code run that returns its stdout.
CURRENT_KERNEL = "app.shell.currentWidget.sessionContext.session.kernel"
KERNEL_RUN = f"""async (app, code) => {{
    const kernel = {CURRENT_KERNEL};
    const future = kernel.requestExecute({{ code, store_history: false }});
    let out = '';
    future.onIOPub = (msg) => {{
        if (msg.header.msg_type === 'stream') {{ out += msg.content.text; }}
        if (msg.header.msg_type === 'error') {{
            out += `${{msg.content.ename}}: ${{msg.content.evalue}}`;
        }}
    }};
    await future.done;
    return out;
}}"""


def env_cell(base_url: str) -> str:
    """A cell pointing the kernel's anthropic SDK at the fake Messages API."""
    return (
        "import os\n"
        f"os.environ['ANTHROPIC_BASE_URL'] = {base_url!r}\n"
        "os.environ['ANTHROPIC_API_KEY'] = 'sk-ant-browser-test-key'"
    )


def sidebar(lab: LabPage) -> Locator:
    """The visible Loom sidebar (opened if needed)."""
    lab.open_sidebar()
    return lab.page.locator(SIDEBAR)


def wait_kernel_idle(lab: LabPage) -> None:
    """Accept the kernel dialog if JupyterLab shows one; wait until the kernel is idle."""
    select = lab.page.locator(".jp-Dialog").get_by_role("button", name="Select")
    lab.page.wait_for_function(
        """() => document.querySelector('.jp-Dialog') !== null
                || window.jupyterapp.shell.currentWidget?.sessionContext?.session?.kernel
                    ?.status === 'idle'""",
        timeout=KERNEL_TIMEOUT_MS,
    )
    if select.is_visible():
        select.click()
    lab.page.wait_for_function(
        f"() => {{ const app = window.jupyterapp; return {CURRENT_KERNEL}?.status === 'idle'; }}",
        timeout=KERNEL_TIMEOUT_MS,
    )


def wait_state(panel: Locator, state: str, timeout: int = KERNEL_TIMEOUT_MS) -> None:
    """Wait until the state line shows ``state``."""
    expect(panel.locator(STATUS)).to_have_attribute("data-state", state, timeout=timeout)


def hide_setup_cell(lab: LabPage) -> None:
    """Hide the current notebook's first cell (it points the kernel at the fake API): for
    screenshots, where it is not part of the picture."""
    lab.app_eval("(app) => { app.shell.currentWidget.content.widgets[0].inputHidden = true; }")


def open_notebook7(lab: LabPage, served: str) -> Locator:
    """Open ``served`` (a path under the server's root) in Notebook 7 and its Loom panel;
    return the panel once the kernel and the panel are idle (cells not run)."""
    from lab_harness import SIDEBAR_ID

    lab.page.goto(lab.server.url(f"notebooks/{served}"))
    lab.wait_restored()
    lab.page.wait_for_function(
        "(path) => window.jupyterapp?.shell.currentWidget?.context?.path === path", arg=served
    )
    wait_kernel_idle(lab)
    # Asked again until it shows: the panel may join the shell after the app says restored,
    # and an activation before that opens nothing.
    lab.page.wait_for_function(SHOW_PANEL, arg=[SIDEBAR_ID, SIDEBAR], timeout=KERNEL_TIMEOUT_MS)
    panel = lab.page.locator(SIDEBAR)
    expect(panel).to_be_visible()
    wait_state(panel, "idle")
    return panel


SHOW_PANEL = """([id, selector]) => {
    window.jupyterapp.shell.activateById(id);
    const node = document.querySelector(selector);
    return node !== null && node.offsetParent !== null;
}"""


def open_chat(lab: LabPage, notebook: str, *, more: bool = False) -> Locator:
    """Open ``notebook``, run its cells once Loom is loaded, return the idle sidebar."""
    if more:
        lab.open_more(notebook)
    else:
        lab.open(notebook)
    wait_kernel_idle(lab)
    panel = sidebar(lab)
    wait_state(panel, "idle")
    run_all(lab)
    wait_state(panel, "idle")
    return panel


ALL_RAN = """() => window.jupyterapp.shell.currentWidget.content.widgets.every(
    (cell) => cell.model.type !== 'code' || typeof cell.model.executionCount === 'number')"""


def run_all(lab: LabPage, wait: bool = True) -> None:
    """Run every cell of the current notebook; with ``wait``, until each has its count."""
    lab.app_eval("(app) => { void app.commands.execute('notebook:run-all-cells'); }")
    if wait:
        lab.page.wait_for_function(ALL_RAN, timeout=KERNEL_TIMEOUT_MS)


def kernel_run(lab: LabPage, code: str) -> str:
    """Run ``code`` in the current notebook's kernel (no cell); return its output text."""
    result: str = lab.app_eval(KERNEL_RUN, code)
    return result


def send(panel: Locator, text: str) -> None:
    """Type a message and press Send."""
    panel.locator(INPUT).fill(text)
    panel.locator(SEND).click()


def answer(panel: Locator, index: int = -1) -> Locator:
    """An assistant message (the last by default)."""
    messages = panel.locator(ASSISTANT)
    return messages.last if index == -1 else messages.nth(index)


def wait_answer(panel: Locator, text: str, timeout: int = ANSWER_TIMEOUT_MS) -> Locator:
    """Wait until an assistant message holding ``text`` has finished streaming."""
    done = panel.locator(f'{ASSISTANT}[data-streaming="false"]', has_text=text)
    expect(done.first).to_be_visible(timeout=timeout)
    return done.first


def texts(panel: Locator, selector: str) -> list[str]:
    """The inner texts of every match, in order."""
    result: list[str] = panel.locator(selector).all_inner_texts()
    return result


def eval_in_page(lab: LabPage, script: str, arg: Any = None) -> Any:
    """``page.evaluate`` shorthand."""
    return lab.page.evaluate(script, arg)


# A second comm to the loom target, opened the way the sidebar opens its own.
ROUND_TRIPS = """async (app, count) => {
    const kernel = app.shell.currentWidget.sessionContext.session.kernel;
    const comm = kernel.createComm('loom');
    comm.commsOverSubshells = 'perCommTarget';
    await kernel.info;
    if (kernel.supportsSubshells) { await comm.subshellStarted; }
    let waiting = null;
    const wall = () => performance.timeOrigin + performance.now();
    comm.onMsg = (msg) => {
        if (msg.content.data.type === 'sessions' && waiting) {
            waiting({ arrived: wall(), stamped: Date.parse(msg.header.date) });
        }
    };
    const reply = () => new Promise((resolve) => { waiting = resolve; });
    let first = reply();
    comm.open({ type: 'hello', protocol: 1, notebook_path: '', since_seq: null,
                kernel_session: null, client: 'lab' });
    comm.send({ type: 'sessions' });
    await first;
    const times = [];
    for (let i = 0; i < count; i++) {
        const next = reply();
        const start = performance.now(), sent = wall();
        comm.send({ type: 'sessions' });
        const { arrived, stamped } = await next;
        const total = performance.now() - start;
        times.push({ total, there: stamped - sent, back: arrived - stamped });
    }
    comm.close();
    return times;
}"""
