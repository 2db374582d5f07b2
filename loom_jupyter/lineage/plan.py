"""Rebuild plans and traces over the archived executions (issue 21, DESIGN §11).

:func:`plan_rebuild` picks the smallest ordered slice of executions that makes a set of
names again, each step's side effects judged again from its code; :func:`trace` is where
one name came from (:class:`VariableTrace`: the execution that last set it, and its chain).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from loom_jupyter.lineage.analysis import analyze

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from loom_jupyter.lineage.execution import ExecutionRecord

__all__ = ["RebuildPlan", "VariableTrace", "plan_rebuild", "trace"]


@dataclass(frozen=True)
class RebuildPlan:
    """What :func:`plan_rebuild` found: the executions to run, in order, and what it cannot make."""

    steps: tuple[ExecutionRecord, ...]
    missing: Mapping[str, str]  # name -> why it cannot be rebuilt
    unresolved: tuple[str, ...] = ()  # names the steps read that no archived execution sets

    @property
    def estimated_s(self) -> float:
        """The steps' recorded durations, summed."""
        return sum(step.duration_s for step in self.steps)

    @property
    def consent_steps(self) -> tuple[ExecutionRecord, ...]:
        """Steps that write files, reach the network or run a subprocess (heuristic)."""
        return tuple(step for step in self.steps if step.needs_consent)


def plan_rebuild(
    records: Sequence[ExecutionRecord], names: Iterable[str], present: Iterable[str] = ()
) -> RebuildPlan:
    """The smallest ordered slice of ``records`` (oldest first) that makes ``names`` again.

    For each name: its latest binding execution, then every later one that changed it
    in place; then, transitively, the same for each name those executions read that is
    not in ``present`` (the live namespace), looking only before the execution that
    reads it. Executions that raised are not setters. Steps come back in archive order.
    """
    live = set(present)
    chosen: set[int] = set()
    missing: dict[str, str] = {}
    unresolved: list[str] = []
    done: set[tuple[str, int]] = set()
    wanted = [(name, len(records), True) for name in reversed(dict.fromkeys(names))]
    while wanted:  # a work list, not recursion: chains can be thousands of cells long
        name, before, target = wanted.pop()
        if (name, before) in done:
            continue
        done.add((name, before))
        binder = next(
            (
                i
                for i in range(before - 1, -1, -1)
                if name in records[i].sets and not records[i].error
            ),
            None,
        )
        if binder is None:
            if target:
                failed = any(name in r.sets for r in records[:before])
                missing[name] = (
                    "only executions that raised set it"
                    if failed
                    else "no archived execution sets it"
                )
            elif name not in unresolved:
                unresolved.append(name)
            continue
        for index in range(binder, before):
            record = records[index]
            if index in chosen or not (
                index == binder or (name in record.mutates and not record.error)
            ):
                continue
            chosen.add(index)
            wanted.extend((read, index, False) for read in record.reads if read not in live)
    return RebuildPlan(
        steps=tuple(_judged(records[i]) for i in sorted(chosen)),
        missing=missing,
        unresolved=tuple(unresolved),
    )


def _judged(record: ExecutionRecord) -> ExecutionRecord:
    """``record`` with its effects judged again from its code, now: a stored column alone
    (an archive may come from elsewhere, or from an older, blinder judge) is never believed."""
    fresh = analyze(record.code).effects
    return replace(record, effects=tuple(dict.fromkeys((*record.effects, *fresh))))


@dataclass(frozen=True)
class VariableTrace:
    """Where ``name`` came from: the execution that last set it, and the chain before it."""

    name: str
    setter: ExecutionRecord | None  # the last to bind or change it; None: ``why`` says why
    chain: RebuildPlan  # every step that makes it, oldest first (the setter among them)
    why: str = ""  # when there is no setter: the reason

    @property
    def depends_on(self) -> tuple[ExecutionRecord, ...]:
        """The chain without the setter itself."""
        return tuple(step for step in self.chain.steps if step is not self.setter)


def trace(records: Sequence[ExecutionRecord], name: str) -> VariableTrace:
    """The :class:`VariableTrace` of ``name`` in ``records`` (oldest first)."""
    chain = plan_rebuild(records, [name])
    if name in chain.missing:
        return VariableTrace(name, None, chain, chain.missing[name])
    setter = next(step for step in reversed(chain.steps) if step.changes(name))
    return VariableTrace(name, setter, chain)
