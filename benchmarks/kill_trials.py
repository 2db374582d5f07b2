"""Kill -9 trials: a real kernel killed at random moments of ``%cowork`` turns.

Each trial kills the kernel that runs a turn — while an answer streams, while a
tool runs, or at a random moment between writes — then starts a new kernel on
the same notebook and checks what a person would: no acknowledged prompt lost,
the archive intact, the same session resumed at once (default settings), the
streamed text kept, and a valid first request after the crash. The kernel that
resumed becomes the next trial's victim, so N trials start N + 1 kernels.

    python benchmarks/kill_trials.py              # 100 trials, prints the table
    python benchmarks/kill_trials.py --quick      # 10 trials
    python benchmarks/kill_trials.py --json docs/kill_trials.json

``tests/kernel/test_kill_trials.py`` runs 10 trials and asserts every row;
the "kept within 1.5 s" column is a timing figure and lives only here.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import random
import signal
import sqlite3
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from jupyter_client.manager import KernelManager, start_new_kernel

from loom_jupyter.archive.session_live import last_active_at, turn_count
from loom_jupyter.jupyter.cell.render import ANSWER_MIME
from loom_jupyter.testing import FakeAnthropic

Moment = Literal["stream", "tool", "between"]
MOMENTS: tuple[Moment, ...] = ("stream", "tool", "between")
TIMEOUT = 90.0
STREAM_WORDS = 600
STREAM_TEXT = " ".join(f"word{i}" for i in range(STREAM_WORDS))
KEEP_WINDOW = 1.5  # seconds: "about a second" of streamed text may be missing after a kill


@dataclass(frozen=True)
class Trial:
    """What one kill left behind."""

    number: int
    moment: Moment
    prompts_acked: int
    prompts_lost: int
    integrity: str
    same_session: bool
    shown_chars: int  # streamed text the person saw before the kill
    kept_chars: int  # of it, kept in the archive
    kept_is_prefix: bool
    kept_within_window: bool  # kept >= what was shown KEEP_WINDOW s before the kill
    first_request_valid: bool
    state_says_kernel_died: bool  # the first request's session state names the crash
    banner: str


def responder(body: dict[str, Any]) -> dict[str, Any] | None:
    """Scripts the fake by the person's last words (so leftovers never derail a later turn)."""
    last = (body.get("messages") or [{}])[-1]
    content = last.get("content") or []
    if any(block.get("type") == "tool_result" for block in content):
        return {"content": [{"type": "text", "text": "The tool finished."}]}
    said = next((b.get("text", "") for b in reversed(content) if b.get("type") == "text"), "")
    if "KILL-STREAM" in said:
        return {"content": [{"type": "text", "text": STREAM_TEXT}], "delay": 0.02}
    if "KILL-TOOL" in said:
        call = {"code": "import time\ntime.sleep(120)"}
        use = {"type": "tool_use", "id": f"toolu_{time.time_ns()}", "name": "run_python"}
        return {"content": [{"type": "text", "text": "Running it."}, {**use, "input": call}]}
    return {"content": [{"type": "text", "text": "Noted."}]}


class Kernel:
    """A kernel on the trial notebook, with the iopub output of the cell it runs."""

    def __init__(self, env: dict[str, str], cwd: Path) -> None:
        self.km: KernelManager
        self.km, self.kc = start_new_kernel(kernel_name="python3", env=env, cwd=str(cwd))

    @property
    def pid(self) -> int:
        return int(self.km.provisioner.process.pid)  # type: ignore[union-attr]

    def run(self, code: str) -> str:
        """Run a cell to the end; returns its text output."""
        msg_id = self.kc.execute(code)
        texts, deadline = [], time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            msg = self._next(msg_id)
            if msg is None:
                continue
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                return "\n".join(texts)
            texts.append(_text_of(msg))
        raise TimeoutError(code)

    def start(self, code: str) -> str:
        """Send a cell without waiting; returns its message id."""
        return str(self.kc.execute(code))

    def watch(self, msg_id: str, until: float) -> list[tuple[float, str]]:
        """(time, markdown shown) of the cell until ``until`` (monotonic)."""
        shown: list[tuple[float, str]] = []
        while time.monotonic() < until:
            msg = self._next(msg_id)
            if msg is not None and (markdown := _answer_of(msg)) is not None:
                shown.append((time.monotonic(), markdown))
        return shown

    def wait_for(self, msg_id: str, needle: str) -> list[tuple[float, str]]:
        """Collect the cell's markdown until some output contains ``needle``."""
        shown: list[tuple[float, str]] = []
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            msg = self._next(msg_id)
            if msg is None:
                continue
            text = _text_of(msg)
            if (markdown := _answer_of(msg)) is not None:
                shown.append((time.monotonic(), markdown))
            if needle in text:
                return shown
        raise TimeoutError(needle)

    def kill(self) -> None:
        os.kill(self.pid, signal.SIGKILL)
        self.km.provisioner.process.wait()  # type: ignore[union-attr]
        self.kc.stop_channels()
        self.km.cleanup_resources()

    def shutdown(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)

    def _next(self, msg_id: str) -> dict[str, Any] | None:
        try:
            msg = self.kc.get_iopub_msg(timeout=0.05)
        except queue.Empty:
            return None
        return msg if msg["parent_header"].get("msg_id") == msg_id else None


