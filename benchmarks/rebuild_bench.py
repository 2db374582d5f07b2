"""State you can rebuild (issue 21): ``%cowork rebuild`` of 3 late variables vs Run All.

    python benchmarks/rebuild_bench.py           # 3 restarts each way, sleeps of 0.05-0.2 s
    python benchmarks/rebuild_bench.py --quick   # 1 restart each way, sleeps a quarter as long

A real ipykernel (jupyter_client, one ``execute_request`` per cell, like a person) with
``%load_ext loom_jupyter`` against the fake Messages API on 127.0.0.1 (no network). The
notebook is generated from a seed: an analysis of 80 cells — imports, orders, customers
and sensor data made in code with NumPy and pandas (each table from its own seeded
generator), several independent branches (regional pivots, customer spend, anomaly
detection, a pure-Python inventory), in-place changes (``df.drop(..., inplace=True)``,
``df[col] = ...``, ``lst.append``, ``d[k] = v``, ``arr[::k] += x``), cells that only print
or display, two names defined twice (a function and a threshold) and cells that sleep
(0.05-0.2 s) to stand for slow work. Each cell is labelled by hand with whether the 3
late targets (``quarterly_table``, ``top_customers``, ``anomaly_rate``) depend on it.

1. **First pass**: run the 80 cells once; each is archived as an execution record.
   The archive (SQLite beside the notebook) must hold 80 cell records. A value digest of
   the targets is taken in the kernel, independent of loom's fingerprints: SHA-256 of
   ``to_csv()`` and dtypes for pandas objects, of ``tolist()`` for arrays, else ``repr``
   (run with ``silent=True``, so it is not recorded).
2. **Rebuild** (repeated): restart the kernel through its ``KernelManager``,
   ``%load_ext loom_jupyter``, then time ``%cowork rebuild quarterly_table top_customers
   anomaly_rate --yes`` (the client's wall time of that one request: planning, the steps,
   the checks). Its plan table names the steps; its check table must say "present, same
   fingerprint as recorded" for all 3 names, the digest must equal the first pass's, and
   values made only by cells outside the slice must be absent.
3. **Run All** (repeated): restart, ``%load_ext loom_jupyter``, run the 80 cells again,
   one request each; its time is the sum of the 80 requests' wall times (measured after a
   restart, in a fresh kernel with the extension loaded, as a person who restarts and
   runs all would). The digest must match too (the notebook is deterministic).

Goals: the slice is a proper subset of the 80 executions and equals the hand-labelled
dependency set (a difference is printed, not failed: a larger slice is still correct);
3/3 names come back with the recorded fingerprint and an equal digest; the rebuild takes a
fraction of Run All (the speed-up is printed, never asserted: the machine may be loaded).
The exit code is non-zero only on wrong behaviour: a cell or step that raises, a name
missing or with another fingerprint or digest, a slice of 0 or >= 80 steps, a branch
outside the slice that ran anyway.

Anchors: ipyflow / nbsafety compute dynamic dataflow slices inside the kernel (they
trace execution; loom reads the archived code with ``ast`` plus the namespace diff);
JupyterLab's "Run All Above" / "Restart Kernel and Run All" re-run every cell.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import sqlite3
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jupyter_client.manager import KernelManager, start_new_kernel

from loom_jupyter.testing import FakeAnthropic

SEED = 20261124
CELLS = 80
TARGETS = ("quarterly_table", "top_customers", "anomaly_rate")
OUTSIDE = ("inventory", "restock", "by_region", "boot_means")  # made only outside the slice
TIMEOUT = 120.0
SAME = "present, same fingerprint as recorded"

DIGEST = """
def _bench_digest(names):
    import hashlib
    found = {}
    for name in names:
        if name not in globals():
            found[name] = "missing"
            continue
        value = globals()[name]
        if hasattr(value, "to_csv"):
            text = repr(getattr(value, "dtypes", getattr(value, "dtype", None))) + value.to_csv()
        elif hasattr(value, "tolist"):
            text = repr((value.dtype.str, value.shape, value.tolist()))
        else:
            text = repr(value)
        found[name] = hashlib.sha256(text.encode()).hexdigest()[:16]
    return found
