"""One command registry below the fronts (issue 31.2): a command declared once is offered by
the magic, the sidebar and the terminal, parsed from its one argument dataclass, refused
for the same reasons in the same words, and answered by one typed report that each front
renders its own way."""

from __future__ import annotations

import argparse
import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import pytest

from loom_jupyter.cli import build_parser
from loom_jupyter.cli.render import report_text
from loom_jupyter.errors import LoomError
from loom_jupyter.host.commands.context import ArchiveContext, HostContext
from loom_jupyter.host.commands.registry import COMMANDS, availability, command, commands_for
from loom_jupyter.host.commands.report import Block, Items, Note, Report, Table, to_markdown
from loom_jupyter.host.commands.slash import SLASH_COMMANDS, run_command
from loom_jupyter.host.commands.spec import (
    FRONTS,
    Spec,
    UsageProblem,
    add_arguments,
    arg,
    from_namespace,
    parse_words,
)
from loom_jupyter.jupyter.magics.commands import SUBCOMMANDS
from loom_jupyter.jupyter.magics.front import run_in_cell, show_report
from loom_jupyter.settings import Settings

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from IPython.core.interactiveshell import InteractiveShell

pytest_plugins = ["loom_jupyter.testing.pytest_plugin"]


def _cli_commands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    found = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(found.choices)


# -- declared once, offered by each front ------------------------------------------------


def test_every_front_offers_exactly_the_commands_the_registry_gives_it() -> None:
    assert [s.name for s in commands_for("magic")] == list(SUBCOMMANDS)
    assert [s.name for s in commands_for("sidebar")] == [c.name for c in SLASH_COMMANDS]
    cli = _cli_commands()
    assert {s.name for s in commands_for("cli")} <= set(cli)
    assert len({spec.name for spec in COMMANDS}) == len(COMMANDS)  # each declared once
    for spec in COMMANDS:
        assert spec.fronts <= set(FRONTS), spec.name
        assert spec.by_front <= spec.fronts, spec.name


def test_export_declared_once_appears_in_the_magic_the_slash_and_the_cli() -> None:
    spec = command("export")
    assert spec is not None
    assert spec.fronts == set(FRONTS)
    magic = SUBCOMMANDS["export"].parser.format_help()
    assert "%cowork export" in magic
    assert "--force" in magic
    assert "replace the file if it exists" in magic
    assert "--format" not in magic  # the terminal's alone
    slash = next(c for c in SLASH_COMMANDS if c.name == "export")
    assert slash.usage == "/export [PATH] [--force]"
    assert slash.description == spec.summary
    cli = _cli_commands()["export"].format_help()
    assert "--format" in cli
    assert "-o FILE, --output FILE" in cli
    assert "--force" in cli
    assert "replace the file if it exists" in cli
    assert "loom-jupyter export analysis.ipynb --format md -o session.md" in cli


@dataclass(frozen=True)
class GreetArgs:
    who: str = arg("whom to greet", positional=True, metavar="WHO")
    times: int = arg("how often", default=1, metavar="N")
    loud: bool = arg("shout", default=False)
    tone: Literal["warm", "dry"] = arg("how", default="warm", fronts=["magic", "cli"])


def test_a_new_commands_dataclass_makes_every_fronts_parser() -> None:
    spec = Spec(
        "greet", "say hello", "Say hello to WHO.", lambda: GreetArgs, None, frozenset(FRONTS)
    )
    assert spec.usage("sidebar") == "/greet WHO [--times N] [--loud]"
    assert spec.usage("magic") == "%cowork greet WHO [--times N] [--loud] [--tone TONE]"
    assert spec.required
    assert parse_words(spec, "sidebar", "Ada --times 2 --loud") == GreetArgs("Ada", 2, True)
    with pytest.raises(UsageProblem, match=r"^Usage: `/greet WHO \[--times N\] \[--loud\]`$"):
        parse_words(spec, "sidebar", "Ada --tone dry")  # not offered in the sidebar
    for front in ("magic", "cli"):
        parser = argparse.ArgumentParser(exit_on_error=False)
        add_arguments(parser, GreetArgs, front)
        parsed = from_namespace(GreetArgs, parser.parse_args(["Ada", "--tone", "dry"]))
        assert parsed == GreetArgs("Ada", 1, False, "dry")


def test_a_choice_out_of_range_names_the_choices() -> None:
    spec = command("effort")
    assert spec is not None
    with pytest.raises(UsageProblem) as bad:
        parse_words(spec, "sidebar", "extreme")
    assert str(bad.value) == "Usage: /effort default|low|medium|high|xhigh|max (got 'extreme')."


# -- availability: the same refusal from each front ---------------------------------------


class _Session:
    def __init__(self, running: str | None) -> None:
        self.running = running

    def running_now(self) -> str | None:
        return self.running


class _Host:
    """A host whose session is busy (or not open at all)."""

    def __init__(self, session: _Session | None) -> None:
        self.session = session

    async def session_async(self) -> _Session:
        if self.session is None:
            raise LoomError("loom is still opening this notebook's archive; try again")
        return self.session


class _Cowork:
    """What the magic's front needs of a coworker, over a fake host."""

    def __init__(self, host: _Host, shell: InteractiveShell) -> None:
        self.host, self.shell, self.main, self.in_kernel = host, shell, None, False

    def run(self, coro: Any) -> Any:
        return asyncio.run(coro)


