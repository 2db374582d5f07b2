"""Where a variable came from: what one execution read and set (issue 21, DESIGN §11).

Pure values and functions, no I/O, by subject:

- :mod:`.analysis` — :func:`analyze` reads a cell's code with :mod:`ast`: the names it
  reads before setting them, the names it binds, the names it changes in place
  (``df.drop(..., inplace=True)``, ``lst.append(x)``, ``d["k"] = v``) and, **by
  heuristics**, whether it touches files, the network, a subprocess or randomness;
- :mod:`.fingerprint` — :func:`fingerprint` of small values, to check a rebuilt one;
- :mod:`.execution` — :class:`ExecutionRecord`, the archived row, and
  :func:`execution_record`, the recorder's analysis plus what the kernel saw (the
  namespace diff, fingerprints);
- :mod:`.plan` — :func:`plan_rebuild`, the smallest ordered slice that makes a set of
  names again, and :func:`trace`, a name's :class:`VariableTrace`.

The names below are the package's public ones: import them from here.
"""

from __future__ import annotations

from loom_jupyter.effects import CONSENT_EFFECTS, SideEffect
from loom_jupyter.lineage.analysis import CodeFacts, analyze
from loom_jupyter.lineage.execution import ExecutionRecord, ExecutionSource, execution_record
from loom_jupyter.lineage.fingerprint import fingerprint
from loom_jupyter.lineage.plan import RebuildPlan, VariableTrace, plan_rebuild, trace

__all__ = [
    "CONSENT_EFFECTS",
    "CodeFacts",
    "ExecutionRecord",
    "ExecutionSource",
    "Provenance",
    "RebuildPlan",
    "SideEffect",
    "VariableTrace",
    "analyze",
    "execution_record",
    "fingerprint",
    "plan_rebuild",
    "trace",
]

Provenance = VariableTrace
"""The old name of :class:`VariableTrace` (``cells.Provenance`` is a cell's metadata), kept
only until ``tools/rebuild.py`` and ``host/services/outside.py`` import the new one."""
