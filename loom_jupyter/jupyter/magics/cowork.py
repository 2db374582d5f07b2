"""``%cowork`` and ``%%cowork``.

``%cowork TEXT`` / ``%%cowork`` send a prompt, stream the answer into the cell
and return when the turn is done (so nbclient and papermill runs work). A
kernel interrupt stops the turn; its partial answer is archived as
interrupted. The subcommands are listed by ``%cowork --help``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class, no_var_expand
from typing_extensions import assert_never

from loom_jupyter.errors import LoomError
from loom_jupyter.jupyter.magics.commands import SUBCOMMANDS

if TYPE_CHECKING:
    from collections.abc import Callable

    from loom_jupyter.host.commands.spec import Spec
    from loom_jupyter.jupyter.coworker.runtime import KernelCowork

__all__ = [
    "USAGE",
    "BadArgument",
    "CoworkMagics",
    "Misspelled",
    "Parsed",
    "keep_question_marks",
    "parse_line",
]


def _usage() -> str:
    width = max(len(name) for name in SUBCOMMANDS)
    commands = [f"  %cowork {n.ljust(width)}  {c.summary()}" for n, c in SUBCOMMANDS.items()]
    return "\n".join(
        [
            "Talk to your notebook coworker.",
            "",
            "  %cowork TEXT             send a prompt; the answer streams into the cell",
            "  %%cowork                 (cell magic) the whole cell is the prompt",
            "  %cowork -- TEXT          always a prompt, even if TEXT starts with a subcommand",
            "  %cowork --notebook PATH  use PATH's archive (when the notebook is not detected)",
            "",
            "Subcommands (each takes --help):",
            *commands,
            "",
            "A line is a subcommand only when its first word is one of these and the rest",
            "of the line fits that subcommand's arguments; otherwise it is a prompt. Nothing",
            "is sent when the first word is a slip of a subcommand's name and the rest fits",
            "it (%cowork sesions: did you mean ...?), or when a subcommand's words have a",
            "value it does not take (%cowork approval yolo): the cell says which it takes.",
            "A kernel interrupt stops a running turn (its partial answer is kept).",
            "Environment: ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, LOOM_MODEL, LOOM_APPROVAL.",
        ]
    )


USAGE = _usage()


@dataclass(frozen=True)
class ShowUsage:
    """``%cowork`` alone or with ``--help``: the usage text."""

    kind: Literal["usage"] = "usage"


@dataclass(frozen=True)
class Prompt:
    """A message for the coworker."""

    text: str
    kind: Literal["prompt"] = "prompt"


@dataclass(frozen=True)
class SubcommandCall:
    """A subcommand with its parsed arguments (its argument dataclass)."""

    name: str
    args: Any
    kind: Literal["command"] = "command"


@dataclass(frozen=True)
class CommandHelp:
    """A subcommand's help, after ``text`` (why it is shown) if any."""

    name: str
    text: str = ""
    kind: Literal["command_help"] = "command_help"


@dataclass(frozen=True)
class Misspelled:
    """A slip of a subcommand's name whose other words fit it (``%cowork sesions``): the
    cell says "did you mean …" (``text``) and sends nothing."""

    name: str
    text: str
    kind: Literal["misspelled"] = "misspelled"


@dataclass(frozen=True)
class BadArgument:
    """A subcommand in its shape with a value it does not take (``%cowork approval yolo``):
    the cell names the values it takes (``text``) and sends nothing."""

    name: str
    text: str
    kind: Literal["bad_argument"] = "bad_argument"


@dataclass(frozen=True)
class NotebookSwitch:
    """``--notebook PATH [rest]``: name the notebook, then run ``rest``."""

    text: str
    kind: Literal["notebook"] = "notebook"


Parsed: TypeAlias = (
    ShowUsage | Prompt | SubcommandCall | CommandHelp | Misspelled | BadArgument | NotebookSwitch
)
"""What a ``%cowork`` line asks for."""


def parse_line(line: str) -> Parsed:
    """Apply the subcommand rule (see :data:`USAGE`)."""
    text = line.strip()
    if not text or text in {"-h", "--help"}:
        return ShowUsage()
    if text == "--" or text.startswith("-- "):
        return Prompt(text[2:].strip())
    if text.startswith("--notebook"):
        return NotebookSwitch(text[len("--notebook") :].strip())
    first, _, rest = text.partition(" ")
    rest = rest.strip()
    command = SUBCOMMANDS.get(first)
    if command is None:
        return _misspelled(text, first, rest)
    if rest in {"-h", "--help"}:
        return CommandHelp(first)
    if not rest and command.required:
        return CommandHelp(first, f"{first} needs an argument.")
    try:
        return SubcommandCall(first, command.parse(rest))
    except (UsageError, ValueError):
        return _bad_value(text, command.spec, rest)


