"""What an "Always" for a ``shell`` command allows (security review R6).

An "Always" must not cover a program the person never saw. ``git -c alias.x='!CMD' x``
runs CMD, ``env CMD``, ``xargs CMD``, ``find -exec CMD`` and ``python -c CODE`` run
whatever they are given, ``make`` and ``pytest`` run the folder's own code. So a scope
wider than one command line is given only to programs Loom knows run nothing else; the
tables below are that whole policy, as data:

- :data:`PLAIN`: a program scoped by its name ("`ls` commands"), with its arguments free
  but for its runner forms (``find -exec``): such a command is exact.
- :data:`SUBCOMMANDS`: a program scoped by its name and subcommand ("`git status`
  commands"), for the subcommands listed only, again with their runner forms
  (``git grep -O``, ``git rebase --exec``). A bare ``git``, another subcommand (an alias,
  ``git config``) and an option before the subcommand (``git -c``, ``git -C``) are exact.
- :data:`RUNNERS`: programs that run other programs, and what they run. An "Always" for
  one covers that exact command line; the button says why.

Anything else is exact too ("this exact command"): a program Loom does not know (it cannot
tell whether it runs others), a program named by a path (``./run.sh``) or after variables
(``GIT_DIR=x git``), and a command line that chains, pipes, redirects or substitutes
(``; & | < > ` $(``, a newline), expands a variable (``$``), does not parse
(:func:`shlex.split`), or leaves a wildcard or a brace unquoted where a runner form could
hide (a file named ``-exec`` matched by ``find . -name *``).

A scope is a key compared whole (:meth:`ApprovalPolicy._covered
<loom_jupyter.tools.approval.ApprovalPolicy._covered>`): ``shell:git status`` covers
``git status -s`` (the same key) and neither ``git statusx`` nor ``git -c … status``
(other keys); an exact command's key is the command line itself.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Final

from loom_jupyter.tools.guard import AlwaysScope

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["PLAIN", "RUNNERS", "SUBCOMMANDS", "RunnerForms", "Subcommands", "shell_scope"]

EXACT: Final = "this exact command"
"""The label of a scope that covers one command line."""


@dataclass(frozen=True)
class RunnerForms:
    """The arguments that make an otherwise scoped command start another program."""

    long: tuple[str, ...] = ()
    """Long options, without ``--``; an abbreviation counts (GNU tools and git accept
    ``--exe`` for ``--exec``)."""
    short: str = ""
    """Short option letters, found inside a cluster too (``-iO`` holds ``-O``)."""
    words: tuple[str, ...] = ()
    """Whole arguments (``find``'s ``-exec``)."""

    def found(self, args: list[str]) -> str | None:
        """The first runner form among ``args``, as written, or ``None``."""
        for arg in args:
            if arg in self.words:
                return arg
            if arg.startswith("--") and len(arg) > 2:
                name = arg[2:].split("=", 1)[0]
                if any(option.startswith(name) for option in self.long):
                    return arg.split("=", 1)[0]
            elif arg.startswith("-") and self.short and any(c in self.short for c in arg[1:]):
                return arg[:2] if arg[1] in self.short else arg
        return None

    def shown(self) -> str:
        """The forms in words: ``-exec, -execdir, -ok or -okdir``."""
        names = [*self.words, *(f"-{c}" for c in self.short), *(f"--{o}" for o in self.long)]
        return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"

    def __bool__(self) -> bool:
        return bool(self.long or self.short or self.words)


NONE: Final = RunnerForms()


@dataclass(frozen=True)
class Subcommands:
    """A program with subcommands: those an "Always" may cover, and why the rest cannot."""

    scoped: Mapping[str, RunnerForms]
    """Subcommands scoped with their arguments (their runner forms aside)."""
    running: Mapping[str, str] = field(default_factory=dict)
    """Subcommands known to run other programs, and what they run (the button says)."""
    options: Mapping[str, str] = field(default_factory=dict)
    """Options before the subcommand known to make it run other programs, and how (the
    button says). Any option there makes a command exact, these with their reason."""


def _table(names: str, each: RunnerForms = NONE, **forms: RunnerForms) -> Mapping[str, RunnerForms]:
    """``names`` (space-separated), each with the runner forms ``each``, and others with
    their own ``forms`` (``ls_remote`` names ``ls-remote``)."""
    table = dict.fromkeys(names.split(), each)
    table.update({name.replace("_", "-"): f for name, f in forms.items()})
    return MappingProxyType(table)


_RUNS_ANYTHING = "runs any command"
_RUNS_NAMED = "runs the program it is given"
_RUNS_FOLDER = "runs the folder's build or task code"

RUNNERS: Final[Mapping[str, str]] = MappingProxyType(
    {
        # interpreters: their arguments are code, or a script the agent can change
        "python": "runs any Python code",  # also python3, python3.12, pypy3 (_base_name)
        "pypy": "runs any Python code",
        "ipython": "runs any Python code",
        "jupyter": "runs notebooks, kernels and servers",
        "perl": "runs any Perl code",
        "ruby": "runs any Ruby code",
        "node": "runs any JavaScript code",
        "deno": "runs any JavaScript code",
        "bun": "runs any JavaScript code and package scripts",
        "php": "runs any PHP code",
        "lua": "runs any Lua code",
        "R": "runs any R code",
        "Rscript": "runs any R code",
        "julia": "runs any Julia code",
        "java": "runs any Java program",
        "tclsh": "runs any Tcl code",
        "awk": "runs programs with system()",
        "gawk": "runs programs with system()",
        "mawk": "runs programs with system()",
        "nawk": "runs programs with system()",
        "sed": "runs programs with GNU sed's e command",
        # shells, and builtins that run their arguments
        "sh": _RUNS_ANYTHING,
        "bash": _RUNS_ANYTHING,
        "zsh": _RUNS_ANYTHING,
        "dash": _RUNS_ANYTHING,
        "ksh": _RUNS_ANYTHING,
        "fish": _RUNS_ANYTHING,
        "csh": _RUNS_ANYTHING,
        "tcsh": _RUNS_ANYTHING,
        "busybox": _RUNS_ANYTHING,
        "eval": _RUNS_ANYTHING,
        "exec": _RUNS_NAMED,
        "command": _RUNS_NAMED,
        "builtin": _RUNS_NAMED,
        "source": "runs a shell script",
        ".": "runs a shell script",
        # wrappers: they run the program named in their arguments
        "env": _RUNS_NAMED,
        "sudo": _RUNS_NAMED,
        "doas": _RUNS_NAMED,
        "su": _RUNS_ANYTHING,
        "runuser": _RUNS_NAMED,
        "pkexec": _RUNS_NAMED,
        "nohup": _RUNS_NAMED,
        "timeout": _RUNS_NAMED,
        "nice": _RUNS_NAMED,
        "ionice": _RUNS_NAMED,
        "time": _RUNS_NAMED,
        "watch": _RUNS_NAMED,
        "parallel": _RUNS_NAMED,
        "xargs": _RUNS_NAMED,
        "stdbuf": _RUNS_NAMED,
        "setsid": _RUNS_NAMED,
        "flock": _RUNS_NAMED,
        "chroot": _RUNS_NAMED,
        "unshare": _RUNS_NAMED,
        "nsenter": _RUNS_NAMED,
        "taskset": _RUNS_NAMED,
        "chrt": _RUNS_NAMED,
        "strace": _RUNS_NAMED,
        "ltrace": _RUNS_NAMED,
        "gdb": _RUNS_NAMED,
        "valgrind": _RUNS_NAMED,
        "script": _RUNS_NAMED,
        "expect": _RUNS_NAMED,
        "tmux": _RUNS_NAMED,
        "screen": _RUNS_NAMED,
        "at": _RUNS_NAMED,
        "batch": _RUNS_NAMED,
        "crontab": "schedules any command",
        "systemd-run": _RUNS_NAMED,
        "entr": _RUNS_NAMED,
        # other machines, and the programs that reach them
        "ssh": "runs commands on another machine",
        "scp": "runs the program given with -S",
        "sftp": "runs the program given with -S",
        "rsync": "runs the program given with -e",
        # build and task runners: the folder's own code
        "make": _RUNS_FOLDER,
        "gmake": _RUNS_FOLDER,
        "cmake": _RUNS_FOLDER,
        "ninja": _RUNS_FOLDER,
        "meson": _RUNS_FOLDER,
        "scons": _RUNS_FOLDER,
        "just": _RUNS_FOLDER,
        "rake": _RUNS_FOLDER,
        "gradle": _RUNS_FOLDER,
        "mvn": _RUNS_FOLDER,
        "ant": _RUNS_FOLDER,
        "bazel": _RUNS_FOLDER,
        "tox": _RUNS_FOLDER,
        "nox": _RUNS_FOLDER,
        "invoke": _RUNS_FOLDER,
        "snakemake": _RUNS_FOLDER,
        "pre-commit": _RUNS_FOLDER,
        "pytest": "runs the folder's tests and conftest.py",
        "py.test": "runs the folder's tests and conftest.py",
        # package managers: named programs, package scripts, install scripts
        "npx": "runs a package's program",
        "pnpx": "runs a package's program",
        "bunx": "runs a package's program",
        "uvx": "runs a package's program",
        "pipx": "runs a package's program",
        "npm": "runs package scripts (npm run, npm exec, install scripts)",
        "yarn": "runs package scripts and the folder's yarnPath",
        "pnpm": "runs package scripts (pnpm run, pnpm exec, install scripts)",
        "uv": "runs programs (uv run) and packages' build code",
        "poetry": "runs programs (poetry run) and packages' build code",
        "pdm": "runs programs (pdm run) and packages' build code",
        "hatch": "runs programs (hatch run) and packages' build code",
        "cargo": "builds and runs the folder's code",
        "go": "builds and runs the folder's code",
        "dotnet": "builds and runs the folder's code",
        "gem": "runs packages' install code",
        "bundle": "runs programs (bundle exec) and packages' install code",
        # tools with options or commands that start programs
        "tar": "runs programs with --to-command, -I or a checkpoint action",
        "zip": "runs the program given with -TT",
        "vi": "runs shell commands",
        "vim": "runs shell commands",
        "nvim": "runs shell commands",
        "ex": "runs shell commands",
        "ed": "runs shell commands",
        "emacs": "runs shell commands",
        "less": "runs shell commands",
        "more": "runs shell commands",
        "man": "runs the pager given with -P",
        "sqlite3": "runs shell commands (.shell, .system)",
        "psql": "runs shell commands (\\!)",
    }
)
"""Programs that run other programs, and what they run: "Always" covers one command line."""

PLAIN: Final[Mapping[str, RunnerForms]] = _table(
    "ls pwd cat head tail wc du df stat file tree which whoami id uname nproc free uptime ps "
    "lscpu nvidia-smi echo printf basename dirname realpath readlink md5sum sha1sum sha256sum "
    "cksum diff cmp comm cut paste tr uniq nl fold tac rev column od xxd hexdump strings "
    "base64 grep egrep fgrep jq seq sleep true false mkdir touch",
    find=RunnerForms(words=("-exec", "-execdir", "-ok", "-okdir")),
    sort=RunnerForms(long=("compress-program",)),
    rg=RunnerForms(long=("pre",)),
)
"""Programs that start no other program but through the forms listed: "Always" covers the
program ("`ls` commands"), a command with a runner form only itself."""

_GIT_FETCH: Final = RunnerForms(long=("upload-pack",))
SUBCOMMANDS: Final[Mapping[str, Subcommands]] = MappingProxyType(
    {
        "git": Subcommands(
            scoped=_table(
                "status diff log show shortlog blame describe rev-parse rev-list ls-files "
                "ls-tree cat-file show-ref for-each-ref reflog branch tag add rm mv restore "
                "switch checkout reset stash commit merge cherry-pick revert remote clean "
                "notes apply am format-patch worktree count-objects merge-base name-rev "
                "check-ignore check-attr range-diff whatchanged version",
                grep=RunnerForms(long=("open-files-in-pager",), short="O"),
                rebase=RunnerForms(long=("exec",), short="x"),
                fetch=_GIT_FETCH,
                pull=_GIT_FETCH,
                ls_remote=RunnerForms(long=("upload-pack",), short="u"),
                push=RunnerForms(long=("receive-pack", "exec")),
                clone=RunnerForms(long=("config", "template", "upload-pack"), short="cu"),
                init=RunnerForms(long=("template",)),
                archive=RunnerForms(long=("exec", "remote")),
            ),
            running=MappingProxyType(
                {
                    "config": "sets git's settings, and a setting can run any program",
                    "submodule": "runs any command (git submodule foreach)",
                    "bisect": "runs any command (git bisect run)",
                    "difftool": "runs diff programs",
                    "mergetool": "runs merge programs",
                    "filter-branch": "runs shell filters",
                    "send-email": "runs the mail program it is given",
                }
            ),
            options=MappingProxyType(
                {
                    "-c": "sets git's settings, and a setting can run any program",
                    "--config-env": "sets git's settings, and a setting can run any program",
                    "-C": "uses another folder's repository, whose settings can run any program",
                    "--git-dir": "uses another repository, whose settings can run any program",
                    "--work-tree": "uses another folder, whose attributes pick programs to run",
                    "--exec-path": "chooses the folder git runs its own programs from",
                }
            ),
        ),
        "pip": Subcommands(  # also pip3, pip3.12 (_base_name)
            scoped=_table("list show freeze check"),
            running=MappingProxyType(
                dict.fromkeys(("install", "download", "wheel"), "runs packages' build code")
            ),
        ),
        **dict.fromkeys(
            ("conda", "mamba", "micromamba"),
            Subcommands(
                scoped=_table("list info search"),
                running=MappingProxyType(
                    {
                        "run": _RUNS_NAMED,
                        "install": "runs packages' install scripts",
                        "create": "runs packages' install scripts",
                        "update": "runs packages' install scripts",
                    }
                ),
            ),
        ),
        **dict.fromkeys(
            ("docker", "podman"),
            Subcommands(
                scoped=_table("ps images version info inspect logs stats top port history events"),
                running=MappingProxyType(
                    dict.fromkeys(("run", "exec", "build", "compose", "start"), "runs containers")
                ),
            ),
        ),
        "kubectl": Subcommands(
            scoped=_table(  # a kubeconfig can name a credential program to run
                "get describe logs version explain api-resources top cluster-info",
                RunnerForms(long=("kubeconfig",)),
            ),
            running=MappingProxyType(
                dict.fromkeys(("exec", "run", "debug", "apply"), "runs programs in the cluster")
            ),
        ),
    }
)
"""Programs with subcommands: "Always" covers the program and one listed subcommand
("`git status` commands"), a command with a runner form only itself."""

# chains, pipes, redirections, substitutions, variables; control characters (sh splits words
# on none of them but tab and newline, shlex on \r too)
_COMPOUND = re.compile(r"[;&|<>`$\x00-\x08\n-\x1f\x7f]")
_PROGRAM = re.compile(r"[A-Za-z0-9_.][A-Za-z0-9_.+-]*")  # a name, never a path or VAR=value
_SUBCOMMAND = re.compile(r"[a-z0-9][a-z0-9-]*")
_VERSIONED = re.compile(r"(python|pypy|pip)[0-9]*(?:\.[0-9]+)*")
_WILDCARDS = "*?[{"


def shell_scope(command: str) -> AlwaysScope:
    """What an "Always" for ``command`` allows (see the module's docstring)."""
    command = command.strip()
    exact = AlwaysScope(f"shell!{command}", EXACT)
    if not command or _COMPOUND.search(command):
        return exact
    try:
        words = shlex.split(command)
    except ValueError:  # an unclosed quote: sh would refuse it; nothing to scope
        return exact
    if not words or not _PROGRAM.fullmatch(words[0]):
        return exact
    program, args = words[0], words[1:]
    base = _base_name(program)
    if base in RUNNERS:
        return _exact_because(command, f"`{program}` {RUNNERS[base]}")
    if base in PLAIN:
        return _scoped(command, program, PLAIN[base], args)
    table = SUBCOMMANDS.get(base)
    if table is None or not args:  # unknown, or a bare `git`: never a program-wide scope
        return exact
    sub = args[0]
    if sub.startswith("-"):
        option = sub.split("=", 1)[0]
        why = table.options.get(option)
        return _exact_because(command, why and f"`{program} {option}` {why}")
    if sub in table.running:
        return _exact_because(command, f"`{program} {sub}` {table.running[sub]}")
    forms = table.scoped.get(sub)
    if forms is None or not _SUBCOMMAND.fullmatch(sub):  # an alias, an add-on, an odd word
        return exact
    return _scoped(command, f"{program} {sub}", forms, args[1:])


def _base_name(program: str) -> str:
    """``python3.12`` -> ``python``, ``pip3`` -> ``pip``; other names as they are."""
    versioned = _VERSIONED.fullmatch(program)
    return versioned.group(1) if versioned else program


def _scoped(command: str, name: str, forms: RunnerForms, args: list[str]) -> AlwaysScope:
    """The scope of ``name`` (a program, or a program and its subcommand), unless this
    command uses, or may hide, one of its runner forms."""
    key = f"shell:{name}"
    if not forms:
        return AlwaysScope(key, f"`{name}` commands")
    used = forms.found(args)
    if used is not None:
        return _exact_because(command, f"`{name} {used}` can run other programs")
    if _unquoted(command, _WILDCARDS):  # sh may expand it into a runner form
        return _exact_because(command, f"an unquoted wildcard could expand to {forms.shown()}")
    return AlwaysScope(key, f"`{name}` commands without {forms.shown()}")


def _exact_because(command: str, why: str | None) -> AlwaysScope:
    """The exact scope, its label naming why (``None``: nothing to name)."""
    return AlwaysScope(f"shell!{command}", f"{EXACT} ({why})" if why else EXACT)


def _unquoted(command: str, chars: str) -> bool:
    """Whether one of ``chars`` stands outside quotes and escapes, where sh expands it."""
    quote = ""
    escaped = False
    for char in command:
        if escaped:
            escaped = False
        elif quote == "'":
            quote = "" if char == "'" else quote
        elif char == "\\":
            escaped = True
        elif quote == '"':
            quote = "" if char == '"' else quote
        elif char in "'\"":
            quote = char
        elif char in chars:
            return True
    return False