class Trials:
    """A notebook, a fake Messages API and the chain of kernels killed on it."""

    def __init__(self, folder: Path, fake: FakeAnthropic, seed: int) -> None:
        self.notebook = folder / "trial notebook.ipynb"
        self.archive = folder / ".loom" / f"{self.notebook.name}.sqlite"
        self.fake = fake
        self.rng = random.Random(seed)
        self.prompts: list[str] = []  # prompts whose turn had shown output (acknowledged)
        self.kernel, _ = self._start()

    def run(self, count: int) -> list[Trial]:
        try:
            self.kernel.run("%cowork KILL-WARMUP first words")
            self.prompts.append("KILL-WARMUP first words")
            return [self.trial(n, MOMENTS[n % len(MOMENTS)]) for n in range(count)]
        finally:
            self.kernel.shutdown()

    def trial(self, number: int, moment: Moment) -> Trial:
        session = self._session_id()
        turns_before = self._last_turn(session)
        prompt = f"KILL-{moment.upper()} trial {number}"
        msg_id = self.kernel.start(f"%cowork {prompt}")
        shown = self._reach(moment, msg_id)
        killed_at = time.monotonic()
        self.kernel.kill()
        if shown:
            self.prompts.append(prompt)
        integrity = self._integrity()
        self.kernel, banner = self._start()
        same = self._session_id() == session and "resumed" in banner
        kept = self._partial_text(session, after=turns_before)
        before = self.fake.message_requests
        self.kernel.run(f"%cowork KILL-CHECK after trial {number}")
        self.prompts.append(f"KILL-CHECK after trial {number}")
        first = self.fake.message_requests[len(before) :]
        return Trial(
            number=number,
            moment=moment,
            prompts_acked=len(self.prompts),
            prompts_lost=len(set(self.prompts) - set(self._user_turns())),
            integrity=integrity,
            same_session=same,
            shown_chars=len(_streamed(shown)),
            kept_chars=len(kept),
            kept_is_prefix=STREAM_TEXT.startswith(kept),
            kept_within_window=len(kept) >= len(_shown_by(shown, killed_at - KEEP_WINDOW)),
            first_request_valid=bool(first) and valid_request(first[0].body),
            state_says_kernel_died=bool(first) and "the kernel died" in json.dumps(first[0].body),
            banner=" ".join(banner.split()),  # the whole banner, unwrapped
        )

    def _reach(self, moment: Moment, msg_id: str) -> list[tuple[float, str]]:
        """Let the turn run to a random point of ``moment``; returns the markdown shown."""
        if moment == "stream":
            shown = self.kernel.wait_for(msg_id, "word0")
            return shown + self.kernel.watch(msg_id, time.monotonic() + self.rng.uniform(0.2, 3.0))
        if moment == "tool":
            shown = self.kernel.wait_for(msg_id, "run_python")
            return shown + self.kernel.watch(msg_id, time.monotonic() + self.rng.uniform(0, 0.5))
        return self.kernel.watch(msg_id, time.monotonic() + self.rng.uniform(0.0, 1.5))

    def _start(self) -> tuple[Kernel, str]:
        """A new kernel on the notebook with the extension loaded, and its banner."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "LOOM_"))}
        env.update(
            JPY_SESSION_NAME=str(self.notebook),
            ANTHROPIC_BASE_URL=self.fake.base_url,
            ANTHROPIC_API_KEY="test-key",
            LOOM_APPROVAL="auto",
        )
        kernel = Kernel(env, self.notebook.parent)
        return kernel, kernel.run("%load_ext loom_jupyter")

    def _rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with sqlite3.connect(f"file:{self.archive}?mode=ro", uri=True) as db:
            return db.execute(sql, params).fetchall()

    def _session_id(self) -> str:
        rows = self._rows(
            f"SELECT s.id FROM cowork_sessions AS s WHERE s.status = 'active'"
            f" ORDER BY {last_active_at('s')} DESC LIMIT 1"
        )
        return str(rows[0][0]) if rows else ""

    def _user_turns(self) -> list[str]:
        rows = self._rows("SELECT content FROM conversation_turns WHERE role = 'user'")
        return [str(r[0]) for r in rows]

    def _last_turn(self, session: str) -> int:
        rows = self._rows(
            f"SELECT {turn_count('s')} FROM cowork_sessions AS s WHERE s.id = ?", (session,)
        )
        return int(rows[0][0]) if rows else 0

    def _partial_text(self, session: str, *, after: int) -> str:
        """The streamed answer the dead kernel left in the archive (a ``partial`` row)."""
        rows = self._rows(
            "SELECT content FROM conversation_turns WHERE session_id = ? AND role = 'assistant'"
            " AND status = 'partial' AND turn_number > ? ORDER BY turn_number DESC LIMIT 1",
            (session, after),
        )
        return str(rows[0][0]) if rows else ""

    def _integrity(self) -> str:
        return str(self._rows("PRAGMA integrity_check")[0][0])


def valid_request(body: dict[str, Any]) -> bool:
    """What the Messages API accepts: starts and ends on the user, every tool_use answered
    (results first) in the next message, and no result without its call."""
    messages = body.get("messages") or []
    if not messages or messages[0]["role"] != "user" or messages[-1]["role"] != "user":
        return False
    for index, message in enumerate(messages):
        calls = [b["id"] for b in _blocks(message) if b.get("type") == "tool_use"]
        results = [b["tool_use_id"] for b in _blocks(message) if b.get("type") == "tool_result"]
        previous = messages[index - 1] if index else {"role": "none", "content": []}
        called = [b["id"] for b in _blocks(previous) if b.get("type") == "tool_use"]
        if results and (previous["role"] != "assistant" or results != called):
            return False
        if calls:
            following = _blocks(messages[index + 1])
            answered = [b.get("tool_use_id") for b in following[: len(calls)]]
            if messages[index + 1]["role"] != "user" or answered != calls:
                return False
    return True


def run_trials(count: int, seed: int = 7) -> list[Trial]:
    """Run ``count`` kill trials in a temporary folder."""
    with tempfile.TemporaryDirectory() as folder, FakeAnthropic(responder=responder) as fake:
        return Trials(Path(folder), fake, seed).run(count)


def summary_rows(trials: list[Trial]) -> list[tuple[str, str]]:
    """The table of docs/reliability.md: (measure, result)."""
    n = len(trials)
    streams = [t for t in trials if t.moment == "stream" and t.shown_chars]
    return [
        ("kill -9 trials", str(n)),
        ("acknowledged prompts lost", str(sum(t.prompts_lost for t in trials))),
        ("archive integrity ok", f"{sum(t.integrity == 'ok' for t in trials)}/{n}"),
        ("same session resumed at once", f"{sum(t.same_session for t in trials)}/{n}"),
        (
            "first request after the crash valid",
            f"{sum(t.first_request_valid for t in trials)}/{n}",
        ),
        (
            "streamed text kept is what was shown",
            f"{sum(t.kept_is_prefix for t in streams)}/{len(streams)}",
        ),
        (
            f"streamed text kept up to {KEEP_WINDOW:g} s before the kill",
            _share(streams, "kept_within_window"),
        ),
    ]


def _share(trials: list[Trial], field: str) -> str:
    return f"{sum(bool(getattr(t, field)) for t in trials)}/{len(trials)}"


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    return content if isinstance(content, list) else []


def _text_of(msg: dict[str, Any]) -> str:
    content = msg["content"]
    if msg["msg_type"] == "stream":
        return str(content.get("text", ""))
    data = content.get("data", {})
    return _answer_of(msg) or str(data.get("text/plain") or "")


def _answer_of(msg: dict[str, Any]) -> str | None:
    """The answer's markdown in a display (Loom's own MIME type), else None."""
    answer = msg["content"].get("data", {}).get(ANSWER_MIME)
    return str(answer["markdown"]) if isinstance(answer, dict) else None


def _streamed(shown: list[tuple[float, str]]) -> str:
    """The answer text the cell showed last (markdown of the streaming answer)."""
    return shown[-1][1].strip() if shown else ""


def _shown_by(shown: list[tuple[float, str]], moment: float) -> str:
    earlier = [text for at, text in shown if at <= moment]
    return earlier[-1].strip() if earlier else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--quick", action="store_true", help="10 trials")
    parser.add_argument("--json", type=Path, help="also write the summary rows here")
    args = parser.parse_args()
    trials = run_trials(10 if args.quick else args.trials)
    header = ("#", "moment", "lost", "integrity", "same", "shown", "kept", "valid")
    print("{:>3} {:8} {:>4} {:9} {:>5} {:>6} {:>6} {:>5}".format(*header))
    for t in trials:
        print(
            f"{t.number:>3} {t.moment:8} {t.prompts_lost:>4} {t.integrity:9} {t.same_session!s:>5}"
            f" {t.shown_chars:>6} {t.kept_chars:>6} {t.first_request_valid!s:>5}"
        )
    rows = summary_rows(trials)
    width = max(len(name) for name, _ in rows)
    print()
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    if args.json:
        args.json.write_text(
            json.dumps({"rows": rows, "trials": [asdict(t) for t in trials]}, indent=1)
        )


if __name__ == "__main__":
    sys.exit(main())
