"""The commands' arguments: one frozen dataclass per command (see :func:`.spec.arg`).

Imported when a command is first parsed or listed with its arguments, not by
``%load_ext`` (its dataclasses cost more than the table itself).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from loom_jupyter.host.commands.fields import arg

__all__ = [
    "AdoptArgs",
    "ApprovalArgs",
    "DelegateArgs",
    "DeleteArgs",
    "EffortArgs",
    "ExportArgs",
    "ForkArgs",
    "LoginArgs",
    "McpArgs",
    "ModelArgs",
    "NameArgs",
    "NoArgs",
    "RebuildArgs",
    "RecoverArgs",
    "SearchArgs",
    "SessionsArgs",
    "ShowArgs",
    "TargetArgs",
    "ThinkingArgs",
    "TrustArgs",
]

EffortLevel = Literal["default", "low", "medium", "high", "xhigh", "max"]

_SESSION_HELP = "a list number from `sessions` (1 = latest), a session id or an id prefix"
_TARGET_HELP = "session number or id"


@dataclass(frozen=True)
class NoArgs:
    """No arguments."""


@dataclass(frozen=True)
class SessionsArgs:
    limit: int = arg("show at most N (default 100)", default=100, fronts=["cli"], metavar="N")
    delegated: bool = arg(
        "also list the sessions of %%delegate's sub-agents (hidden by default)",
        default=False,
        fronts=["cli"],
    )


@dataclass(frozen=True)
class ShowArgs:
    session: str | None = arg(_SESSION_HELP, default=None, positional=True, metavar="SESSION")
    range: str | None = arg("only turns A..B (A:, :B or one number N)", default=None, metavar="A:B")


@dataclass(frozen=True)
class TargetArgs:
    target: str = arg(_TARGET_HELP, positional=True, metavar="target")


@dataclass(frozen=True)
class ForkArgs:
    at: int | None = arg("last turn to copy", default=None, metavar="N", fronts=["magic"])


@dataclass(frozen=True)
class DeleteArgs:
    target: str = arg(_TARGET_HELP, positional=True, metavar="target")
    yes: bool = arg("do not ask for confirmation", default=False)


@dataclass(frozen=True)
class AdoptArgs:
    notebook: str = arg(
        "the gone notebook's file name, like Untitled.ipynb", positional=True, metavar="notebook"
    )


@dataclass(frozen=True)
class RecoverArgs:
    move_aside: bool = arg(
        "when the file is not SQLite at all (nothing in it can be saved), keep it aside as "
        "<name>.damaged-<UTC time> so a new archive can start; without this flag such a file "
        "is left where it is",
        default=False,
    )


@dataclass(frozen=True)
class SearchArgs:
    query: str = arg("words to look for; punctuation is ignored", rest=True, metavar="WORDS")
    all: bool = arg(
        "search every session of this notebook",
        default=False,
        flags=["--all-sessions"],
        fronts=["magic", "cli"],
    )
    all_notebooks: bool = arg(
        "search every notebook of the project (the folder holding .git)",
        default=False,
        fronts=["magic"],
    )
    session: str | None = arg(
        f"{_SESSION_HELP} (default: latest)", default=None, metavar="SESSION", fronts=["cli"]
    )
    limit: int = arg(
        "at most N hits (default 10)", default=10, metavar="N", fronts=["magic", "cli"]
    )


@dataclass(frozen=True)
class ExportArgs:
    path: str | None = arg(
        "file to write (default: beside the notebook)",
        default=None,
        positional=True,
        metavar="PATH",
        fronts=["magic", "sidebar"],
    )
    session: str | None = arg(
        _SESSION_HELP, default=None, positional=True, metavar="SESSION", fronts=["cli"]
    )
    format: Literal["md", "json"] = arg("default: md", default="md", fronts=["cli"])
    output: str | None = arg(
        "write here instead of stdout", default=None, flags=["-o"], metavar="FILE", fronts=["cli"]
    )
    force: bool = arg("replace the file if it exists (it is kept otherwise)", default=False)


@dataclass(frozen=True)
class ModelArgs:
    name: str | None = arg("model name or alias", default=None, positional=True, metavar="NAME")
    refresh: bool = arg("ask the Models API again now", default=False, fronts=["magic"])


@dataclass(frozen=True)
class EffortArgs:
    level: EffortLevel | None = arg(default=None, positional=True, metavar="LEVEL")  # noqa: RUF009


@dataclass(frozen=True)
class ThinkingArgs:
    mode: Literal["on", "off"] | None = arg(default=None, positional=True, metavar="mode")


@dataclass(frozen=True)
class ApprovalArgs:
    mode: Literal["ask", "auto", "read-only"] | None = arg(
        default=None, positional=True, metavar="mode"
    )
    forget: bool = arg(
        'forget every "Always" answer of this session (those calls ask again)', default=False
    )


@dataclass(frozen=True)
class TrustArgs:
    yes: bool = arg("trust the folder as it is now", default=False, fronts=["magic", "cli"])
    revoke: bool = arg("forget the decision", default=False, fronts=["magic", "cli"])
    with_approval: bool = arg(
        "with --yes: also let the folder loosen approvals (its approval: auto, or a server's),"
        " so Loom may run code and commands without asking you",
        default=False,
        fronts=["magic", "cli"],
    )


@dataclass(frozen=True)
class LoginArgs:
    logout: bool = arg("remove the saved key instead", default=False)


@dataclass(frozen=True)
class NameArgs:
    name: str | None = arg("variable name", default=None, positional=True, metavar="NAME")


@dataclass(frozen=True)
class RebuildArgs:
    names: list[str] = arg("variable names", positional=True, metavar="NAME")  # noqa: RUF009
    yes: bool = arg("also run steps with side effects", default=False)


@dataclass(frozen=True)
class McpArgs:
    restart: str | None = arg("start this server again", default=None, metavar="NAME")


@dataclass(frozen=True)
class DelegateArgs:
    goal: str = arg("the goal, in your words", default="", rest=True, metavar="GOAL")
