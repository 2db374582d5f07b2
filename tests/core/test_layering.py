"""The core runs without Jupyter, and importing the package stays light (DESIGN §1.5)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

BLOCKER = """
import importlib.abc, sys
BLOCKED = {"IPython", "ipykernel", "ipywidgets", "comm", "jupyter_server"}
class Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(f"blocked in this test: {name}")
        return None
sys.meta_path.insert(0, Blocker())
"""


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_every_core_module_imports_with_jupyter_blocked() -> None:
    code = (
        BLOCKER
        + """
import pkgutil, importlib, loom_jupyter
names = [m.name for m in pkgutil.walk_packages(loom_jupyter.__path__, "loom_jupyter.")
         if not m.name.startswith("loom_jupyter.jupyter") and not m.name.endswith("__main__")]
for name in names:
    importlib.import_module(name)
print(len(names))
"""
    )
    proc = run_python(code)
    assert proc.returncode == 0, proc.stderr
    assert int(proc.stdout.strip()) >= 5


def test_importing_the_package_loads_nothing_heavy() -> None:
    code = """
import sys, loom_jupyter
heavy = {"anthropic", "IPython", "ipywidgets", "aiosqlite", "yaml", "httpx", "httpx2", "numpy"}
print(sorted(m for m in sys.modules if m.split(".")[0] in heavy))
"""
    proc = run_python(code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_labextension_paths_point_inside_the_package() -> None:
    import loom_jupyter

    [entry] = loom_jupyter._jupyter_labextension_paths()
    assert entry == {"src": "labextension", "dest": "loom-jupyter"}
