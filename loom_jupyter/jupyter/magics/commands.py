"""The ``%cowork`` subcommands, generated from the command registry.

Each command of :data:`~loom_jupyter.host.commands.registry.COMMANDS` that the magic
offers becomes a :class:`Subcommand`: an IPython ``MagicArgumentParser`` made from its
argument dataclass (its ``--help``), and how it runs: through the registry on the
engine loop (its report shown by :mod:`.front`), or, for the few the cell answers itself
(``login``, ``recover``, ``status``...), by a handler here, on the main thread.

A line is a subcommand when its first word names one and the rest parses with that
subcommand's options (``%cowork sessions``, ``%cowork resume 2``); a slip of a name whose
rest fits, or a subcommand's shape with a value it does not take, is answered and sends
nothing (:mod:`loom_jupyter.host.commands.checking`); anything else is a prompt for the
model. ``%cowork -- text`` always sends a prompt. Every subcommand takes ``-h``/``--help``.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from IPython.core.magic_arguments import MagicArgumentParser

from loom_jupyter.host.commands.registry import commands_for
from loom_jupyter.host.commands.spec import Spec, add_arguments

if TYPE_CHECKING:
    from collections.abc import Callable

    from loom_jupyter.host.commands.arguments import (
        AdoptArgs,
        LoginArgs,
        NoArgs,
        RecoverArgs,
        TrustArgs,
    )
    from loom_jupyter.jupyter.coworker.runtime import KernelCowork

__all__ = ["SUBCOMMANDS", "CellHandler", "Subcommand"]


@dataclass(frozen=True)
class CellHandler:
    """A command the cell answers itself: one of the functions below, each importing its
    module when it first runs (``%load_ext`` stays light), called with the coworker (or the
    shell) and the parsed arguments."""

    run: Callable[[Any, Any], None]
    on_shell: bool = False
    """It gets the shell: it must run even when loom cannot open."""

    def resolve(self) -> Callable[[Any, Any], None]:
        """The handler function."""
        return self.run


def _adopt(cw: KernelCowork, args: AdoptArgs) -> None:
    from loom_jupyter.jupyter.magics import reports

    reports.adopt(cw, args)


def _status(cw: KernelCowork, args: NoArgs) -> None:
    from loom_jupyter.jupyter.magics import reports

    reports.status(cw, args)


def _recover(shell: Any, args: RecoverArgs) -> None:
    from loom_jupyter.jupyter.magics import recover

    recover.recover(shell, args)


def _trust(cw: KernelCowork, args: TrustArgs) -> None:
    from loom_jupyter.jupyter.magics import trust

    trust.trust(cw, args)


def _login(shell: Any, args: LoginArgs) -> None:
    from loom_jupyter.jupyter.magics import login

    login.login(shell, args)


def _logout(shell: Any, args: NoArgs) -> None:
    from loom_jupyter.jupyter.magics import login

    login.logout(shell, args)


_BY_THE_CELL: dict[str, CellHandler] = {
    "adopt": CellHandler(_adopt),
    "status": CellHandler(_status),
    "recover": CellHandler(_recover, on_shell=True),
    "trust": CellHandler(_trust),
    "login": CellHandler(_login, on_shell=True),
    "logout": CellHandler(_logout, on_shell=True),
}
"""The commands the registry marks answered by the magic (``by_front``), and their code."""


@dataclass
class Subcommand:
    """A subcommand: its declaration, its parser (for ``--help`` and arguments, made on
    first use: ``%load_ext`` builds none) and, when the cell answers it, its handler."""

    spec: Spec[Any]
    local: CellHandler | None = None
    _parser: MagicArgumentParser | None = None

    @property
    def parser(self) -> MagicArgumentParser:
        if self._parser is None:
            parser = MagicArgumentParser(
                prog=f"%cowork {self.spec.name}",
                description=self.spec.about,
                formatter_class=argparse.HelpFormatter,
            )
            add_arguments(parser, self.spec.args, "magic")
            self._parser = parser
        return self._parser

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def required(self) -> bool:
        """Needs an argument: a bare word shows usage instead of prompting."""
        return self.spec.required

    def summary(self) -> str:
        """The first line of the description."""
        return self.spec.about.splitlines()[0]

    def parse(self, rest: str) -> Any:
        """The argument dataclass from the rest of the line (IPython's ``UsageError`` when
        it does not fit)."""
        from loom_jupyter.host.commands.spec import from_namespace

        return from_namespace(self.spec.args, self.parser.parse_argstring(rest))


def _subcommand(spec: Spec[Any]) -> Subcommand:
    local = _BY_THE_CELL.get(spec.name) if "magic" in spec.by_front else None
    if "magic" in spec.by_front and local is None:
        raise LookupError(f"%cowork {spec.name} is answered by the cell, which has no handler")
    return Subcommand(spec, local)


SUBCOMMANDS: dict[str, Subcommand] = {
    spec.name: _subcommand(spec) for spec in commands_for("magic")
}
"""Every ``%cowork`` subcommand, in the registry's order."""
