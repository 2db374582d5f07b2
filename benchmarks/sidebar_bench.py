"""How fast the sidebar shows what the kernel sends, measured in a real JupyterLab + chromium.

    python benchmarks/sidebar_bench.py           # a 20,000-token answer, 30 round trips each way
    python benchmarks/sidebar_bench.py --quick   # a 500-token answer, 3 round trips (CI)

Everything runs against the fake Messages API on 127.0.0.1 (no network), with the
installed labextension (``pip install -e .`` or ``jupyter labextension develop``).

- **delta-to-paint**: for every streamed text delta, the kernel's send time (the comm
  message's header ``date``) to the first frame after which the sidebar shows its last
  word (a ``requestAnimationFrame`` followed by a ``MessageChannel`` task, i.e. after the
  paint). Also from the browser receiving it. Goal: median <= 50 ms.
- **longest task**: the longest main-thread task (PerformanceObserver ``longtask``) while
  the answer streams. Goal: none over 50 ms.
- **comm round trip**: a ``sessions`` request on the ``loom`` comm (over the kernel
  subshell, as the sidebar sends it) to its reply, idle and while a cell runs.
- **answer while a cell runs**: the fake Messages API receiving the request to the answer
  painted in the sidebar, while the notebook's cell is still running. Goal: <= 1 s.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "browser"))

from lab_harness import LabPage, standalone_lab, write_notebook
from playwright.sync_api import expect
from sidebar_page import (
    ROUND_TRIPS,
    env_cell,
    send,
    sidebar,
    wait_answer,
    wait_kernel_idle,
    wait_state,
)

from loom_jupyter.testing import FakeAnthropic

if TYPE_CHECKING:
    from playwright.sync_api import Locator

STREAM_END = "STREAM-END"
CELL_ANSWER = "CELL-TIME-ANSWER"
RELEASE_CELL = (
    "import os, time\n"
    "for _ in range(3000):\n"
    "    if os.path.exists('release.flag'):\n"
    "        break\n"
    "    time.sleep(0.1)"
)
# Installed in the page before the stream: the kernel's text deltas (sent/received times
# and their last numbered word), the last word painted after each frame, long tasks.
PAGE_PROBE = """(app) => {
    const kernel = app.shell.currentWidget.sessionContext.session.kernel;
    const B = window.__bench = { deltas: [], paints: [], longtasks: [], last: -1,
                                 marker: null, markerAt: null, stop: false };
    const now = () => performance.timeOrigin + performance.now();
    kernel.iopubMessage.connect((_, msg) => {
        const data = msg.header.msg_type === 'comm_msg' ? msg.content.data : null;
        if (!data || data.type !== 'text') { return; }
        const words = [...data.delta.matchAll(/w(\\d+)/g)].map((m) => Number(m[1]));
        if (words.length > 0) {
            const word = Math.max(...words);
            B.deltas.push({ sent: Date.parse(msg.header.date), recv: now(), word });
        }
    });
    new PerformanceObserver((list) => {
        for (const entry of list.getEntries()) { B.longtasks.push(entry.duration); }
    }).observe({ type: 'longtask' });
    const lastWord = () => {
        const all = document.querySelectorAll('[data-loom="message"][data-role="assistant"]');
        const message = all[all.length - 1];
        const tail = message?.querySelector('.loom-Markdown-tail');
        let text = tail?.textContent ?? '';
        if (!/w\\d+/.test(text.slice(-200))) {
            text = tail?.previousElementSibling?.textContent ?? '';
        }
        const found = [...text.slice(-200).matchAll(/w(\\d+)/g)];
        return [found.length ? Number(found[found.length - 1][1]) : -1, message?.textContent ?? ''];
    };
    const channel = new MessageChannel();
    channel.port1.onmessage = () => {
        const [word, text] = lastWord();
        if (word > B.last) { B.paints.push({ t: now(), word }); B.last = word; }
        if (B.marker !== null && B.markerAt === null && text.includes(B.marker)) {
            B.markerAt = now();
        }
    };
    const frame = () => {
        channel.port2.postMessage(0);
        if (!B.stop) { requestAnimationFrame(frame); }
    };
    requestAnimationFrame(frame);
}"""


@dataclass(frozen=True)
class Sizes:
    tokens: int
    round_trips: int


def answer_text(tokens: int) -> str:
    """Markdown with numbered words (about 4 characters a token, as the fake counts)."""
    words: list[str] = []
    n = 0
    while sum(len(w) + 1 for w in words) < tokens * 4:
        sentence = [f"w{n + i}" if i % 2 == 0 else "data" for i in range(12)]
        n += 12
        words.append(" ".join(sentence) + ".")
        if len(words) % 6 == 0:
            words.append(f"\n\n- list item w{n}\n- another w{n + 1}\n\n")
            n += 2
        if len(words) % 25 == 0:
            words.append(f"\n\n```python\nvalue = 'w{n}'\n```\n\n")
            n += 1
    return " ".join(words) + f"\n\n{STREAM_END}"


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def delta_to_paint(bench: dict[str, Any]) -> tuple[list[float], list[float]]:
    """Per delta: kernel send -> painted, and browser receive -> painted (ms)."""
    paints = bench["paints"]
    sent, received = [], []
    index = 0
    for delta in sorted(bench["deltas"], key=lambda d: d["word"]):
        while index < len(paints) and paints[index]["word"] < delta["word"]:
            index += 1
        if index == len(paints):
            break
        sent.append(paints[index]["t"] - delta["sent"])
        received.append(paints[index]["t"] - delta["recv"])
    return sent, received


def run_cell(lab: LabPage, index: int) -> Locator:
    lab.app_eval(
        """(app, index) => {
            app.shell.currentWidget.content.activeCellIndex = index;
            void app.commands.execute('notebook:run-cell');
        }""",
        index,
    )
    return lab.page.locator(".jp-Notebook .jp-Cell").nth(index).locator(".jp-InputPrompt")


class ReplyClock:
    """The fake's responder: answers the cell-time question and notes when it was asked."""

    def __init__(self) -> None:
        self.asked_at: float | None = None
        self._lock = threading.Lock()

    def __call__(self, body: Any) -> Any:
        with self._lock:
            self.asked_at = time.time() * 1000
        return f"{CELL_ANSWER}: the sidebar answers while your cell runs."


