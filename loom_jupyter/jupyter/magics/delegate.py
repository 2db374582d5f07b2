"""``%delegate`` and ``%%delegate``: hand a big goal to the orchestrator from a cell.

``%delegate GOAL`` plans, runs the subtasks in parallel, verifies them and
prints the digest when done; the plan shows as a live table in the cell and
each step as a line. A kernel interrupt cancels every running subtask (rows
``cancelled``). ``--bg`` returns at once; the digest is posted to the
conversation when the task ends, so the next ``%cowork`` turn sees it.
Subcommands: ``status``, ``resume TASK``, ``cancel TASK`` (each takes ``--help``); a slip
of their names whose words fit (``%delegate stauts``) is answered "did you mean …" and
delegates nothing.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import MagicArgumentParser

from loom_jupyter.errors import LoomError

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine

    from loom_jupyter.jupyter.coworker.runtime import KernelCowork
    from loom_jupyter.jupyter.delegation.front import DelegateFront
    from loom_jupyter.orchestrator import DelegateOptions, DelegationOutcome

__all__ = ["DELEGATE_USAGE", "DelegateMagics", "misspelled_line"]


def _parser(prog: str, description: str) -> MagicArgumentParser:
    return MagicArgumentParser(
        prog=prog, description=description, formatter_class=argparse.HelpFormatter
    )


def _run_parser() -> MagicArgumentParser:
    parser = _parser("%delegate", "Plan GOAL into subtasks, run them in parallel, verify, retry.")
    parser.add_argument("goal", nargs="*", help="what to get done (or the %%delegate cell body)")
    parser.add_argument("--max-parallel", type=int, default=None, metavar="N")
    parser.add_argument("--no-verify", action="store_true", help="skip checks and the judge")
    parser.add_argument("--bg", action="store_true", help="return at once; digest posted later")
    parser.add_argument("--budget-usd", type=float, default=None, metavar="X")
    return parser


RUN = _run_parser()
STATUS = _parser("%delegate status", "This session's delegated tasks and their subtasks.")
RESUME = _parser("%delegate resume", "Run again what did not pass in a task (by id or prefix).")
RESUME.add_argument("task", help="task id (or a unique prefix)")
RESUME.add_argument("--bg", action="store_true", help="return at once; digest posted later")
CANCEL = _parser("%delegate cancel", "Stop a running task: its running subtasks are cancelled.")
CANCEL.add_argument("task", nargs="?", default=None, help="task id or prefix (default: all)")
SUBCOMMANDS = {"status": STATUS, "resume": RESUME, "cancel": CANCEL}

DELEGATE_USAGE = "\n".join(
    [
        "Hand a big goal to parallel sub-agents (plan, run, verify, retry).",
        "",
        "  %delegate GOAL [--max-parallel N] [--no-verify] [--bg] [--budget-usd X]",
        "  %%delegate [options]      (cell magic) the cell body is the goal",
        "  %delegate status          this session's tasks and their subtasks",
        "  %delegate resume TASK     run again what did not pass (after a failure or restart)",
        "  %delegate cancel [TASK]   stop a running task (all when no TASK)",
        "",
        "Each takes --help. A slip of their names (%delegate stauts) is answered, not",
        "delegated; `%delegate -- TEXT` always delegates TEXT. A kernel interrupt cancels",
        "every running subtask. With --bg the digest is posted to the conversation when",
        "the task ends (the next %cowork sees it).",
        "Settings: delegate_max_subtasks, delegate_max_parallel, delegate_judge_model,",
        "delegate_budget_usd / _tokens, delegate_subtask_seconds (loom.yaml or LOOM_*).",
    ]
)


@magics_class
class DelegateMagics(Magics):
    """The ``%delegate`` line and cell magics."""

    def __init__(self, shell: Any, get_cowork: Callable[[str | None], KernelCowork]) -> None:
        super().__init__(shell)
        self._get_cowork = get_cowork

    @line_magic
    def delegate(self, line: str) -> None:
        """Hand a big goal to parallel sub-agents; `%delegate --help` lists everything."""
        self._guarded(lambda: self._line(line))

    @cell_magic("delegate")  # type: ignore[arg-type]  # IPython's decorator typing rejects a name
    def delegate_cell(self, line: str, cell: str) -> None:
        """The cell body is the goal; the first line takes the options."""
        self._guarded(lambda: self._goal(line, cell.strip()))

    def _guarded(self, work: Callable[[], None]) -> None:
        try:
            work()
        except (LoomError, UsageError) as exc:
            print(f"loom: {exc}")

    def _line(self, line: str) -> None:
        text = line.strip()
        if text in ("", "-h", "--help"):
            print(DELEGATE_USAGE)
            return
        first, _, rest = text.partition(" ")
        parser = SUBCOMMANDS.get(first)
        slip = None if parser is not None else misspelled_line(text)
        if slip is not None:  # `%delegate stauts` would plan and run a whole delegation
            print(slip)
            return
        if parser is not None and (
            rest.strip() in ("-h", "--help") or (first == "resume" and not rest.strip())
        ):
            print(parser.format_help())
            return
        if parser is not None and _parses(parser, rest):
            self._subcommand(first, parser.parse_argstring(rest))
            return
        self._goal(text, "")

    def _goal(self, line: str, body: str) -> None:
        if line.strip() in ("-h", "--help"):
            print(RUN.format_help())
            return
        args = RUN.parse_argstring(line)
        goal = "\n".join(p for p in (" ".join(args.goal).strip(), body) if p)
        if not goal:
            print(DELEGATE_USAGE)
            return
        cowork = self._get_cowork(None)
        if _missing_key(cowork):
            return
        front = _front(cowork)
        options = _options(args)
        work = front.delegations.start(goal, options=options, background=args.bg)
        _finish(cowork, front, work, background=args.bg)

    def _subcommand(self, name: str, args: argparse.Namespace) -> None:
        cowork = self._get_cowork(None)
        front = _front(cowork)
        if name == "status":
            _status(front)
        elif name == "cancel":
            stopped = front.cowork.run(_cancel(front, args.task))
            print(f"Cancelling {', '.join(stopped)}." if stopped else "No running task matches.")
        else:
            work = front.delegations.resume(args.task, background=args.bg)
            _finish(cowork, front, work, background=args.bg)


def misspelled_line(line: str) -> str | None:
    """The "did you mean …" for a ``%delegate`` line whose first word is a slip of a
    subcommand's name and whose rest fits it (or is empty): every front's rule
    (:mod:`loom_jupyter.host.commands.nearby`); ``None`` for any other line."""
    from loom_jupyter.host.commands.checking import misspelling_text
    from loom_jupyter.host.commands.nearby import Candidate, misspelled

    text = line.strip()
    first, _, rest = text.partition(" ")
    candidates = [Candidate(name, _fits(parser)) for name, parser in SUBCOMMANDS.items()]
    meant = misspelled(first, rest, candidates, names=SUBCOMMANDS)
    return None if meant is None else misspelling_text("delegate", text, meant.name, rest)


def _fits(parser: MagicArgumentParser) -> Callable[[str], bool]:
    return lambda rest: not rest.strip() or _parses(parser, rest)


def _parses(parser: MagicArgumentParser, rest: str) -> bool:
    try:
        parser.parse_argstring(rest)
    except (UsageError, ValueError):
        return False
    return True


def _front(cowork: KernelCowork) -> DelegateFront:
    from loom_jupyter.jupyter.delegation.front import front_of

    return front_of(cowork)


def _missing_key(cowork: KernelCowork) -> bool:
    problem = cowork.missing_key()
    if problem:
        print(problem)
    return bool(problem)


def _options(args: argparse.Namespace) -> DelegateOptions:
    from loom_jupyter.orchestrator import DelegateOptions

    if args.max_parallel is not None and args.max_parallel < 1:
        raise LoomError("--max-parallel must be at least 1")
    return DelegateOptions(
        max_parallel=args.max_parallel, verify=not args.no_verify, budget_usd=args.budget_usd
    )


def _finish(
    cowork: KernelCowork,
    front: DelegateFront,
    coro: Coroutine[Any, Any, DelegationOutcome],
    *,
    background: bool,
) -> None:
    """Run ``coro`` pumping the main thread; an interrupt cancels every running subtask."""
    from loom_jupyter.jupyter.cell.render import make_renderer

    renderer = make_renderer(cowork.shell, cowork.front)
    front.renderer = renderer
    future = cowork.loop_thread.submit(coro)
    try:
        cowork.main.pump_until(future, tick=renderer.tick)
    except KeyboardInterrupt:
        cowork.loop_thread.loop.call_soon_threadsafe(front.delegations.cancel)
        cowork.main.pump_until(future, tick=renderer.tick)
        renderer.message("Interrupted: every running subtask was cancelled (archived as such).")
    finally:
        front.renderer = None
    outcome = future.result()
    if background:
        print(
            f"Delegated task {outcome.task_id} runs in the background. `%delegate status` shows "
            f"it; `%delegate cancel {outcome.task_id[:8]}` stops it; its digest will be posted "
            "to the conversation when it ends."
        )
        return
    print(outcome.digest)


async def _cancel(front: DelegateFront, ref: str | None) -> list[str]:
    return front.delegations.cancel(ref)


def _status(front: DelegateFront) -> None:
    from loom_jupyter.jupyter.delegation.view import task_table_text

    snapshots = front.cowork.run(front.delegations.snapshots())
    if not snapshots:
        print("No delegated tasks in this session yet. `%delegate --help` shows how to start one.")
        return
    print("\n\n".join(task_table_text(s) for s in snapshots))
    if any(s.status == "interrupted" for s in snapshots):
        print("\nInterrupted tasks continue with `%delegate resume TASK` (what passed is kept).")


DelegateMagics.delegate.__doc__ = DELEGATE_USAGE
