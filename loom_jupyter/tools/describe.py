"""Describing the values of a user namespace, for any KernelBridge.

Used by :class:`~loom_jupyter.tools.local_kernel.LocalKernel` and by the live
IPython bridge alike. pandas and numpy are never imported here: values are
recognised by their type's module, and their own methods do the work.
Every helper is defensive: a value whose ``repr`` or ``describe`` raises is
still described (by type), never an exception. A value whose code never returns is
the caller's to bound: :mod:`loom_jupyter.tools.namespace_reader` runs these helpers on
a worker thread with a deadline, and each helper says which of the value's own methods
it is calling (:func:`track`), so a stopped description can name it.
"""

from __future__ import annotations

import reprlib
import threading
import types
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from loom_jupyter.tools.base import VariableEffect, VariableInfo

__all__ = [
    "DETAIL_CHARS",
    "REPR_CHARS",
    "Progress",
    "Snapshot",
    "changed_variables",
    "describe_value",
    "is_dataframe",
    "is_ndarray",
    "is_series",
    "is_user_variable",
    "shape_of",
    "short_repr",
    "snapshot",
    "track",
    "type_name",
    "user_variables",
    "variable_info",
    "variables_table",
]

# Names IPython (and the interactive shell) put into the user namespace.
_SHELL_NAMES = frozenset({"In", "Out", "exit", "quit", "get_ipython"})
_HIDDEN_TYPES = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type)
DETAIL_CHARS = 6000
"""A description is cut here (its text, header included)."""
REPR_CHARS = 2000
"""A plain value's ``repr`` in a description is cut here."""


class Progress:
    """Which of a value's own methods describing it is calling now; written by the thread
    that describes, read by the thread that waits for it."""

    __slots__ = ("step",)

    def __init__(self) -> None:
        self.step = "its repr"


_tracked = threading.local()


def track(progress: Progress | None) -> None:
    """Report this thread's describing steps into ``progress`` (``None``: stop)."""
    _tracked.progress = progress


def _doing(step: str) -> None:
    progress: Progress | None = getattr(_tracked, "progress", None)
    if progress is not None:
        progress.step = step


def _module_of(value: Any) -> str:
    return type(value).__module__.split(".")[0]


def is_dataframe(value: Any) -> bool:
    """A pandas DataFrame (without importing pandas)."""
    return _module_of(value) == "pandas" and type(value).__name__ == "DataFrame"


def is_series(value: Any) -> bool:
    """A pandas Series (without importing pandas)."""
    return _module_of(value) == "pandas" and type(value).__name__ == "Series"


def is_ndarray(value: Any) -> bool:
    """A numpy ndarray (without importing numpy)."""
    return _module_of(value) == "numpy" and type(value).__name__ == "ndarray"


def is_user_variable(name: str, value: Any) -> bool:
    """Whether ``name`` is a variable the person made (not private, a module, function or class)."""
    if name.startswith("_") or name in _SHELL_NAMES:
        return False
    # By the real type: isinstance() would ask the value's own ``__class__``, which may hang.
    return not issubclass(type(value), _HIDDEN_TYPES)


def type_name(value: Any) -> str:
    """The short type name (``DataFrame``, ``ndarray``, ``int``...)."""
    return type(value).__name__


def shape_of(value: Any) -> str | None:
    """``(rows, cols)`` for values with a ``shape``, ``len N`` for sized containers, else None."""
    _doing("its `shape`")
    shape = getattr(value, "shape", None)
    if isinstance(shape, tuple):
        return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"
    if isinstance(value, str | bytes | list | tuple | dict | set | frozenset):
        _doing("its `len()`")
        try:
            return f"len {len(value)}"
        except TypeError:
            return None
    return None


_REPR = reprlib.Repr()
_REPR.maxstring = 60
_REPR.maxother = 60
_REPR.maxlist = _REPR.maxtuple = _REPR.maxdict = _REPR.maxset = 6


def short_repr(value: Any, limit: int = 80) -> str:
    """A one-line preview of ``value`` at most ``limit`` characters long."""
    try:
        if is_dataframe(value):
            _doing("its `columns`")
            columns = ", ".join(str(c) for c in list(value.columns)[:8])
            more = ", ..." if len(value.columns) > 8 else ""
            text = f"columns: {columns}{more}"
        elif is_series(value) or is_ndarray(value):
            _doing("its `dtype`")
            text = f"dtype {value.dtype}"
        else:
            _doing("its repr")
            text = _REPR.repr(value)
    except Exception:  # a broken __repr__ must not break the listing
        text = f"<{type_name(value)} object>"
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def variable_info(name: str, value: Any) -> VariableInfo:
    """One variable summarised for a listing."""
    return VariableInfo(name, type_name(value), shape_of(value), short_repr(value))


def user_variables(namespace: Mapping[str, Any]) -> list[VariableInfo]:
    """The person's variables in ``namespace``, sorted by name."""
    items = sorted(namespace.items())
    return [variable_info(name, value) for name, value in items if is_user_variable(name, value)]


