"""How much the Jupyter front costs: %load_ext time, and one %cowork turn over a direct engine call.

Prints two tables of medians: ``%load_ext`` in plain IPython beside IPython's own start
(``python -m IPython --quick`` running nothing, wall clock of the process) with their ratio
(the goal, issue 31: a median of at most 100 ms), and the kernel's figures. Everything runs
against the project's fake Messages API on 127.0.0.1 (no network).

    python benchmarks/kernel_bench.py           # 11 IPython loads, 5 kernels, 15 turns each way
    python benchmarks/kernel_bench.py --quick   # two IPython loads, one kernel (CI)

Bytecode is cached as for an installed package (``PYTHONPYCACHEPREFIX`` in a
temp folder, filled by one warm-up run first). Measured inside the process that
loads the extension (``time.perf_counter`` around ``run_line_magic``, which returns once
the banner is printed), so kernel start-up and message round trips are not counted. Each
plain IPython load runs in a new folder (a new archive, as a notebook's first load), then
once more in the same folder (the archive exists: a restarted kernel). The turn comparison
runs in one kernel, alternating a ``%cowork`` turn (engine thread + main-thread pump +
rendering) and a direct ``session.send`` drained on the engine loop (no rendering).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from jupyter_client.manager import start_new_kernel

from loom_jupyter.testing import FakeAnthropic

LOAD_CODE = (
    "import time as _t\n_t0 = _t.perf_counter()\n"
    "get_ipython().run_line_magic('load_ext', 'loom_jupyter')\n"
    "print('LOADMS', (_t.perf_counter() - _t0) * 1000)\n"
)
TURN_CODE = """
import asyncio, contextlib, io, time
from loom_jupyter.jupyter.coworker.registry import current
_cw = current(get_ipython())

async def _direct(text):
    async for _ in _cw.session.send(text):
        pass

def _first():
    t = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        get_ipython().run_line_magic('cowork', 'warm up')
    return (time.perf_counter() - t) * 1000

def _bench(n):
    magic, direct = [], []
    for i in range(n):
        t = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            get_ipython().run_line_magic('cowork', f'magic turn {i}')
        magic.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        _cw.loop_thread.run(_direct(f'direct turn {i}'))
        direct.append((time.perf_counter() - t) * 1000)
    return magic, direct
"""


def _env(base_url: str, notebook: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "LOOM_", "JPY_"))}
    env.update(
        JPY_SESSION_NAME=str(notebook),
        ANTHROPIC_BASE_URL=base_url,
        ANTHROPIC_API_KEY="bench-key",
        LOOM_APPROVAL="auto",
        MPLBACKEND="Agg",
        # Like an installed package: bytecode cached (outside the source tree).
        PYTHONPYCACHEPREFIX=str(notebook.parent / "pycache"),
    )
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _kernel_output(kc: object, code: str) -> str:
    chunks: list[str] = []

    def hook(msg: dict[str, object]) -> None:
        content = msg["content"]
        if msg["msg_type"] == "stream":
            chunks.append(str(content["text"]))  # type: ignore[index]
        elif msg["msg_type"] == "error":
            raise RuntimeError("\n".join(content["traceback"]))  # type: ignore[index]

    kc.execute_interactive(code, output_hook=hook, timeout=120)  # type: ignore[attr-defined]
    return "".join(chunks)


def _load_ms(text: str) -> float:
    return float(next(line for line in text.splitlines() if line.startswith("LOADMS")).split()[1])


def kernel_loads(base_url: str, runs: int, folder: Path) -> list[float]:
    """``%load_ext`` inside fresh ipykernels."""
    times = []
    for i in range(runs):
        km, kc = start_new_kernel(kernel_name="python3", env=_env(base_url, folder / f"k{i}.ipynb"))
        try:
            times.append(_load_ms(_kernel_output(kc, LOAD_CODE)))
        finally:
            kc.stop_channels()
            km.shutdown_kernel(now=True)
    return times


WARM_CODE = LOAD_CODE + "import anthropic, ipykernel.kernelapp, ipywidgets\n"


def _ipython(base_url: str, work: Path, code: str) -> tuple[str, float]:
    """Run ``code`` in a new plain (terminal) IPython process in ``work``: its output and the
    process's wall-clock milliseconds."""
    env = _env(base_url, work.with_suffix(".ipynb"))
    env.pop("JPY_SESSION_NAME")
    work.mkdir(exist_ok=True)
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "IPython", "--quick", "--no-banner", "-c", code],
        env=env,
        cwd=work,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return out.stdout, (time.perf_counter() - start) * 1000