"""


# -- the generated notebook --------------------------------------------------------------------


@dataclass(frozen=True)
class Cell:
    """One cell of the analysis; ``needed``: the targets depend on it (labelled by hand)."""

    code: str
    needed: bool = False


def _c(code: str) -> Cell:
    return Cell(code.strip("\n"), needed=True)


def _n(code: str) -> Cell:
    return Cell(code.strip("\n"))


def _sections(rng: random.Random, scale: float) -> list[list[Cell]]:
    """The analysis' own cells, section by section (fillers go after each section)."""

    def slow() -> str:
        return f"{rng.uniform(0.05, 0.2) * scale:.3f}"

    setup = [
        _c("import math\nimport time\n\nimport numpy as np\nimport pandas as pd"),
        _c(
            f"SEED = {rng.randrange(1000, 9999)}\nN_ORDERS = {rng.randrange(4000, 6000)}\n"
            f"N_CUSTOMERS = {rng.randrange(300, 500)}\nSENSOR_POINTS = {rng.randrange(4000, 8000)}"
        ),
        _c(
            'REGIONS = ["north", "south", "east", "west"]\n'
            'PRODUCTS = {"basic": 9.5, "plus": 19.0, "pro": 49.0}'
        ),
        _n('pd.set_option("display.width", 120)\nprint(np.__version__, pd.__version__)'),
    ]
    orders = [
        _c(
            """
def make_orders(n, seed):
    rng = np.random.default_rng(seed)
    product = rng.choice(list(PRODUCTS), size=n, p=[0.6, 0.3, 0.1])
    return pd.DataFrame({
        "order_id": np.arange(n) % (n - 40),  # the export repeats its last 40 orders
        "day": rng.integers(0, 365, size=n),
        "region": rng.choice(REGIONS, size=n),
        "customer": rng.integers(0, N_CUSTOMERS, size=n),
        "product": product,
        "price": (pd.Series(product).map(PRODUCTS) * rng.uniform(0.9, 1.1, size=n)).round(2),
        "units": rng.integers(1, 12, size=n),
        "note": "",
    })
"""
        ),
        _c("orders = make_orders(N_ORDERS, SEED)"),
        _n("orders.head()"),
        _n("print(orders.shape)\norders.dtypes"),
        _c('orders["revenue"] = (orders["price"] * orders["units"]).round(2)'),
        _c('orders.drop(columns=["note"], inplace=True)'),
        _n("orders.describe()"),
        _n(
            f"time.sleep({slow()})  # stands for: check against last month's export\n"
            "checked_rows = len(orders)"
        ),
        _c(
            f"time.sleep({slow()})  # stands for: dedupe against the ledger\n"
            'orders.drop_duplicates(subset="order_id", keep="last", inplace=True)'
        ),
        _c('orders["quarter"] = (orders["day"] // 92 + 1).clip(upper=4)'),
    ]
    customers = [
        _n(
            """
def make_customers(n, seed):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"id": np.arange(n), "tier": rng.choice(["free", "paid"], size=n)})
"""
        ),
        _n("customers = make_customers(N_CUSTOMERS, SEED + 1)"),
        _n("customers.tier.value_counts()"),
        _c(
            """
def make_customers(n, seed):  # now with names and signup days
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "id": np.arange(n),
        "name": [f"c{i:04d}" for i in range(n)],
        "tier": rng.choice(["free", "paid"], size=n, p=[0.7, 0.3]),
        "signup_day": rng.integers(0, 365, size=n),
    })
"""
        ),
        _c("customers = make_customers(N_CUSTOMERS, SEED + 1)"),
        _n("customers.sample(5, random_state=1)"),
        _n(
            f"time.sleep({slow()})  # stands for: enrich from the CRM\n"
            'crm_fields = ["email", "phone"]'
        ),
    ]
    sensor = [
        _c(
            """
def make_sensor(n, seed):
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    return 20.0 + 3.0 * np.sin(t / 50.0) + rng.normal(0.0, 0.5, size=n)
"""
        ),
        _c("sensor = make_sensor(SENSOR_POINTS, SEED + 2)"),
        _c(f"sensor[::{rng.randrange(150, 400)}] += 8.0  # the known faults"),
        _n("print(sensor.min().round(2), sensor.max().round(2))"),
        _n("threshold = 2.5"),
        _c(f"window = {rng.choice([15, 25, 35])}"),
        _c('smooth = np.convolve(sensor, np.ones(window) / window, mode="same")'),
        _c("residual = sensor - smooth"),
        _n('print(int((np.abs(residual) > threshold).sum()), "points over the first threshold")'),
        _c(
            f"time.sleep({slow()})  # stands for: fit the noise model\n"
            'noise = {"sigma": float(residual[window:-window].std()), "k": 3.0}'
        ),
        _c('threshold = noise["k"] * noise["sigma"]  # replaces the first guess'),
        _c("anomalies = np.flatnonzero(np.abs(residual) > threshold)"),
    ]
    inventory = [
        _n("inventory = {p: 100 for p in PRODUCTS}"),
        _n(
            'for p, n in orders.groupby("product")["units"].sum().items():\n'
            "    inventory[p] -= int(n) % 97"
        ),
        _n("restock = []"),
        _n("for p, left in inventory.items():\n    if left < 60:\n        restock.append(p)"),
        _n('print("restock:", restock)'),
        _n('inventory["pro"] = 200  # a delivery came'),
    ]
    sales = [
        _c(
            'quarterly = orders.pivot_table(index="quarter", columns="region", values="revenue",'
            ' aggfunc="sum")'
        ),
        _n("quarterly"),
        _n('by_region = orders.groupby("region")["revenue"].agg(["sum", "mean", "count"])'),
        _n('by_region.sort_values("sum", ascending=False)'),
        _c('FX = {"EUR": 1.0}'),
        _c(f'FX["USD"] = {rng.uniform(1.05, 1.12):.4f}'),
        _c('FX["GBP"] = 0.86  # changes FX in place: the planner keeps it'),
        _n(
            f"time.sleep({slow()})  # stands for: bootstrap the regional means\n"
            "boot_means = {r: round(float(orders.loc[orders.region == r, 'revenue'].mean()), 2)"
            " for r in REGIONS}"
        ),
    ]
    spend = [
        _c('spend = orders.groupby("customer")["revenue"].sum()'),
        _c('customers["spend"] = customers["id"].map(spend).fillna(0.0).round(2)'),
        _n('customers.sort_values("spend").tail()'),
        _c("vip = []"),
        _c(
            "for row in customers.itertuples():\n"
            f"    if row.spend > {rng.randrange(1400, 1800)}:\n"
            "        vip.append(int(row.id))"
        ),
        _n('print(len(vip), "customers above the cut")'),
        _n('segments = {"vip": len(vip)}\nsegments["rest"] = N_CUSTOMERS - len(vip)'),
        _n(
            f"time.sleep({slow()})  # stands for: score churn for everyone\n"
            'churn = (customers["spend"] < customers["spend"].median()).mean()'
        ),
    ]
    return [setup, orders, customers, sensor, inventory, sales, spend]


