"""An "Always" for a shell command covers no other program (security review R6).

Real ``shell`` tool, real approval policy, a real ``git init`` repository in a temporary
notebook folder. The person answers "Always" once, then "no": whatever asks after that is
refused, so a command that would have run under the Always leaves its trace on disk.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pytest

from loom_jupyter.messages import ToolUseBlock
from loom_jupyter.settings import Settings
from loom_jupyter.tools.approval import ApprovalPolicy
from loom_jupyter.tools.base import ToolContext
from loom_jupyter.tools.local_kernel import LocalKernel
from loom_jupyter.tools.registry import default_registry
from loom_jupyter.tools.shell_scope import PLAIN, RUNNERS, SUBCOMMANDS, shell_scope

if TYPE_CHECKING:
    from pathlib import Path

    from loom_jupyter.tools.approval import ApprovalRequest
    from loom_jupyter.tools.base import AnyTool, ToolOutput


@dataclass
class Person:
    """Answers "always" to the first question and "no" to every later one."""

    asked: list[ApprovalRequest] = field(default_factory=list)

    async def __call__(self, request: ApprovalRequest) -> Any:
        self.asked.append(request)
        return "always" if len(self.asked) == 1 else "no"


def _shell() -> AnyTool:
    found = default_registry().get("shell")
    assert found is not None
    return found


@pytest.fixture
def repo(tmp_path: Path) -> ToolContext:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "data.csv").write_text("a,b\n1,2\n")
    return ToolContext(notebook_dir=tmp_path, settings=Settings(), kernel=LocalKernel())


async def _run(ctx: ToolContext, policy: ApprovalPolicy, command: str) -> ToolOutput:
    call = ToolUseBlock(f"t{len(command)}", "shell", {"command": command})
    return await default_registry().run(call, ctx, policy=policy)


@pytest.mark.attack(
    attack='After "Always" on `git status --short` (offered as "shell commands starting with '
    "`git`\"), `git -c alias.st='!touch GIT_ALIAS_RAN' st` ran its alias's program unasked",
    stopped_by="Always covers a program and its subcommand only where Loom knows it runs no "
    'other program ("`git status` commands"); `git -c`, `git -C`, aliases, `git config` and '
    "runners (python, env, sh -c, find -exec, xargs, npx, make...) get this exact command only",
    ref="R6",
)
async def test_always_on_git_status_does_not_cover_a_git_alias(repo: ToolContext) -> None:
    person = Person()
    policy = ApprovalPolicy("ask", approver=person)

    first = await _run(repo, policy, "git status --short")
    alias = await _run(repo, policy, "git -c alias.st='!touch GIT_ALIAS_RAN' st")

    assert not first.is_error, first.text_content
    assert alias.is_error
    assert "declined" in alias.text_content
    assert not (repo.notebook_dir / "GIT_ALIAS_RAN").exists()
    assert [r.detail.splitlines()[0] for r in person.asked] == [
        "git status --short",
        "git -c alias.st='!touch GIT_ALIAS_RAN' st",
    ]
    assert person.asked[0].always == "`git status` commands"
    assert person.asked[1].always == (
        "this exact command (`git -c` sets git's settings, and a setting can run any program)"
    )
    assert policy.always_labels() == ["`git status` commands"]


async def test_the_same_subcommand_with_other_arguments_does_not_ask(repo: ToolContext) -> None:
    person = Person()
    policy = ApprovalPolicy("ask", approver=person)
    await _run(repo, policy, "git status --short")
    again = await _run(repo, policy, "git status -s")
    assert not again.is_error, again.text_content
    assert len(person.asked) == 1


async def test_a_plain_program_is_scoped_by_its_name(repo: ToolContext) -> None:
    """Decision: ``ls``, ``wc``, ``find`` (without -exec)... run no other program, so
    "Always" covers the program with any arguments."""
    person = Person()
    policy = ApprovalPolicy("ask", approver=person)
    await _run(repo, policy, "ls")
    listed = await _run(repo, policy, "ls -la")
    assert not listed.is_error
    assert "data.csv" in listed.text_content
    assert [r.always for r in person.asked] == ["`ls` commands"]


async def test_find_without_exec_is_scoped_and_with_exec_asks(repo: ToolContext) -> None:
    person = Person()
    policy = ApprovalPolicy("ask", approver=person)
    await _run(repo, policy, "find . -name '*.csv'")
    other = await _run(repo, policy, "find . -type f -name '*.txt'")
    execs = await _run(repo, policy, "find . -name '*.csv' -exec touch FIND_RAN +")
    assert not other.is_error
    assert execs.is_error
    assert not (repo.notebook_dir / "FIND_RAN").exists()
    assert [r.always for r in person.asked] == [
        "`find` commands without -exec, -execdir, -ok or -okdir",
        "this exact command (`find -exec` can run other programs)",
    ]


RUNNER_FORMS = [
    # (a harmless sibling the person answers "Always" to, a command that runs another program)
    ("git status", "git -c alias.x='!touch RAN' x"),
    ("git status", "git -C sub status"),
    ("git log -1", "git --exec-path=. log -1"),
    ("git status", "git st"),  # an alias (or a git-st program on PATH)
    ("git config --get user.name", "git config core.fsmonitor 'touch RAN'"),
    ("git submodule status", "git submodule foreach 'touch RAN'"),
    ("git grep foo", "git grep -O'touch RAN' foo"),
    ("git grep foo", "git grep -iOtouch foo"),
    ("git grep foo", "git grep --open-files='touch RAN' foo"),
    ("git grep foo", "git grep foo *"),  # a file named -Ocmd would be an option
    ("git rebase main", "git rebase -x 'touch RAN' main"),
    ("git rebase main", "git rebase --exe='touch RAN' main"),
    ("git fetch origin", "git fetch --upload-pack='touch RAN' origin"),
    ("git push origin main", "git push --receive-pack='touch RAN' origin main"),
    ("git clone src copy", "git clone -c core.fsmonitor='touch RAN' src copy2"),
    ("git init", "git init --template=tpl"),
    ("git status", "GIT_CONFIG_PARAMETERS=x git status"),
    ("python3 --version", "python3 -c 'print(1)'"),
    ("python3.11 -V", "python3.11 -m http.server"),
    ("python analysis.py", "python other.py"),
    ("env", "env touch RAN"),
    ("sh -c 'echo hi'", "sh -c 'touch RAN'"),
    ("bash --version", "bash -c 'touch RAN'"),
    ("find . -name x", "find . -name x -execdir touch RAN +"),
    ("find . -name x", "find . -name x -ok touch RAN +"),
    ("find . -name '*.csv'", "find . -name *.csv"),  # a file named -exec would be an option
    ("xargs --version", "xargs touch"),
    ("npx --version", "npx cowsay hi"),
    ("npm ls", "npm exec cowsay"),
    ("npm ls", "npm run build"),
    ("yarn list", "yarn run build"),
    ("pnpm ls", "pnpm exec cowsay"),
    ("make -n", "make all"),
    ("ssh -V", "ssh host touch RAN"),
    ("sudo -l", "sudo touch RAN"),
    ("nohup --version", "nohup touch RAN"),
    ("timeout --version", "timeout 5 touch RAN"),
    ("nice", "nice touch RAN"),
    ("time ls", "time touch RAN"),
    ("watch --version", "watch touch RAN"),
    ("parallel --version", "parallel touch ::: RAN"),
    ("perl -v", "perl -e 'system(q(touch RAN))'"),
    ("ruby -v", "ruby -e 'system(%q(touch RAN))'"),
    ("node -v", 'node -e \'require("child_process").execSync("touch RAN")\''),
    ("awk -f prog.awk data.csv", "awk 'BEGIN{system(\"touch RAN\")}'"),
    ("sed -n 1p data.csv", "sed 's/.*/touch RAN/e' data.csv"),
    ("tar -tf a.tar", "tar -xf a.tar --to-command='touch RAN'"),
    ("sort data.csv", "sort --compress-prog=./x data.csv"),
    ("rg foo", "rg --pre ./x foo"),
    ("pip list", "pip install ./pkg"),
    ("pip3 show x", "pip3 download x"),
    ("docker ps", "docker run alpine touch RAN"),
    ("pytest -x", "pytest -p evil"),
    ("ls", "./ls"),
    ("ls", "ls; touch RAN"),
    ("ls", "ls $(touch RAN)"),
    ("ls", "ls ${IFS}x"),
]


@pytest.mark.parametrize(("sibling", "runner"), RUNNER_FORMS)
async def test_a_runner_form_asks_after_an_always_on_its_sibling(sibling: str, runner: str) -> None:
    person = Person()
    policy = ApprovalPolicy("ask", approver=person)
    shell = _shell()
    first = await policy.check(shell, ToolUseBlock("c1", "shell", {"command": sibling}))
    second = await policy.check(shell, ToolUseBlock("c2", "shell", {"command": runner}))

    assert first.allowed
    assert first.answer == "always"
    assert not second.allowed
    assert [r.detail.splitlines()[0] for r in person.asked] == [sibling, runner]
    assert person.asked[1].always is not None
    assert person.asked[1].always.startswith("this exact command")
    program = sibling.split()[0]
    if program not in PLAIN:  # a runner or a program with subcommands: never its bare name
        assert person.asked[0].always != f"`{program}` commands"


async def test_git_alone_is_never_a_program_wide_scope() -> None:
    person = Person()
    policy = ApprovalPolicy("ask", approver=person)
    shell = _shell()
    await policy.check(shell, ToolUseBlock("c1", "shell", {"command": "git"}))
    status = await policy.check(shell, ToolUseBlock("c2", "shell", {"command": "git status"}))
    assert not status.allowed
    assert person.asked[0].always == "this exact command"


@pytest.mark.parametrize(
    ("allowed", "later"),
    [
        ("git status", "git statusx"),
        ("git status", "git status; touch RAN"),
        ("git status --short", "git status --short && touch RAN"),
        ("python x.py /", "python x.py /; touch RAN"),  # an exact key ending in /
        ("python x.py", "python x.py --extra"),
        ("ls 'unclosed", "ls 'unclosed x"),  # does not parse: exact
    ],
)
async def test_scope_keys_are_compared_whole(allowed: str, later: str) -> None:
    person = Person()
    policy = ApprovalPolicy("ask", approver=person)
    shell = _shell()
    await policy.check(shell, ToolUseBlock("c1", "shell", {"command": allowed}))
    decision = await policy.check(shell, ToolUseBlock("c2", "shell", {"command": later}))
    assert not decision.allowed
    assert len(person.asked) == 2


async def test_the_same_exact_command_does_not_ask_again() -> None:
    person = Person()
    policy = ApprovalPolicy("ask", approver=person)
    shell = _shell()
    command = "python -m pytest tests/test_a.py"
    await policy.check(shell, ToolUseBlock("c1", "shell", {"command": command}))
    again = await policy.check(shell, ToolUseBlock("c2", "shell", {"command": f" {command} "}))
    assert again.allowed
    assert len(person.asked) == 1
    assert person.asked[0].always == ("this exact command (`python` runs any Python code)")


@pytest.mark.parametrize(
    ("command", "label"),
    [
        ("git status --short", "`git status` commands"),
        ("git 'log' -1", "`git log` commands"),
        ("docker ps -a", "`docker ps` commands"),
        ("pip list --outdated", "`pip list` commands"),
        ("wc -l data.csv", "`wc` commands"),
        ("git grep -n foo", "`git grep` commands without -O or --open-files-in-pager"),
        ("env FOO=1 ls", "this exact command (`env` runs the program it is given)"),
        ("make test", "this exact command (`make` runs the folder's build or task code)"),
        (
            "git config user.name x",
            "this exact command (`git config` sets git's settings, "
            "and a setting can run any program)",
        ),
        ("pip install pandas", "this exact command (`pip install` runs packages' build code)"),
        ("some-tool build", "this exact command"),  # unknown: Loom cannot tell
        ("cat a | grep b", "this exact command"),
    ],
)
def test_the_label_says_what_always_allows(command: str, label: str) -> None:
    assert shell_scope(command).label == label


def test_the_tables_do_not_overlap() -> None:
    """A program is a runner, a plain program or one with subcommands: never two."""
    runners, plain, subcommands = set(RUNNERS), set(PLAIN), set(SUBCOMMANDS)
    assert not runners & plain
    assert not runners & subcommands
    assert not plain & subcommands
    for name in ("git", "python", "env", "sh", "bash", "find", "xargs", "npx", "make"):
        assert name in runners | plain | subcommands
    for table in SUBCOMMANDS.values():
        assert not set(table.scoped) & set(table.running)


async def test_the_cell_prompt_shows_what_always_allows() -> None:
    """The cell's ``input()`` prompt shows the scope's label; the sidebar's card gets the
    same words as the ``approval`` message's ``always`` (host/runtime/floor.py)."""
    from loom_jupyter.jupyter.cell.approval import format_question

    person = Person()
    policy = ApprovalPolicy("ask", approver=person)
    shell = _shell()
    await policy.check(shell, ToolUseBlock("c1", "shell", {"command": "git status"}))
    runner = "git -c alias.st='!touch RAN' st"
    await policy.check(shell, ToolUseBlock("c2", "shell", {"command": runner}))
    scoped, exact = (format_question(r) for r in person.asked)
    assert "(always = `git status` commands, for the rest of this conversation)" in scoped
    assert (
        "(always = this exact command (`git -c` sets git's settings, and a setting can run "
        "any program), for the rest of this conversation)"
    ) in exact