def variables_table(infos: list[VariableInfo]) -> str:
    """A compact text table: name, type, shape, preview."""
    if not infos:
        return "The namespace has no user variables yet."
    rows = [f"{'name':<20} {'type':<14} {'shape':<14} value"]
    for info in infos:
        rows.append(f"{info.name:<20} {info.type_name:<14} {info.shape or '':<14} {info.summary}")
    return "\n".join(rows)


def describe_value(
    name: str, value: Any, *, max_chars: int = DETAIL_CHARS, repr_chars: int = REPR_CHARS
) -> str:
    """A detailed description: DataFrame head/dtypes/describe, array stats, container previews.

    At most ``max_chars`` characters (a plain value's repr at most ``repr_chars``); a cut
    says how long the whole was."""
    shape = shape_of(value)
    header = f"{name}: {type_name(value)}" + (f" {shape}" if shape else "")
    try:
        if is_dataframe(value):
            _doing("its DataFrame summary (dtypes, head, describe())")
            body = _describe_frame(value)
        elif is_series(value):
            _doing("its Series summary (head, describe())")
            body = _describe_series(value)
        elif is_ndarray(value):
            _doing("its array statistics")
            body = _describe_array(value)
        else:
            body = _describe_other(value, repr_chars)
    except Exception as exc:  # e.g. describe() of an exotic dtype; keep what we know
        body = f"(could not describe further: {type(exc).__name__}: {_cut(str(exc), 300)})"
    text = f"{header}\n{body}"
    if len(text) <= max_chars:
        return text
    return (
        _clean_start(text, max_chars)
        + f"\n[description cut: {len(text):,} characters, the first {max_chars:,} shown]"
    )


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else _clean_start(text, limit) + " ..."


def _clean_start(text: str, limit: int) -> str:
    """The first ``limit`` characters of ``text``, secrets redacted first with a margin past
    the cut, so none is left cut in half (the tool registry redacts the rest, whole)."""
    from loom_jupyter.tools.output import HeadTail, redact_secrets

    return redact_secrets(text[: limit + HeadTail.MARGIN])[:limit]


def _describe_frame(frame: Any) -> str:
    dtypes = "\n".join(f"  {col}: {dtype}" for col, dtype in frame.dtypes.items())
    nulls = {str(k): int(v) for k, v in frame.isna().sum().items() if int(v)}
    parts = [f"dtypes:\n{dtypes}", f"head:\n{frame.head(5).to_string(max_cols=20)}"]
    if nulls:
        parts.append(f"missing values: {nulls}")
    if len(frame.columns):
        parts.append(f"describe:\n{frame.describe(include='all').to_string(max_cols=20)}")
    parts.append(f"memory: {int(frame.memory_usage(deep=True).sum()):,} bytes")
    return "\n".join(parts)


def _describe_series(series: Any) -> str:
    parts = [f"dtype: {series.dtype}", f"name: {series.name!r}"]
    parts.append(f"head:\n{series.head(5).to_string()}")
    parts.append(f"describe:\n{series.describe().to_string()}")
    parts.append(f"missing values: {int(series.isna().sum())}")
    return "\n".join(parts)


def _describe_array(array: Any) -> str:
    parts = [f"dtype: {array.dtype}", f"size: {array.size}"]
    if array.size and array.dtype.kind in "biuf":
        values = {"min": array.min(), "max": array.max(), "mean": array.mean(), "std": array.std()}
        parts.append("stats: " + ", ".join(f"{k} {float(v):.6g}" for k, v in values.items()))
    parts.append(f"preview: {short_repr(array.ravel()[:10].tolist(), 200)}")
    return "\n".join(parts)


def _describe_other(value: Any, repr_chars: int) -> str:
    if isinstance(value, Mapping):
        _doing("its keys")
        keys = ", ".join(_cut(repr(k), 200) for k in list(value)[:20])
        return f"keys: {keys}" + (" ..." if len(value) > 20 else "")
    _doing("its repr")
    try:
        text = repr(value)
    except Exception as exc:
        return f"(repr failed: {type(exc).__name__})"
    if len(text) <= repr_chars:
        return text
    return (
        _clean_start(text, repr_chars)
        + f" ...\n[repr cut: {len(text):,} characters, the first {repr_chars:,} shown]"
    )


_MISSING = object()


@dataclass(frozen=True)
class Snapshot:
    """The user variables' objects before a run, to find what the run rebound.

    It holds references (not ids) so a freed object's id cannot be reused by
    a new value and hide a change.
    """

    entries: Mapping[str, object]


def snapshot(namespace: Mapping[str, Any]) -> Snapshot:
    """Record the object bound to every user variable of ``namespace``."""
    return Snapshot({k: v for k, v in namespace.items() if is_user_variable(k, v)})


def changed_variables(
    before: Snapshot, namespace: Mapping[str, Any], *, shapes: bool = True
) -> tuple[VariableEffect, ...]:
    """User variables created or rebound to another object (or type) since ``before``;
    without ``shapes`` no value's own code runs (names and types only)."""
    effects: list[VariableEffect] = []
    for name, value in namespace.items():
        if is_user_variable(name, value) and before.entries.get(name, _MISSING) is not value:
            shape = shape_of(value) if shapes else None
            effects.append(VariableEffect(name, type_name(value), shape))
    return tuple(effects)