LATE = [
    _c('quarterly_table = (quarterly * FX["USD"]).round(2)'),
    _n("quarterly_table"),
    _c('vip_rows = customers[customers["id"].isin(vip)]'),
    _c(
        "top_customers = [(r.name, round(float(r.spend), 2))\n"
        '                 for r in vip_rows.nlargest(10, "spend").itertuples()]'
    ),
    _n("top_customers[:3]"),
    _c("anomaly_rate = round(len(anomalies) / len(sensor), 6)"),
    _n('print(f"{anomaly_rate:.4%} of the readings are anomalies")'),
]

# Exploration that needs no later cell: (first section it can follow, template).
FILLERS = [
    (1, 'orders.groupby("product")["units"].mean().round(2)'),
    (1, 'orders[orders["region"] == "{region}"]["revenue"].describe()'),
    (1, "orders.corr(numeric_only=True).round(2)"),
    (1, 'print(f"{{len(orders):,}} orders, {{orders.revenue.sum():,.0f}} in revenue")'),
    (1, 'daily_{i} = orders.groupby("day")["revenue"].sum()\ndaily_{i}.rolling(7).mean().tail()'),
    (1, 'top_products_{i} = orders.groupby("product")["revenue"].sum().nlargest(2).index.tolist()'),
    (1, "time.sleep({slow})  # stands for: {task}\nnote_{i} = '{task} done'"),
    (1, 'orders["units"].value_counts().sort_index().head({q})'),
    (2, "customers.tier.value_counts(normalize=True).round(3)"),
    (2, 'customers["signup_day"].quantile([0.25, 0.5, 0.75])'),
    (2, "time.sleep({slow})  # stands for: {task}\nnote_{i} = '{task} done'"),
    (3, "np.percentile(sensor, [5, 50, 95]).round(2)"),
    (3, 'print("sensor mean", round(float(sensor.mean()), 3))'),
    (3, "peak_{i} = int(np.argmax(sensor))\npeak_{i}, round(float(sensor[peak_{i}]), 2)"),
    (3, "time.sleep({slow})  # stands for: {task}\nnote_{i} = '{task} done'"),
    (4, "sorted(inventory.items(), key=lambda kv: kv[1])[:2]"),
    (5, "quarterly.sum(axis=1).round(2).to_dict()"),
    (6, 'customers.groupby("tier")["spend"].mean().round(2)'),
]
TASKS = ["train a baseline", "fetch the price history", "plot every region", "profile memory"]