def _refusals(host: _Host, shell: InteractiveShell, name: str, words: str) -> dict[str, str]:
    spec = command(name)
    assert spec is not None
    slash = asyncio.run(run_command(host, name, words))  # type: ignore[arg-type]
    assert slash.ok is False
    with pytest.raises(LoomError) as magic:
        run_in_cell(_Cowork(host, shell), spec, parse_words(spec, "magic", words))  # type: ignore[arg-type]
    return {"sidebar": slash.text, "magic": str(magic.value)}


@pytest.mark.parametrize("running", ["A turn", "A delegation"])
def test_a_busy_refusal_is_the_same_from_the_cell_and_the_sidebar(
    shell: InteractiveShell, running: str
) -> None:
    said = _refusals(_Host(_Session(running)), shell, "rebuild", "total --yes")
    what = running.lower()
    assert said == {
        front: f"Not now: {what} is running. Wait for it to end (or stop it), then send the "
        f"{typed} again."
        for front, typed in (("sidebar", "/rebuild"), ("magic", "%cowork rebuild"))
    }


def test_no_session_is_the_same_refusal_from_the_cell_and_the_sidebar(
    shell: InteractiveShell,
) -> None:
    said = _refusals(_Host(None), shell, "rebuild", "total")
    assert (
        said["sidebar"]
        == said["magic"]
        == ("loom is still opening this notebook's archive; try again")
    )


def test_a_command_that_needs_a_session_is_refused_by_an_archive_alone(tmp_path: Path) -> None:
    spec = command("cost")
    assert spec is not None
    assert spec.needs_session
    archive_only = ArchiveContext(tmp_path / "a.sqlite", Settings())
    with pytest.raises(LoomError, match=r"^loom-jupyter cost needs a kernel"):
        asyncio.run(availability(spec, archive_only))
    recover = command("recover")
    assert recover is not None
    assert recover.runs_without_archive
    assert not recover.needs_session
    asyncio.run(availability(recover, archive_only))  # no refusal


def test_a_switch_is_left_to_the_session_guard() -> None:
    """The session refuses switches itself (SessionBusyError): the registry marks them so and
    adds no second rule."""
    for name in ("new", "fork", "resume", "close", "delete"):
        spec = command(name)
        assert spec is not None, name
        assert spec.busy == "switch", name
    spec = command("new")
    assert spec is not None
    context = HostContext(_Host(_Session("A turn")), "magic")  # type: ignore[arg-type]
    asyncio.run(availability(spec, context))  # not refused here: the session says it


def test_the_cell_and_the_sidebar_refuse_a_switch_in_the_sessions_words(
    cowork: Callable[[str], str], shell: InteractiveShell
) -> None:
    from loom_jupyter.jupyter.coworker.registry import current

    cowork("hello")
    cw = current(shell)
    cw.run(_busy(cw.host))
    magic = cowork("new")
    assert magic.startswith("loom: A turn is running: wait for it to finish or press Stop, then")
    with pytest.raises(LoomError) as sidebar:
        cw.run(cw.host.switches.switch("new"))
    assert magic.strip() == f"loom: {sidebar.value}"


async def _busy(host: Any) -> None:
    (await host.session_async()).add_busy_probe(lambda: "A turn")


# -- one report, three renderings ----------------------------------------------------------

REPORT = Report(
    title="To rebuild `total`: 1 step(s), about 0.1 s.",
    parts=(
        Table(("#", "first line", "n"), ((1, "total = a | b", 1200),), "one step", "><>", (1,)),
        Block("total = a | b", language="python", heading="1. cell [2]"),
        Items("Cannot rebuild:", (("gone", "no archived execution sets it"),)),
        Note("Type `/rebuild total --yes` to run them."),
    ),
    ok=False,
)


def test_the_sidebar_gets_the_report_as_markdown() -> None:
    assert to_markdown(REPORT) == (
        "**To rebuild `total`: 1 step(s), about 0.1 s.**\n\n"
        "| # | first line | n |\n|---:|---|---:|\n| 1 | `total = a \\| b` | 1,200 |\n\none step\n\n"
        "1. cell [2]:\n\n```python\ntotal = a | b\n```\n\n"
        "Cannot rebuild:\n\n- `gone`: no archived execution sets it\n\n"
        "Type `/rebuild total --yes` to run them."
    )


def test_the_cell_shows_the_report_with_its_table_and_text(
    capsys: pytest.CaptureFixture[str],
) -> None:
    show_report(REPORT, rich=False)
    out = capsys.readouterr().out
    assert out.startswith("To rebuild `total`: 1 step(s), about 0.1 s.\n")
    assert "one step\n#  first line     n" in out  # show_table's text form, caption first
    assert "1  total = a | b  1,200" in out
    assert "1. cell [2]:\n    total = a | b\n" in out
    assert "Cannot rebuild: gone: no archived execution sets it\n" in out


def test_the_terminal_prints_the_report_with_its_aligned_tables() -> None:
    text = report_text(REPORT)
    assert text.startswith("To rebuild `total`: 1 step(s), about 0.1 s.\n\n")
    assert "#  first line   " in text
    assert "\n1  total = a | b  " in text
    assert text.split("\n")[4].endswith(" 1,200")  # right-aligned, as the report says
    assert "\none step\n" in text
    assert "Cannot rebuild: gone: no archived execution sets it" in text
