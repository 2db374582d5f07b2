"""RESULTS: one record per task and trial, written as JSON (DESIGN §17).

A trial ends with exactly one :data:`Outcome` and a ``reason`` in words; ``passed`` is
true only for ``passed``. The numbers come from the task's archive
(:mod:`loom_jupyter.eval.measure`).
"""

from __future__ import annotations

import dataclasses
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from loom_jupyter.eval.measure import Measures, Tokens
from loom_jupyter.eval.tasks import SuiteError

__all__ = ["FORMAT", "Outcome", "RunResults", "TrialResult", "read_results", "write_results"]

FORMAT = "loom-eval-results/1"
Outcome = Literal[
    "passed",
    "failed",  # the check raised
    "timeout",
    "kernel_died",
    "api_error",
    "approval_refused",
    "setup_failed",
    "no_request",  # a turn sent nothing (no API key, a refused request...)
    "harness_error",
]


@dataclass(frozen=True, kw_only=True)
class TrialResult:
    """One trial of one task."""

    task: str
    trial: int
    passed: bool
    outcome: Outcome
    reason: str
    error: str | None  # the check's error ("NameError: ..."); None when it passed or never ran
    turns: int
    tool_calls: dict[str, int]
    tokens: Tokens
    cost_usd: float
    wall_s: float
    model: str
    loom_version: str

    @classmethod
    def of(cls, *, measures: Measures, **fields: Any) -> TrialResult:
        return cls(
            turns=measures.turns,
            tool_calls=dict(measures.tool_calls),
            tokens=measures.tokens,
            cost_usd=round(measures.cost_usd, 6),
            **fields,
        )

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TrialResult:
        values: dict[str, Any] = {f.name: data.get(f.name) for f in dataclasses.fields(cls)}
        values["tokens"] = Tokens(**{k: int(v) for k, v in (data.get("tokens") or {}).items()})
        values["tool_calls"] = {str(k): int(v) for k, v in (data.get("tool_calls") or {}).items()}
        if values["outcome"] not in get_args(Outcome):
            values["outcome"] = "harness_error"
        return cls(**values)


@dataclass(frozen=True, kw_only=True)
class RunResults:
    """A whole run: what was asked and every finished trial."""

    suite: str
    model: str | None  # --model, when given (each trial says the model that answered)
    trials: int
    loom_version: str
    started_at: str
    finished_at: str
    interrupted: bool = False
    results: tuple[TrialResult, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["results"] = [r.to_json() for r in self.results]
        return {"format": FORMAT, **data}


def write_results(path: Path, run: RunResults) -> None:
    """Write ``run`` to ``path`` whole or not at all (a temp file, then a rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(run.to_json(), indent=2, ensure_ascii=False) + "\n"
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)
    Path(temp).replace(path)


def read_results(path: Path) -> RunResults:
    """A RESULTS file written by :func:`write_results` (a baseline)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        results = tuple(TrialResult.from_json(r) for r in data["results"])
        return RunResults(
            suite=str(data.get("suite", "")),
            model=data.get("model"),
            trials=int(data.get("trials", 1)),
            loom_version=str(data.get("loom_version", "")),
            started_at=str(data.get("started_at", "")),
            finished_at=str(data.get("finished_at", "")),
            interrupted=bool(data.get("interrupted", False)),
            results=results,
        )
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise SuiteError(f"{path}: not a RESULTS file of `loom-jupyter eval` ({error})") from None