def make_notebook(seed: int, scale: float) -> list[Cell]:
    """80 cells: the sections in order, fillers after them, the late targets last."""
    rng = random.Random(seed)
    sections = _sections(rng, scale)
    spare = CELLS - sum(map(len, sections)) - len(LATE)
    where = sorted(rng.randrange(1, len(sections)) for _ in range(spare))  # after section k
    cells: list[Cell] = []
    for k, section in enumerate(sections):
        cells += section
        pool = [template for first, template in FILLERS if first <= k]
        for _ in range(where.count(k)):
            template = rng.choice(pool)
            code = template.format(
                i=len(cells) + 1,
                region=rng.choice(["north", "south", "east", "west"]),
                q=rng.randrange(3, 8),
                slow=f"{rng.uniform(0.05, 0.2) * scale:.3f}",
                task=rng.choice(TASKS),
            )
            cells.append(Cell(code))
    cells += LATE
    assert len(cells) == CELLS, len(cells)
    return cells


# -- a real kernel -----------------------------------------------------------------------------


@dataclass
class Reply:
    """One request's outcome: its text (streams and plain displays), error, count, time."""

    text: str
    error: str | None
    execution_count: int | None
    seconds: float
    user_expressions: dict[str, Any] = field(default_factory=dict)


class Kernel:
    """A kernel on the notebook, driven like a front: one request per cell."""

    def __init__(self, env: dict[str, str], cwd: Path) -> None:
        self.km: KernelManager
        self.km, self.kc = start_new_kernel(kernel_name="python3", env=env, cwd=str(cwd))

    def run(self, code: str, **options: Any) -> Reply:
        parts: list[str] = []
        errors: list[str] = []

        def hook(msg: dict[str, Any]) -> None:
            kind, content = msg["msg_type"], msg["content"]
            if kind == "stream":
                parts.append(content["text"])
            elif kind in ("display_data", "execute_result"):
                parts.append(content["data"].get("text/plain", "") + "\n")
            elif kind == "error":
                errors.append(f"{content['ename']}: {content['evalue']}")

        start = time.perf_counter()
        reply = self.kc.execute_interactive(code, output_hook=hook, timeout=TIMEOUT, **options)
        seconds = time.perf_counter() - start
        content = reply["content"]
        if content["status"] != "ok" and not errors:
            errors.append(f"{content.get('ename')}: {content.get('evalue')}")
        return Reply(
            "".join(parts),
            errors[0] if errors else None,
            content.get("execution_count"),
            seconds,
            content.get("user_expressions", {}),
        )

    def must(self, code: str) -> Reply:
        reply = self.run(code)
        if reply.error is not None:
            raise BenchFailure(f"{code.splitlines()[0]!r} raised {reply.error}")
        return reply

    def digest(self) -> dict[str, str]:
        """The targets' value digests, by code that is not recorded (a silent request)."""
        reply = self.run(
            DIGEST,
            silent=True,
            store_history=False,
            user_expressions={"d": f"_bench_digest({list(TARGETS)!r})"},
        )
        found = reply.user_expressions.get("d", {})
        if reply.error is not None or found.get("status") != "ok":
            raise BenchFailure(f"the digest failed: {reply.error or found}")
        return dict(eval(found["data"]["text/plain"]))  # our own dict of str -> str

    def present(self, names: tuple[str, ...]) -> list[str]:
        reply = self.run(
            "",
            silent=True,
            store_history=False,
            user_expressions={"p": f"[n for n in {list(names)!r} if n in globals()]"},
        )
        return list(eval(reply.user_expressions["p"]["data"]["text/plain"]))

    def restart(self) -> None:
        """A real restart through the KernelManager, then the extension again."""
        self.km.restart_kernel(now=False)
        self.kc.wait_for_ready(timeout=TIMEOUT)
        self.must("%load_ext loom_jupyter")

    def shutdown(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)


