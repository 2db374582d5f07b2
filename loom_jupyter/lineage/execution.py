"""One archived execution: what ran, what it read and set, and what the kernel saw.

:class:`ExecutionRecord` is the row the archive keeps for each of the person's cells and
the agent's code (``executions``); :func:`execution_record` makes one from the code
(:func:`~loom_jupyter.lineage.analysis.analyze`) and the namespace diff, with the
:func:`~loom_jupyter.lineage.fingerprint.fingerprint` of the small values it set.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from loom_jupyter.effects import CONSENT_EFFECTS
from loom_jupyter.lineage.analysis import analyze
from loom_jupyter.lineage.fingerprint import fingerprint

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

__all__ = ["ExecutionRecord", "ExecutionSource", "execution_record"]

ExecutionSource = Literal["cell", "run_python", "run_cell", "rebuild"]
"""What ran the code: the person's cell, the agent's tools, or a rebuild's replay."""

_GENERATOR_TYPES = frozenset({"Generator", "RandomState", "Random", "SystemRandom"})


@dataclass(frozen=True, kw_only=True)
class ExecutionRecord:
    """One archived execution: the person's cell or the agent's code, as it ran."""

    id: int
    source: ExecutionSource
    code: str
    reads: tuple[str, ...] = ()
    sets: tuple[str, ...] = ()  # bound (by the code or seen new in the namespace diff)
    mutates: tuple[str, ...] = ()
    effects: tuple[str, ...] = ()
    duration_s: float = 0.0
    error: str | None = None
    fingerprints: Mapping[str, str] = field(default_factory=dict)
    parsed: bool = True
    session_id: str | None = None
    turn: int | None = None
    execution_count: int | None = None
    cell_id: str | None = None
    kernel_run: str = ""
    created_at: str = ""
    late: bool = False  # run before Loom loaded, recorded at load: no timing, no namespace diff

    @property
    def label(self) -> str:
        """``cell [7]``, ``run_python (turn 3)``: where it ran, for tables."""
        if self.source == "cell":
            cell = f"cell [{self.execution_count}]" if self.execution_count else "cell"
            return f"{cell} (before Loom loaded)" if self.late else cell
        return f"{self.source} (turn {self.turn})" if self.turn is not None else self.source

    @property
    def needs_consent(self) -> bool:
        """Whether re-running it changes files, the network or runs a subprocess (heuristic)."""
        return any(effect in CONSENT_EFFECTS for effect in self.effects)

    def changes(self, name: str) -> bool:
        """Whether this execution bound or changed ``name``."""
        return name in self.sets or name in self.mutates


def execution_record(
    code: str,
    *,
    source: ExecutionSource,
    changed: Iterable[str],
    namespace: Mapping[str, Any],
    duration_s: float,
    error: str | None = None,
    execution_count: int | None = None,
    turn: int | None = None,
    cell_id: str | None = None,
    late: bool = False,
) -> ExecutionRecord:
    """The record of one execution: :func:`analyze` of ``code`` plus what the kernel saw.

    ``changed`` are the names the namespace diff found created or rebound (they count as
    set even when the code hid it, e.g. in ``exec``); fingerprints are taken of the names
    set or changed in place that are in ``namespace`` now.
    """
    facts = analyze(code)
    sets = tuple(dict.fromkeys((*facts.sets, *changed)))
    drawn = [name for name in facts.draws if _is_generator(namespace.get(name))]
    mutates = tuple(dict.fromkeys((*facts.mutates, *drawn)))
    fingerprints: dict[str, str] = {}
    for name in (*sets, *mutates):
        if name in namespace:
            value = fingerprint(namespace[name])
            if value is not None:
                fingerprints[name] = value
    return ExecutionRecord(
        id=0,
        source=source,
        code=code,
        reads=facts.reads,
        sets=sets,
        mutates=tuple(name for name in mutates if name not in sets),
        effects=facts.effects,
        parsed=facts.parsed,
        duration_s=duration_s,
        error=error,
        fingerprints=fingerprints,
        execution_count=execution_count,
        turn=turn,
        cell_id=cell_id,
        late=late,
    )


def _is_generator(value: Any) -> bool:
    """A random generator object (NumPy's or the standard library's): draws change it."""
    kind = type(value)
    return kind.__name__ in _GENERATOR_TYPES and kind.__module__.split(".")[0] in {
        "numpy",
        "random",
    }