def _misspelled(text: str, first: str, rest: str) -> Misspelled | Prompt:
    """A slip of a subcommand's name whose rest fits it; else the prompt ``text``."""
    from loom_jupyter.host.commands.checking import misspelling, misspelling_text

    meant = misspelling("magic", first, rest)
    if meant is None:
        return Prompt(text)
    return Misspelled(meant.name, misspelling_text("cowork", text, meant.name, rest))


def _bad_value(text: str, spec: Spec[Any], rest: str) -> BadArgument | Prompt:
    """A subcommand's shape with a value it does not take; else the prompt ``text``."""
    from loom_jupyter.host.commands.checking import BadValue, bad_value_text, read

    reading = read(spec, "magic", rest)
    if not isinstance(reading, BadValue):
        return Prompt(text)
    return BadArgument(spec.name, bad_value_text("cowork", text, reading.problem))


def keep_question_marks(lines: list[str]) -> list[str]:
    """Input transformer: ``%cowork is df sorted?`` is a prompt, not IPython help.

    IPython reads a trailing ``?`` as "show help for the last word". Runs
    before that rule (``input_transformers_cleanup``) and turns such lines
    into the magic call they would be anyway. ``%cowork?`` alone still shows help.
    """
    out = []
    for line in lines:
        body = line.lstrip()
        indent = line[: len(line) - len(body)]
        text = body.rstrip("\n")
        if text.startswith("%cowork ") and text.rstrip().endswith("?"):
            argument = text[len("%cowork ") :].strip()
            ending = "\n" if line.endswith("\n") else ""
            line = f"{indent}get_ipython().run_line_magic('cowork', {argument!r}){ending}"
        out.append(line)
    return out


@magics_class
class CoworkMagics(Magics):
    """The ``%cowork`` line and cell magics."""

    def __init__(self, shell: Any, get_cowork: Callable[[str | None], KernelCowork]) -> None:
        super().__init__(shell)
        self._get_cowork = get_cowork

    @line_magic
    @no_var_expand  # the person's words verbatim: no {expr}/$name expansion (quadratic on big text)
    def cowork(self, line: str) -> None:
        """Talk to your notebook coworker; `%cowork --help` lists everything."""
        self._dispatch(parse_line(line))

    @cell_magic("cowork")  # type: ignore[arg-type]  # IPython's decorator typing rejects a name
    def cowork_cell(self, line: str, cell: str) -> None:
        """The whole cell is the prompt (the first line may add text or --notebook PATH)."""
        head = line.strip()
        if head.startswith("--notebook"):
            path, _, head = head[len("--notebook") :].strip().partition(" ")
            self._dispatch(NotebookSwitch(path))
        head = head[2:].strip() if head.startswith("--") else head
        prompt = "\n".join(part for part in (head, cell.strip()) if part)
        self._dispatch(Prompt(prompt) if prompt else ShowUsage())

    def _dispatch(self, parsed: Parsed) -> None:
        try:
            self._run(parsed)
        except LoomError as exc:
            print(f"loom: {exc}")

    def _run(self, parsed: Parsed) -> None:
        match parsed:
            case ShowUsage():
                print(USAGE)
            case CommandHelp():
                reason = parsed.text + "\n" if parsed.text else ""
                print(reason + SUBCOMMANDS[parsed.name].parser.format_help())
            case NotebookSwitch():
                path, _, rest = parsed.text.partition(" ")
                if not path:
                    raise LoomError(
                        "--notebook needs a path, e.g. %cowork --notebook analysis.ipynb"
                    )
                print(self._get_cowork(path).banner())
                if rest.strip():
                    self._run(parse_line(rest))
            case SubcommandCall():
                command = SUBCOMMANDS[parsed.name]
                if command.local is None:  # through the registry, on the engine loop
                    from loom_jupyter.jupyter.magics.front import run_in_cell

                    run_in_cell(self._get_cowork(None), command.spec, parsed.args)
                    return
                local = command.local
                target: Any = self.shell if local.on_shell else self._get_cowork(None)
                local.resolve()(target, parsed.args)
            case Misspelled() | BadArgument():
                print(parsed.text)
            case Prompt():
                self._prompt(parsed.text)
            case _:
                assert_never(parsed)

    def _prompt(self, text: str) -> None:
        cowork = self._get_cowork(None)
        problem = cowork.missing_key()  # in the words of this front (a cell, a console)
        if problem:
            print(problem)
            return
        outcome = cowork.send(text)  # the session keeps secrets out, for every front
        if outcome.error:
            print(f"loom: {outcome.error}")


CoworkMagics.cowork.__doc__ = USAGE  # `%cowork?` shows the same text as `%cowork --help`