def measure(
    lab: LabPage, folder: Path, fake: FakeAnthropic, clock: ReplyClock, sizes: Sizes
) -> dict[str, Any]:
    path = write_notebook(folder, "bench.ipynb", [env_cell(fake.base_url), RELEASE_CELL])
    lab.open(path.relative_to(lab.server.root_dir).as_posix())
    wait_kernel_idle(lab)
    panel = sidebar(lab)
    wait_state(panel, "idle")
    expect(run_cell(lab, 0)).to_have_text("[1]:", timeout=120_000)
    lab.app_eval(PAGE_PROBE)

    send(panel, "Stream a long answer")
    wait_answer(panel, STREAM_END, timeout=600_000)
    stream = lab.page.evaluate("JSON.parse(JSON.stringify(window.__bench))")

    idle = lab.app_eval(ROUND_TRIPS, sizes.round_trips)
    prompt = run_cell(lab, 1)
    expect(prompt).to_have_text("[*]:")
    busy = lab.app_eval(ROUND_TRIPS, sizes.round_trips)

    lab.page.evaluate(f"window.__bench.marker = {CELL_ANSWER!r}")
    send(panel, "Answer while my cell runs")
    lab.page.wait_for_function("() => window.__bench.markerAt !== null", timeout=120_000)
    still_running = prompt.inner_text() == "[*]:"
    painted_at = lab.page.evaluate("window.__bench.markerAt")
    (folder / "release.flag").write_text("done")
    expect(prompt).to_have_text("[2]:", timeout=120_000)
    lab.page.evaluate("window.__bench.stop = true")
    return {
        "stream": stream,
        "idle": idle,
        "busy": busy,
        "cell": painted_at - (clock.asked_at or 0),
        "running": still_running,
    }


def row(name: str, values: list[float], goal: str) -> str:
    if not values:
        return f"| {name} | - | - | - | {goal} |"
    med, p95, worst = statistics.median(values), percentile(values, 0.95), max(values)
    return f"| {name} | {med:.1f} | {p95:.1f} | {worst:.1f} | {goal} |"


def report(result: dict[str, Any], sizes: Sizes) -> None:
    stream = result["stream"]
    sent, received = delta_to_paint(stream)
    longtasks = stream["longtasks"]
    print(
        f"\nSidebar benchmark: a {sizes.tokens:,}-token answer "
        f"({len(stream['deltas']):,} text deltas), {sizes.round_trips} comm round trips each way\n"
    )
    print("| measure (ms) | median | p95 | max | goal |")
    print("|---|---|---|---|---|")
    print(row("delta-to-paint (kernel send -> painted)", sent, "median <= 25"))
    print(row("delta-to-paint (browser receive -> painted)", received, ""))
    print(
        f"| longest main-thread task while streaming | {max(longtasks, default=0):.0f} | "
        f"{len(longtasks)} long tasks | {sum(1 for t in longtasks if t > 50)} over 50 ms "
        "| none over 50 |"
    )
    for label, trips in (("idle kernel", result["idle"]), ("while a cell runs", result["busy"])):
        print(row(f"comm round trip, {label}", [t["total"] for t in trips], "median <= 15"))
        print(row("- page send -> kernel answers", [t["there"] for t in trips], ""))
        print(row("- kernel answer -> page receives", [t["back"] for t in trips], ""))
    cell = result["cell"]
    state = "cell still running" if result["running"] else "CELL HAD ENDED"
    print(
        f"| answer while a cell runs: fake reply -> painted | {cell:.0f} | | | <= 1000 ({state}) |"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a 500-token answer, 3 round trips")
    args = parser.parse_args(argv)
    sizes = Sizes(500, 3) if args.quick else Sizes(20_000, 30)
    clock = ReplyClock()
    script = [{"content": [{"type": "text", "text": answer_text(sizes.tokens)}], "delay": 0.002}]
    with FakeAnthropic(script=script, responder=clock) as fake, standalone_lab() as lab:
        result = measure(lab, lab.server.root_dir, fake, clock, sizes)
    report(result, sizes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
