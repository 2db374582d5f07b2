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
import sys
from typing import TYPE_CHECKING

from loom_jupyter.cli.locate import UsageError
from loom_jupyter.controls import visible
from loom_jupyter.errors import LoomError

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["build_parser", "main"]

_SESSION_HELP = "a list number from `sessions` (1 = latest), a session id or an id prefix"


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``loom-jupyter``."""
    parser = argparse.ArgumentParser(
        prog="loom-jupyter",
        description="Browse, search, export and recover the conversations archived beside a "
        "notebook, and say where its variables came from.",
        epilog="Run `loom-jupyter COMMAND --help` for examples.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_sessions(commands)
    _add_show(commands)
    _add_search(commands)
    _add_export(commands)
    _add_provenance(commands)
    _add_recover(commands)
    _add_trust(commands)
    return parser


def _command(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    name: str,
    about: str,
    examples: str,
) -> argparse.ArgumentParser:
    sub = commands.add_parser(
        name,
        help=about,
        description=about,
        epilog=f"examples:\n{examples}\n",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub.add_argument(
        "notebook", metavar="NOTEBOOK", help="the .ipynb file (or its .sqlite archive)"
    )
    return sub


def _add_sessions(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    sub = _command(
        commands,
        "sessions",
        "List the notebook's sessions, most recently active first.",
        "  loom-jupyter sessions analysis.ipynb\n  loom-jupyter sessions analysis.ipynb --limit 5",
    )
    sub.add_argument("--limit", type=int, default=100, help="show at most N (default 100)")
    sub.add_argument(
        "--delegated",
        action="store_true",
        help="also list the sessions of %%delegate's sub-agents (hidden by default)",
    )


def _add_show(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    sub = _command(
        commands,
        "show",
        "Print a session's turns verbatim.",
        "  loom-jupyter show analysis.ipynb            # the latest session\n"
        "  loom-jupyter show analysis.ipynb 2          # the second in `sessions`\n"
        "  loom-jupyter show analysis.ipynb 3f9a --range 10:20",
    )
    sub.add_argument("session", nargs="?", metavar="SESSION", help=f"{_SESSION_HELP}")
    sub.add_argument("--range", metavar="A:B", help="only turns A..B (A:, :B or one number N)")


def _add_search(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    sub = _command(
        commands,
        "search",
        "Full-text search: the exact phrase first, then all words, then some; "
        "each match with the turns around it. NOTEBOOK may be a folder: every notebook "
        "archive under it is searched.",
        "  loom-jupyter search analysis.ipynb 'merge the sales tables'\n"
        "  loom-jupyter search analysis.ipynb outlier --all-sessions --limit 20\n"
        "  loom-jupyter search . 'churn threshold'      # every notebook under this folder",
    )
    sub.add_argument("query", metavar="QUERY", help="any words; punctuation is ignored")
    sub.add_argument("--session", metavar="SESSION", help=f"{_SESSION_HELP} (default: latest)")
    sub.add_argument("--all-sessions", action="store_true", help="search every session")
    sub.add_argument("--limit", type=int, default=10, help="at most N hits (default 10)")


def _add_export(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    sub = _command(
        commands,
        "export",
        "Write a whole session as Markdown or JSON.",
        "  loom-jupyter export analysis.ipynb --format md -o session.md\n"
        "  loom-jupyter export analysis.ipynb 2 --format json | jq '.turns | length'",
    )
    sub.add_argument("session", nargs="?", metavar="SESSION", help=f"{_SESSION_HELP}")
    sub.add_argument("--format", choices=("md", "json"), default="md", help="default: md")
    sub.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")
    sub.add_argument(
        "--force", action="store_true", help="replace FILE if it exists (it is kept otherwise)"
    )


def _add_provenance(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    sub = _command(
        commands,
        "provenance",
        "Where a variable came from, by the executions the notebook's kernels archived (the "
        "person's cells and the agent's code): the one that last set NAME, its code and time, "
        "and the executions it depends on. Without NAME: every name the archive saw set, with "
        "what last set it.",
        "  loom-jupyter provenance analysis.ipynb\n"
        "  loom-jupyter provenance analysis.ipynb monthly_revenue",
    )
    sub.add_argument("name", nargs="?", metavar="NAME", help="a variable name")


def _add_recover(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    sub = _command(
        commands,
        "recover",
        "Rebuild a damaged archive: every session, turn, task and model call that can still be "
        "read is copied into a new archive in its place; the damaged file is kept beside it as "
        "<name>.damaged-<UTC time>. An intact archive is left as it is. Stop the notebook's "
        "kernel first (or run %%cowork recover in it).",
        "  loom-jupyter recover analysis.ipynb\n"
        "  loom-jupyter recover .loom/analysis.ipynb.sqlite\n"
        "  loom-jupyter recover analysis.ipynb --move-aside   # the file is not SQLite at all",
    )
    sub.add_argument(
        "--move-aside",
        action="store_true",
        help="when the file is not SQLite at all (nothing in it can be saved), keep it aside "
        "as <name>.damaged-<UTC time> so a new archive can start; without this flag such a "
        "file is left where it is",
    )


def _add_trust(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    about = (
        "Show what a notebook's folder asks Loom for — each MCP server's command line or URL "
        "and the approval it wants, approval and web settings, instruction files — and "
        "whether you trust it; in a terminal, then ask. Until trusted none of it is used "
        "(its approval and web settings may only make yours stricter). Kernels follow the "
        "decision from their next turn."
    )
    sub = commands.add_parser(
        "trust",
        help="show what a folder asks for, and trust it (or not)",
        description=about,
        epilog="examples:\n  loom-jupyter trust analysis.ipynb\n"
        "  loom-jupyter trust ~/src/cloned-repo --yes\n"
        "  loom-jupyter trust ~/src/cloned-repo --revoke\n",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub.add_argument("path", metavar="PATH", help="a notebook, or the folder it is in")
    sub.add_argument("--yes", action="store_true", help="trust the folder as it is now")
    sub.add_argument("--revoke", action="store_true", help="forget the decision")


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``loom-jupyter``; returns the exit status."""
    from loom_jupyter.cli.commands import run_command

    args = build_parser().parse_args(argv)
    try:
        output = _trust(args) if args.command == "trust" else asyncio.run(run_command(args))
    except UsageError as error:
        print(f"loom-jupyter: {visible(str(error))}", file=sys.stderr)
        return 2
    except LoomError as error:
        print(f"loom-jupyter: {visible(str(error))}", file=sys.stderr)
        return 1
    print(visible(output))  # archived text never drives the terminal
    return 0


def _trust(args: argparse.Namespace) -> str:
    from loom_jupyter.cli.trust import run_trust

    return run_trust(args)
