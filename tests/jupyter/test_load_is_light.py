"""What ``%load_ext loom_jupyter`` imports, for its banner and up to a ready session (not a
timing: the time is in ``benchmarks/kernel_bench.py``).

The banner needs the archive (the session to resume, its lease, the restart offer), the
settings and the folder's trust, and the magics; the turn floor, the protocol's messages and
the session (engine, tools, orchestrator) are imported on the engine thread once the banner
is out. The fronts a person has not used yet (reports, recovery, rendering, the panel, the
sidebar's hub) and every heavy library (the anthropic SDK, pydantic, ipywidgets) wait for
first use. Plain terminal IPython, in a subprocess.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

PROBE = """
import json, sys
from loom_jupyter.jupyter.coworker.runtime import KernelCowork
ip = get_ipython()
go_on, at_banner = KernelCowork.go_on, []

def banner_out(self):  # the banner is printed: the session's building may go on
    at_banner.append(sorted(sys.modules))
    go_on(self)

KernelCowork.go_on = banner_out
ip.run_line_magic("load_ext", "loom_jupyter")
from loom_jupyter.jupyter.coworker.registry import current
current(ip).session  # the background opening is done: nothing more is imported until a turn
print("BANNER " + json.dumps(at_banner[0]))
print("MODULES " + json.dumps(sorted(sys.modules)))
"""

# The Jupyter layer's and the host's modules imported when the banner is printed: what it
# tells (the archive's session, lease and restart offer, the settings, the folder's trust)
# needs no more. The turn floor and the protocol come with the session, after the banner.
BANNER_JUPYTER = {
    "cell": {"output"},
    "coworker": {"banner", "comm_fronts", "panel_front", "registry", "runtime"},
    "kernel": {"activity", "mainthread"},
    "magics": {"commands", "cowork", "delegate"},
    "sidebar": {"cellguard"},
}
BANNER_HOST = {
    "commands",
    "commands.fields",
    "commands.registry",
    "commands.spec",
    "host",
    "runtime",
    "runtime.document",
    "runtime.loop_thread",
    "runtime.stream",
    "services",  # the host's parts: light, their heavy imports where first used
    "services.executions",
    "services.keys",
    "services.managed",
    "services.opening",
    "services.restart",
    "services.switches",
    "services.trust",
    "upkeep",
    "upkeep.location",
    "upkeep.relocate",
    "upkeep.renames",
}
# The session's units, and the values only turns and cells need (the archive reads them in
# the functions that read or write a turn or an execution).
AFTER_BANNER = (
    "engine",
    "session",
    "tools",
    "models",
    "orchestrator",
    "messages",
    "lineage",
    "telemetry",
)

# The Jupyter layer's modules a loaded, idle coworker has imported.
JUPYTER_MODULES = {
    "cell": {"approval", "output"},
    "coworker": {"banner", "comm_fronts", "panel_front", "registry", "runtime"},
    "delegation": {"front", "view"},
    "kernel": {"activity", "bridge", "execute", "fdcapture", "mainthread"},
    "magics": {"commands", "cowork", "delegate"},
    "sidebar": {"cellguard"},  # the hub and its comm come with the first sidebar
}
HOST_MODULES = {
    "commands",  # the magic's subcommand table; their arguments and handlers on first use
    "commands.fields",
    "commands.registry",
    "commands.spec",
    "host",
    "runtime",
    "runtime.approvals",
    "runtime.document",
    "runtime.floor",
    "runtime.history",
    "runtime.loop_thread",
    "runtime.mirror",
    "runtime.queue",
    "runtime.replay",
    "runtime.stream",
    "services",  # the host's parts: light, their heavy imports where first used
    "services.executions",
    "services.keys",
    "services.managed",
    "services.opening",
    "services.restart",
    "services.switches",
    "services.trust",
    "upkeep",
    "upkeep.location",
    "upkeep.relocate",
    "upkeep.renames",
    "wire",
    "wire.protocol",
}
NOT_YET = {
    "anthropic",
    "pydantic",
    "ipywidgets",
    "httpx",
    "httpx2",
    "yaml",
    "matplotlib",
    "opentelemetry",  # telemetry is off by default: not even its API (DESIGN §16)
}


def _loaded(tmp_path: Path) -> tuple[set[str], set[str]]:
    """The modules loaded when the banner is printed, and once the session is open."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LOOM_", "JPY_"))}
    env["XDG_CONFIG_HOME"] = str(tmp_path / "config")
    script = tmp_path / "probe.ipy"
    script.write_text(PROBE)
    done = subprocess.run(
        [sys.executable, "-m", "IPython", "--quick", "--no-banner", str(script)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    lines = done.stdout.splitlines()

    def listed(tag: str) -> set[str]:
        line = next(ln for ln in lines if ln.startswith(f"{tag} "))
        return set(json.loads(line.removeprefix(f"{tag} ")))

    return listed("BANNER"), listed("MODULES")


def _parts(modules: set[str], layer: str) -> dict[str, set[str]]:
    """The ``loom_jupyter.<layer>`` modules loaded, by inner package."""
    found: dict[str, set[str]] = {}
    for name in modules:
        if name.startswith(f"loom_jupyter.{layer}.") and name.count(".") == 3:
            _, _, part, module = name.split(".")
            found.setdefault(part, set()).add(module)
    return found


def _host(modules: set[str]) -> set[str]:
    return {
        m.removeprefix("loom_jupyter.host.") for m in modules if m.startswith("loom_jupyter.host.")
    }


def test_the_banner_imports_only_what_it_tells(tmp_path: Path) -> None:
    banner, _ = _loaded(tmp_path)
    assert _parts(banner, "jupyter") == BANNER_JUPYTER
    assert _host(banner) == BANNER_HOST  # no floor, no protocol: they come with the session
    loom = {m.split(".")[1] for m in banner if m.startswith("loom_jupyter.")}
    assert loom & set(AFTER_BANNER) == set()
    assert {m.split(".")[0] for m in banner} & NOT_YET == set()


def test_load_imports_only_what_an_idle_coworker_needs(tmp_path: Path) -> None:
    _, modules = _loaded(tmp_path)
    jupyter = {m.removeprefix("loom_jupyter.jupyter.") for m in modules}
    for part, names in JUPYTER_MODULES.items():
        loaded = {m.split(".")[1] for m in jupyter if m.startswith(f"{part}.")}
        assert loaded == names, part
    assert _host(modules) == HOST_MODULES  # the panel's data and the views: on first use
    assert not any(m.startswith("loom_jupyter.jupyter.panel") for m in modules)
    assert "loom_jupyter.jupyter.magics.reports" not in modules  # handlers load on first run
    assert "loom_jupyter.jupyter.cell.render" not in modules  # on the first turn
    assert not any(m.startswith(("loom_jupyter.cli", "loom_jupyter.testing")) for m in modules)
    assert "loom_jupyter.archive.salvage" not in modules
    assert {m.split(".")[0] for m in modules} & NOT_YET == set()
