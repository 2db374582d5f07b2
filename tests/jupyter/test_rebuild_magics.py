"""%cowork provenance and %cowork rebuild on a real IPython shell, archived through the host."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from IPython.core.interactiveshell import InteractiveShell


@pytest.fixture
def cowork(
    cowork: Callable[[str], str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Callable[[str], str]:
    """The shared ``cowork``, run from the notebook's folder, after a first turn: the
    archive is open, so cells are recorded from here on."""
    monkeypatch.chdir(tmp_path)
    cowork("hello")
    return cowork


def test_provenance_shows_the_setter_and_its_chain(
    shell: InteractiveShell, cowork: Callable[[str], str]
) -> None:
    shell.run_cell("prov_a = 2")
    shell.run_cell("prov_other = 1")
    shell.run_cell("prov_b = prov_a * 3\n# second line")
    out = cowork("provenance prov_b")
    assert "prov_b was last set by cell [" in out
    assert "prov_b = prov_a * 3" in out
    assert "# second line" in out
    assert "prov_a = 2" in out  # the chain
    assert "prov_other" not in out
    assert "no archived execution sets it" in cowork("provenance prov_nowhere")


def test_provenance_without_a_name_is_a_table_of_every_variable(
    shell: InteractiveShell, cowork: Callable[[str], str]
) -> None:
    shell.run_cell("ovr_base = 4")
    shell.run_cell("ovr_twice = ovr_base * 2")
    shell.user_ns["ovr_untraced"] = 1  # made without a cell: no record
    rows = {line.split()[0]: line for line in cowork("provenance").splitlines() if line}
    assert "cell [" in rows["ovr_twice"]
    assert "2 step(s)" in rows["ovr_twice"]  # its own cell and ovr_base's
    assert "1 step(s)" in rows["ovr_base"]
    assert "no archived execution sets it" in rows["ovr_untraced"]


def test_provenance_and_rebuild_have_help(cowork: Callable[[str], str]) -> None:
    assert "last set NAME" in cowork("provenance --help")
    assert "--yes" in cowork("rebuild --help")


def test_rebuild_runs_only_the_slice_and_checks_the_names(
    shell: InteractiveShell, cowork: Callable[[str], str]
) -> None:
    shell.run_cell("reb_a = [1, 2]")
    shell.run_cell("reb_other = 'not needed'")
    shell.run_cell("reb_a.append(3)")
    shell.run_cell("reb_b = sum(reb_a)")
    for name in ("reb_a", "reb_b", "reb_other"):
        shell.user_ns.pop(name)  # as after a restart
    out = cowork("rebuild reb_b reb_gone")
    assert shell.user_ns["reb_b"] == 6
    assert shell.user_ns["reb_a"] == [1, 2, 3]
    assert "reb_other" not in shell.user_ns
    assert "reb_a.append(3)" in out
    assert "reb_gone: no archived execution sets it" in out
    assert "same fingerprint as recorded" in out


def test_steps_with_side_effects_need_yes(
    shell: InteractiveShell, cowork: Callable[[str], str], tmp_path: Path
) -> None:
    shell.run_cell("eff_x = 5\nopen('eff.txt', 'w').write(str(eff_x))")
    shell.user_ns.pop("eff_x")
    (tmp_path / "eff.txt").unlink()
    out = cowork("rebuild eff_x")
    assert "writes files" in out
    assert "--yes" in out
    assert "eff_x" not in shell.user_ns
    assert not (tmp_path / "eff.txt").exists()
    cowork("rebuild eff_x --yes")
    assert shell.user_ns["eff_x"] == 5
    assert (tmp_path / "eff.txt").read_text() == "5"
