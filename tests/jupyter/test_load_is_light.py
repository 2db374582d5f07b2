"""What ``%load_ext loom_jupyter`` imports, up to a ready session (not a timing: the time
is in ``benchmarks/kernel_bench.py``).

Loading opens the archive and the latest session; the fronts a person has not used yet
(reports, recovery, rendering, the panel) and every heavy library (the anthropic SDK,
pydantic, ipywidgets) wait for first use. Plain terminal IPython, in a subprocess.
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
ip = get_ipython()
ip.run_line_magic("load_ext", "loom_jupyter")
from loom_jupyter.jupyter.coworker.registry import current
current(ip).session  # the background opening is done: nothing more is imported until a turn
print("MODULES " + json.dumps(sorted(sys.modules)))
"""

# The Jupyter layer's modules a loaded, idle coworker has imported.
JUPYTER_MODULES = {
    "cell": {"approval", "output"},
    "coworker": {"registry", "runtime"},
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
    "services",
    "services.views",
    "upkeep",
    "upkeep.location",
    "upkeep.relocate",
    "wire",
    "wire.protocol",
}
NOT_YET = {"anthropic", "pydantic", "ipywidgets", "httpx", "httpx2", "yaml", "matplotlib"}


def _loaded(tmp_path: Path) -> set[str]:
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
    line = next(ln for ln in done.stdout.splitlines() if ln.startswith("MODULES "))
    return set(json.loads(line.removeprefix("MODULES ")))


def test_load_imports_only_what_an_idle_coworker_needs(tmp_path: Path) -> None:
    modules = _loaded(tmp_path)
    jupyter = {m.removeprefix("loom_jupyter.jupyter.") for m in modules}
    for part, names in JUPYTER_MODULES.items():
        loaded = {m.split(".")[1] for m in jupyter if m.startswith(f"{part}.")}
        assert loaded == names, part
    host = {
        m.removeprefix("loom_jupyter.host.") for m in modules if m.startswith("loom_jupyter.host.")
    }
    assert host == HOST_MODULES  # the panel's data: on first use
    assert not any(m.startswith("loom_jupyter.jupyter.panel") for m in modules)
    assert "loom_jupyter.jupyter.magics.reports" not in modules  # handlers load on first run
    assert "loom_jupyter.jupyter.cell.render" not in modules  # on the first turn
    assert not any(m.startswith(("loom_jupyter.cli", "loom_jupyter.testing")) for m in modules)
    assert "loom_jupyter.archive.salvage" not in modules
    assert {m.split(".")[0] for m in modules} & NOT_YET == set()
