"""``%load_ext``'s banner and ``%cowork status`` say where the archive is, on which
filesystem and with which journal (DESIGN §13), in a real in-process IPython shell."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from fuse_mounts import LOCKS_NO_CACHE
from IPython.core.interactiveshell import InteractiveShell

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from fuse_mounts import BindMounts

    from loom_jupyter.testing import FakeAnthropic


@pytest.fixture
def load(
    fake_anthropic: FakeAnthropic,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> Iterator[Callable[[Path], tuple[str, str]]]:
    """``load(notebook)``: ``%load_ext loom_jupyter`` for it, then ``%cowork status``; both
    outputs with their lines joined (the banner wraps at words)."""
    shell = InteractiveShell.instance()
    shell.reset(new_session=False)
    monkeypatch.setenv("LOOM_APPROVAL", "auto")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    loaded = False

    def run(notebook: Path) -> tuple[str, str]:
        nonlocal loaded
        monkeypatch.setenv("JPY_SESSION_NAME", str(notebook))
        shell.run_line_magic("load_ext", "loom_jupyter")
        loaded = True
        banner = capsys.readouterr().out
        shell.run_line_magic("cowork", "status")
        status = capsys.readouterr().out
        return " ".join(banner.split()), " ".join(status.split())

    yield run
    if loaded:
        shell.run_line_magic("unload_ext", "loom_jupyter")
    shell.reset(new_session=False)


def test_on_a_fuse_mount_the_banner_and_status_name_filesystem_and_journal(
    mounts: BindMounts, load: Callable[[Path], tuple[str, str]]
) -> None:
    mount = mounts.mount("share", *LOCKS_NO_CACHE)
    archive = mount / ".loom" / "analysis.ipynb.sqlite"
    banner, status = load(mount / "analysis.ipynb")
    said = f"Archive: {archive} · filesystem fuse.bindfs (mounted at {mount}) · journal delete"
    assert "loom: analysis.ipynb — new session" in banner
    assert f"{said} (the rollback journal: WAL is unsafe on network and virtual" in banner
    assert f"{said}." in status


def test_on_a_local_disk_only_status_says_it(
    tmp_path: Path, load: Callable[[Path], tuple[str, str]]
) -> None:
    banner, status = load(tmp_path / "analysis.ipynb")
    assert "Archive:" not in banner  # a local disk with WAL: nothing to tell
    archive = tmp_path / ".loom" / "analysis.ipynb.sqlite"
    assert f"Archive: {archive} · filesystem " in status
    assert status.split(f"Archive: {archive} · filesystem ")[1].split(" ")[0] != "fuse.bindfs"
    assert "· journal wal." in status
