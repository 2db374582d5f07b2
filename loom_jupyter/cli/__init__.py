"""``loom-jupyter``: read a notebook's conversation archive from the terminal.

Works without Jupyter or a kernel: it opens ``<dir>/.loom/<notebook>.sqlite``
directly, or the notebook's archive under ``archive_dir`` when that is set
(``LOOM_ARCHIVE_DIR``, ``KERNEL_LOOM_ARCHIVE_DIR`` or the person's loom.yaml, as in the
kernel); ``recover`` rebuilds a damaged one. Exit status 0 on success, 2 when
the notebook, archive or session is not there (or the arguments are wrong), 1
when the archive cannot be read (or recovered).
"""

from __future__ import annotations

import argparse
import asyncio
import shlex
import sys
from typing import TYPE_CHECKING, Any, NoReturn

from loom_jupyter.cli.locate import UsageError
from loom_jupyter.controls import visible
from loom_jupyter.errors import LoomError
from loom_jupyter.host.commands.registry import commands_for
from loom_jupyter.host.commands.spec import Spec, UsageProblem, add_arguments

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``loom-jupyter``."""
    parser = argparse.ArgumentParser(
        prog="loom-jupyter",
        description="Browse, search, export and recover the conversations archived beside a "
        "notebook, say where its variables came from, and measure Loom on notebook tasks.",
        epilog="Run `loom-jupyter COMMAND --help` for examples.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for spec in commands_for("cli"):  # the command registry's, declared once
        _add_command(commands, spec)
    _add_mcp(commands)
    from loom_jupyter.cli.eval import add_eval

    add_eval(commands)
    return parser


def _add_command(
    commands: argparse._SubParsersAction[argparse.ArgumentParser], spec: Spec[Any]
) -> None:
    """A subcommand from the registry: NOTEBOOK (PATH for ``trust``), then the arguments
    the command's dataclass gives the terminal."""
    about = spec.cli_about or spec.about
    sub = commands.add_parser(
        spec.name,
        help=about,
        description=about,
        epilog=f"examples:\n{spec.examples}\n" if spec.examples else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    if spec.name == "trust":  # a folder or a notebook: no archive needed
        sub.add_argument("path", metavar="PATH", help="a notebook, or the folder it is in")
    else:
        sub.add_argument(
            "notebook", metavar="NOTEBOOK", help="the .ipynb file (or its .sqlite archive)"
        )
    add_arguments(sub, spec.args, "cli")


def _add_mcp(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    about = (
        "A stdio MCP server for an outside agent (Claude Code, any MCP client): Loom's tools "
        "in the live kernel of a notebook open on a running Jupyter Server, each call approved, "
        "archived and shown in the Loom sidebar as Loom's own are. It talks to the kernel only "
        "through Jupyter Server's authenticated kernel API; it opens no port."
    )
    sub = commands.add_parser(
        "mcp",
        help="serve Loom's tools to an outside agent over MCP (stdio)",
        description=about,
        epilog="examples:\n  claude mcp add loom -- loom-jupyter mcp\n"
        "  loom-jupyter mcp --notebook analysis.ipynb\n"
        "  loom-jupyter mcp --server-url http://127.0.0.1:8888/base/ --token TOKEN\n",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub.add_argument(
        "--server-url",
        metavar="URL",
        help="the Jupyter Server (with its base path, if any); default: the running server "
        "found in Jupyter's runtime folder whose root holds the notebook, else the newest",
    )
    sub.add_argument(
        "--token", metavar="TOKEN", help="its token (default: the runtime file's, or JUPYTER_TOKEN)"
    )
    sub.add_argument(
        "--notebook",
        metavar="PATH",
        help="the notebook, as the server names it or a real path under its root; default: "
        "the only one open, else the most recently active",
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``loom-jupyter``; returns the exit status."""
    from loom_jupyter.cli.commands import run_command

    words = list(sys.argv[1:] if argv is None else argv)
    slip = _misspelled(words)
    if slip:  # the rule every front follows (issue 40.1): a slip is named, not guessed at
        print(f"loom-jupyter: {visible(slip)}", file=sys.stderr)
        return 2
    args = build_parser().parse_args(words)
    if args.command == "mcp":  # a server on stdio: it prints nothing of its own
        from loom_jupyter.outside.server import serve

        return serve(args.server_url, args.token, args.notebook)
    if args.command == "eval":  # runs kernels; prints its own table
        from loom_jupyter.cli.eval import run_eval

        return run_eval(args)
    try:
        output = _trust(args) if args.command == "trust" else asyncio.run(run_command(args))
    except (UsageError, UsageProblem) as error:
        print(f"loom-jupyter: {visible(str(error))}", file=sys.stderr)
        return 2
    except LoomError as error:
        print(f"loom-jupyter: {visible(str(error))}", file=sys.stderr)
        return 1
    if output:
        print(visible(output))  # archived text never drives the terminal
    return 0


def _misspelled(words: list[str]) -> str:
    """The "did you mean …" when the first word is a slip of a command's name and the
    rest fits it (``loom-jupyter sesions analysis.ipynb``); ``""`` otherwise."""
    from loom_jupyter.host.commands.checking import misspelling, misspelling_text

    if not words or words[0].startswith("-") or words[0] in _names():
        return ""
    first, rest = words[0], shlex.join(words[1:])
    meant = misspelling("cli", first, rest, fits=_fits)
    if meant is None:
        return ""
    return f"no command `{first}`. " + misspelling_text("cli", first, meant.name, rest)


def _names() -> set[str]:
    return {spec.name for spec in commands_for("cli")} | {"mcp", "eval"}


def _fits(spec: Spec[Any], rest: str) -> bool:
    """Whether ``rest`` is NOTEBOOK (PATH for ``trust``) and ``spec``'s arguments, any values."""
    from loom_jupyter.host.commands.checking import words_of

    parser = _Raising(prog=f"loom-jupyter {spec.name}")
    parser.add_argument("notebook")
    add_arguments(parser, spec.args, "cli", relaxed=True)
    try:
        parser.parse_args(words_of(rest))
    except UsageProblem:
        return False
    return True


class _Raising(argparse.ArgumentParser):
    """argparse that raises :class:`UsageProblem` instead of exiting (a shape check)."""

    def error(self, message: str) -> NoReturn:
        raise UsageProblem(message)


def _trust(args: argparse.Namespace) -> str:
    from loom_jupyter.cli.trust import run_trust

    return run_trust(args)