class BenchFailure(Exception):
    """Wrong behaviour: the benchmark exits non-zero."""


def _env(base_url: str, folder: Path, notebook: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "LOOM_", "JPY_"))}
    env.update(
        JPY_SESSION_NAME=str(notebook),  # the archive goes beside it, in .loom/
        ANTHROPIC_BASE_URL=base_url,
        ANTHROPIC_API_KEY="bench-key",
        LOOM_APPROVAL="auto",
        XDG_CONFIG_HOME=str(folder / "config"),  # no user loom.yaml
    )
    return env


def _archived_cells(notebook: Path) -> int:
    path = notebook.parent / ".loom" / f"{notebook.name}.sqlite"
    if not path.exists():
        return 0
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        row = db.execute("SELECT count(*) FROM executions WHERE source = 'cell'").fetchone()
    return int(row[0])


def _wait_archived(notebook: Path, count: int) -> int:
    """Records are written on the engine thread: wait (bounded) until ``count`` are in."""
    deadline = time.monotonic() + 60
    found = _archived_cells(notebook)
    while found < count and time.monotonic() < deadline:
        time.sleep(0.1)
        found = _archived_cells(notebook)
    return found


# -- the measurement ---------------------------------------------------------------------------


@dataclass
class Rebuild:
    """What one ``%cowork rebuild`` showed and took."""

    seconds: float
    steps: list[int]  # the plan's steps, as the execution counts of the original cells
    ran: tuple[int, int]  # "Ran N of M step(s)."
    estimate: str
    checks: dict[str, str]
    digest: dict[str, str]
    leaked: list[str]


def _parse_rebuild(text: str) -> tuple[list[int], tuple[int, int], str, dict[str, str]]:
    steps = [int(m) for m in re.findall(r"^\s*\d+\s+cell \[(\d+)\]", text, re.MULTILINE)]
    ran = re.search(r"Ran (\d+) of (\d+) step\(s\)", text)
    estimate = re.search(r"To rebuild [^:]*: (.+?) estimated", text)
    checks = {}
    for name in TARGETS:
        found = re.search(rf"^{name}\s+(yes|no)\s+(.+)$", text, re.MULTILINE)
        checks[name] = found.group(2).strip() if found else "not in the check table"
    return (
        steps,
        (int(ran.group(1)), int(ran.group(2))) if ran else (0, 0),
        estimate.group(1) if estimate else "?",
        checks,
    )


