"""Repro for the one thing the first-hour walk found still wrong in JupyterLab (README.md):
after ``%unload_ext loom_jupyter`` + ``%load_ext loom_jupyter`` in one cell, the sidebar
now and then stays on "Loom is not loaded in this kernel" although Loom is loaded, and the
next turns do not show in it.

    python docs/first-hour/repro_d4_reload.py [RUNS]     # default 15; stops at the first
    python docs/first-hour/repro_d4_reload.py --gap 1    # every time: 1 s between the two

The window is between the unload (which closes the page's comm: the page reopens at once)
and the load (which registers the comm target again): a reopen that lands in it is refused
and the page gives up. ``--gap S`` widens it with ``time.sleep(S)`` between the two magics
in the same cell, which makes the failure certain.

Same setup as walk.py (the committed code, its labextension built, the fake model, a fresh
config). A notebook with a prompt, the reload cell and a prompt is run with Run All again
and again; 3 s after each run the sidebar's state line is read. The first stuck run is
screenshotted to d4-reload-ext-not-loaded-lab.png.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parent))

import walk as W

CLEAR_OUTPUTS = "async (app) => { await app.commands.execute('notebook:clear-all-cell-outputs'); }"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", type=int, nargs="?", default=15)
    parser.add_argument("--commit", default="HEAD")
    parser.add_argument("--worktree", action="store_true")
    parser.add_argument("--gap", type=float, default=0.0, help="seconds between the magics")
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="first-hour-d4-"))
    source, page, what = W.use_source(args, base)
    w = W.Walk(base, W.HERE, source)
    w.jupyter_path, w.walked = page, what
    key = base / "xdg-config" / "loom" / "anthropic-api-key"
    key.parent.mkdir(parents=True)
    key.write_text(W.FAKE_KEY)
    key.chmod(0o600)
    stuck_at = None
    try:
        w.start_server()
        if args.gap:
            cells = list(W.RELOAD_CELLS)
            cells[2] = (
                f"%unload_ext loom_jupyter\nimport time\ntime.sleep({args.gap})\n"
                "%load_ext loom_jupyter"
            )
            W.write_notebook(w.root / "reload.ipynb", cells)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=W.CHROMIUM, headless=True, args=W.CHROMIUM_ARGS
            )
            context = browser.new_context(viewport={"width": W.WIDTH, "height": W.HEIGHT})
            context.set_default_timeout(30_000)
            w.page = context.new_page()
            w.goto("lab/workspaces/d4/tree/reload.ipynb")
            w.current("reload.ipynb")
            w.kernel_idle()
            w.show_panel()
            w.wait_state("idle")
            status = w.page.locator(f"{W.SIDEBAR} {W.STATUS}")
            for run in range(1, args.runs + 1):
                w.app(CLEAR_OUTPUTS)
                w.run_all()
                w.page.wait_for_timeout(3000)
                state = status.get_attribute("data-state")
                print(f"run {run}: {state}: {status.inner_text().splitlines()[0]}", flush=True)
                if state != "idle":
                    w.page.wait_for_timeout(10_000)
                    print(f"  10 s later: {status.inner_text().splitlines()[0]}", flush=True)
                    w.shot("d4-reload-ext-not-loaded-lab.png")
                    stuck_at = run
                    break
            browser.close()
    finally:
        w.stop_server()
        w.fake.stop()
        shutil.rmtree(base, ignore_errors=True)
    print(
        f"{what}: " + (f"stuck at run {stuck_at}" if stuck_at else f"{args.runs} runs, none stuck")
    )
    return 1 if stuck_at else 0


if __name__ == "__main__":
    raise SystemExit(main())
