"""Which notebook a kernel serves (DESIGN §13): JPY_SESSION_NAME, __session__, VS Code's
``__vsc_ipynb_file__``, the sidebar's hello; a kernel that cannot place it says so."""

from __future__ import annotations

from typing import TYPE_CHECKING

from loom_jupyter.host.upkeep.location import (
    VSCODE_VARIABLE,
    placed_by_front,
    resolve_notebook,
)

if TYPE_CHECKING:
    from pathlib import Path


def test_vscodes_variable_names_the_notebook_after_jupyters(tmp_path: Path) -> None:
    ns = {VSCODE_VARIABLE: str(tmp_path / "a.ipynb")}
    found = resolve_notebook(ns, env={}, cwd=tmp_path, in_kernel=True)
    assert (found.path, found.source, found.unplaced) == (tmp_path / "a.ipynb", "vscode", "")
    jupyter = resolve_notebook(ns, env={"JPY_SESSION_NAME": str(tmp_path / "b.ipynb")})
    assert (jupyter.path.name, jupyter.source) == ("b.ipynb", "env")


def test_a_kernel_with_no_name_is_unplaced_a_terminal_is_not(tmp_path: Path) -> None:
    terminal = resolve_notebook({}, env={}, cwd=tmp_path)
    assert (terminal.source, terminal.unplaced) == ("terminal", "")
    kernel = resolve_notebook({}, env={}, cwd=tmp_path, in_kernel=True)
    assert kernel.source == "unknown"
    assert kernel.path == tmp_path.resolve() / "ipython-session"
    assert "nothing names it" in kernel.unplaced
    note = kernel.unplaced_note(tmp_path / ".loom" / "ipython-session.sqlite", pending=True)
    assert note is not None
    assert "does not know its notebook" in note
    assert "Nothing is written yet" in note
    assert str(tmp_path / ".loom" / "ipython-session.sqlite") in note
    assert "%cowork --notebook" in note
    assert "archive_dir" in note


def test_a_gateways_kernel_whose_folder_is_not_here(tmp_path: Path) -> None:
    env = {
        "JPY_SESSION_NAME": "/srv/server-root/work/a.ipynb",
        "KERNEL_WORKING_DIR": "/srv/server-root/work",
    }
    away = resolve_notebook({}, env=env, cwd=tmp_path, in_kernel=True)
    assert away.source == "unknown"
    assert "/srv/server-root/work/a.ipynb" in away.unplaced
    assert "gateway" in away.unplaced
    placed = resolve_notebook({}, env={**env, "LOOM_ARCHIVE_DIR": str(tmp_path)}, cwd=tmp_path)
    assert (str(placed.path), placed.source) == (env["JPY_SESSION_NAME"], "env")
    assert not placed.unplaced
    no_name = resolve_notebook({}, env={"KERNEL_WORKING_DIR": "/srv/x"}, in_kernel=True)
    assert "gateway started this kernel for the server's folder /srv/x" in no_name.unplaced


def test_the_sidebars_hello_places_an_unplaced_kernel(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "work").mkdir(parents=True)
    (root / "work" / "a.ipynb").write_text("{}")
    unplaced = resolve_notebook({}, env={}, cwd=root / "work", in_kernel=True)
    here = placed_by_front(unplaced, "work/a.ipynb", str(root), env={})
    assert (here.path, here.source, here.unplaced) == (root / "work" / "a.ipynb", "front", "")
    # without the server's folder: the folders above the kernel's are tried
    assert placed_by_front(unplaced, "work/a.ipynb", env={}).path == here.path
    # a placed notebook, a path that is no notebook, an absolute path: nothing changes
    assert placed_by_front(here, "work/b.ipynb", str(root), env={}) is here
    assert placed_by_front(unplaced, "../../etc/passwd", str(root), env={}) is unplaced
    assert placed_by_front(unplaced, "/abs/a.ipynb", str(root), env={}) is unplaced


def test_a_gateways_hello_places_it_only_with_archive_dir(tmp_path: Path) -> None:
    env = {"KERNEL_WORKING_DIR": "/srv/server-root/work"}
    unplaced = resolve_notebook({}, env=env, cwd=tmp_path, in_kernel=True)
    still = placed_by_front(unplaced, "work/a.ipynb", "", env=env)
    assert still.unplaced.startswith("the Loom sidebar names /srv/server-root/work/a.ipynb")
    assert still.path == unplaced.path
    placed = placed_by_front(unplaced, "work/a.ipynb", "", env={**env, "LOOM_ARCHIVE_DIR": "/a"})
    assert (str(placed.path), placed.source) == ("/srv/server-root/work/a.ipynb", "front")
    by_root = placed_by_front(unplaced, "work/a.ipynb", "/srv/r", env={"LOOM_ARCHIVE_DIR": "/a"})
    assert str(by_root.path) == "/srv/r/work/a.ipynb"