def first_pass(kernel: Kernel, cells: list[Cell]) -> tuple[float, dict[int, int]]:
    """Run the notebook once, recorded; the cells' execution counts (count -> index)."""
    kernel.must("%load_ext loom_jupyter")
    total, counts = 0.0, {}
    for index, cell in enumerate(cells):
        reply = kernel.must(cell.code)
        total += reply.seconds
        if reply.execution_count is not None:
            counts[reply.execution_count] = index
    return total, counts


def rebuild(kernel: Kernel) -> Rebuild:
    kernel.restart()
    if kernel.present(TARGETS):
        raise BenchFailure("the restart kept the variables")
    reply = kernel.must(f"%cowork rebuild {' '.join(TARGETS)} --yes")
    steps, ran, estimate, checks = _parse_rebuild(reply.text)
    return Rebuild(
        reply.seconds, steps, ran, estimate, checks, kernel.digest(), kernel.present(OUTSIDE)
    )


def run_all(kernel: Kernel, cells: list[Cell]) -> tuple[float, dict[str, str]]:
    kernel.restart()
    total = sum(kernel.must(cell.code).seconds for cell in cells)
    return total, kernel.digest()


def measure(cells: list[Cell], repeats: int, folder: Path, base_url: str) -> dict[str, Any]:
    notebook = folder / "analysis.ipynb"
    kernel = Kernel(_env(base_url, folder, notebook), folder)
    try:
        recorded_s, counts = first_pass(kernel, cells)
        before = kernel.digest()
        archived = _wait_archived(notebook, len(cells))
        rebuilds = [rebuild(kernel) for _ in range(repeats)]
        runs = [run_all(kernel, cells) for _ in range(repeats)]
    finally:
        kernel.shutdown()
    return {
        "recorded_s": recorded_s,
        "counts": counts,
        "before": before,
        "archived": archived,
        "rebuilds": rebuilds,
        "runs": runs,
    }


def _s(values: list[float]) -> str:
    if len(values) == 1:
        return f"{values[0]:.2f} s"
    return f"{statistics.median(values):.2f} s (min {min(values):.2f}, max {max(values):.2f})"


def _asleep(code: str) -> float:
    found = re.search(r"time\.sleep\(([\d.]+)\)", code)
    return float(found.group(1)) if found else 0.0