def ipython_loads(
    base_url: str, runs: int, folder: Path, tag: str = "ip", code: str = LOAD_CODE
) -> list[float]:
    """``%load_ext`` in fresh plain (terminal) IPython processes, each in a new folder."""
    return [_load_ms(_ipython(base_url, folder / f"{tag}{i}", code)[0]) for i in range(runs)]


def plain_ipython(base_url: str, runs: int, folder: Path) -> dict[str, list[float]]:
    """IPython's own start (a process that runs nothing), ``%load_ext`` in a new folder and
    ``%load_ext`` again there (the archive exists), interleaved so load changes hit all three."""
    times: dict[str, list[float]] = {"bare": [], "first": [], "again": []}
    for i in range(runs):
        times["bare"].append(_ipython(base_url, folder / f"bare{i}", "pass")[1])
        work = folder / f"plain{i}"
        times["first"].append(_load_ms(_ipython(base_url, work, LOAD_CODE)[0]))
        times["again"].append(_load_ms(_ipython(base_url, work, LOAD_CODE)[0]))
    return times


def turns(
    base_url: str, runs: int, folder: Path
) -> tuple[float, list[float], list[float], list[float]]:
    """A first turn (imports the SDK), then alternating ``%cowork`` and direct turns."""
    km, kc = start_new_kernel(kernel_name="python3", env=_env(base_url, folder / "turns.ipynb"))
    try:
        load = _load_ms(_kernel_output(kc, LOAD_CODE))
        _kernel_output(kc, TURN_CODE)
        first = _kernel_output(kc, "print('RESULT', [_first()])")
        text = _kernel_output(kc, f"print('RESULT', _bench({runs}))")
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    warm = eval(first.split("RESULT", 1)[1].strip())  # our own repr of a float list
    magic, direct = eval(text.split("RESULT", 1)[1].strip())
    return load, warm, magic, direct


def _row(name: str, values: list[float]) -> str:
    med = statistics.median(values)
    low, high = min(values), max(values)
    return f"| {name:<46} | {med:>9.1f} | {low:>8.1f} | {high:>8.1f} | {len(values):>3} |"


def _plain_table(times: dict[str, list[float]]) -> None:
    bare = statistics.median(times["bare"])
    print(f"| {'plain IPython (ms)':<46} |    median |      min |      max |   n | × start |")
    print(f"|{'-' * 48}|-----------|----------|----------|-----|---------|")
    rows = (
        ("IPython's own start (--quick, runs nothing)", "bare"),
        ("%load_ext loom_jupyter, new archive", "first"),
        ("%load_ext loom_jupyter, archive exists", "again"),
    )
    for name, key in rows:
        ratio = statistics.median(times[key]) / bare
        print(f"{_row(name, times[key])} {ratio:>7.2f} |")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few runs, for CI")
    args = parser.parse_args()
    loads, plain_runs, turn_runs = (1, 2, 3) if args.quick else (5, 11, 15)
    with FakeAnthropic() as fake, tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        ipython_loads(fake.base_url, 1, folder, tag="warm", code=WARM_CODE)  # fills the cache
        plain = plain_ipython(fake.base_url, plain_runs, folder)
        kernel = kernel_loads(fake.base_url, loads - 1, folder)
        load, first, magic, direct = turns(fake.base_url, turn_runs, folder)
        kernel.append(load)
    overhead = [m - d for m, d in zip(magic, direct, strict=True)]
    _plain_table(plain)
    print(f"| {'measure (ms)':<46} |    median |      min |      max |   n |")
    print(f"|{'-' * 48}|-----------|----------|----------|-----|")
    print(_row("%load_ext loom_jupyter, fresh ipykernel", kernel))
    print(_row("first %cowork turn (imports the anthropic SDK)", first))
    print(_row("one %cowork turn (fake API, echo)", magic))
    print(_row("one direct session.send turn (same kernel)", direct))
    print(_row("%cowork overhead over the direct call", overhead))
    one, five, _ = os.getloadavg()
    print(f"(machine load average {one:.1f} / {five:.1f} on {os.cpu_count()} CPUs)")


if __name__ == "__main__":
    main()