def report(cells: list[Cell], found: dict[str, Any]) -> list[str]:
    """Print the table; return what went wrong."""
    counts: dict[int, int] = found["counts"]
    rebuilds: list[Rebuild] = found["rebuilds"]
    runs: list[tuple[float, dict[str, str]]] = found["runs"]
    before: dict[str, str] = found["before"]
    first = rebuilds[0]
    expected = {i for i, cell in enumerate(cells) if cell.needed}
    planned = {counts.get(count, -1) for count in first.steps}
    failures: list[str] = []
    if found["archived"] != len(cells):
        failures.append(f"{found['archived']} cell records archived, not {len(cells)}")
    for n, done in enumerate(rebuilds, 1):
        size = len(done.steps)
        if not 0 < size < len(cells):
            failures.append(f"rebuild {n}: a slice of {size} steps (of {len(cells)})")
        if done.ran != (size, size):
            failures.append(f"rebuild {n}: ran {done.ran[0]} of {done.ran[1]} steps ({size} shown)")
        failures += [
            f"rebuild {n}: {name}: {check}" for name, check in done.checks.items() if check != SAME
        ]
        failures += [
            f"rebuild {n}: {name}'s digest {done.digest.get(name)} is not {want}"
            for name, want in before.items()
            if done.digest.get(name) != want
        ]
        if done.leaked:
            failures.append(f"rebuild {n}: cells outside the slice ran ({', '.join(done.leaked)})")
    for n, (_, digest) in enumerate(runs, 1):
        if digest != before:
            failures.append(f"run all {n}: the digests differ ({digest} vs {before})")

    rebuild_s = [done.seconds for done in rebuilds]
    run_all_s = [total for total, _ in runs]
    fingerprints = min(sum(c == SAME for c in done.checks.values()) for done in rebuilds)
    equal = min(sum(done.digest.get(k) == v for k, v in before.items()) for done in rebuilds)
    if planned == expected:
        versus = f"equal ({len(expected)} cells)"
    else:
        extra = sorted(i + 1 for i in planned - expected)
        short = sorted(i + 1 for i in expected - planned)
        versus = f"{len(expected)} labelled; extra cells {extra}, missing cells {short}"
    size = len(first.steps)
    speedup = statistics.median(run_all_s) / statistics.median(rebuild_s)
    asleep = [_asleep(cell.code) for cell in cells]
    slow = sum(1 for s in asleep if s)
    slow_in = sum(1 for i in planned if 0 <= i < len(cells) and asleep[i])
    asleep_in = sum(asleep[i] for i in planned if 0 <= i < len(cells))
    rows = [
        ("executions archived (first pass, one request per cell)", f"{found['archived']}", ""),
        (
            "slice size (steps) vs the whole notebook",
            f"{size} of {len(cells)} ({size / len(cells):.0%})",
            f"slow cells: {slow_in} of {slow} ({asleep_in:.2f} of {sum(asleep):.2f} s asleep)",
        ),
        ("slice vs the hand-labelled dependencies", versus, ""),
        ("estimate the plan showed (recorded durations)", first.estimate, ""),
        ("%cowork rebuild wall time", _s(rebuild_s), f"{len(rebuild_s)} restart(s)"),
        ("Run All wall time (80 requests after a restart)", _s(run_all_s), "the alternative"),
        ("first pass wall time (80 requests, recorded)", _s([found["recorded_s"]]), ""),
        ("speed-up (Run All / rebuild, medians)", f"{speedup:.1f}x", "not asserted"),
        ("names rebuilt with equal fingerprints", f"{fingerprints}/{len(TARGETS)}", ""),
        (
            "independent value check (SHA-256 of to_csv / tolist / repr)",
            f"{equal}/{len(TARGETS)} equal",
            "before the restart vs after the rebuild",
        ),
        (
            "names made only outside the slice, after the rebuild",
            "absent" if not any(d.leaked for d in rebuilds) else "present",
            ", ".join(OUTSIDE),
        ),
    ]
    print(f"Rebuild {len(TARGETS)} late variables vs Run All, after a restart ({len(cells)} cells)")
    print()
    width = max(len(r[0]) for r in rows)
    value = max(len(r[1]) for r in rows)
    print(f"| {'measure':<{width}} | {'value':<{value}} | note |")
    print(f"|{'-' * (width + 2)}|{'-' * (value + 2)}|------|")
    for name, shown, note in rows:
        print(f"| {name:<{width}} | {shown:<{value}} | {note} |")
    one, five, _ = os.getloadavg()
    print(
        f"(targets: {', '.join(TARGETS)}; machine load average {one:.1f} / {five:.1f} on "
        f"{os.cpu_count()} CPUs)"
    )
    return failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="one restart each way, sleeps a quarter as long"
    )
    parser.add_argument("--seed", type=int, default=SEED, help="the notebook's seed")
    args = parser.parse_args(argv)
    repeats, scale = (1, 0.25) if args.quick else (3, 1.0)
    cells = make_notebook(args.seed, scale)
    with FakeAnthropic() as fake, tempfile.TemporaryDirectory() as tmp:
        try:
            found = measure(cells, repeats, Path(tmp), fake.base_url)
        except BenchFailure as error:
            print(f"FAILED: {error}", file=sys.stderr)
            return 1
    failures = report(cells, found)
    for failure in failures:
        print(f"FAILED: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
