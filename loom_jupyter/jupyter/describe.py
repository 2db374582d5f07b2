"""Short descriptions of user-namespace values, for the inspect tools and the panel.

Duck-typed (``shape``, ``dtypes``, ``head``), so pandas and numpy are never
imported here; values that are not dataframes or arrays get a capped repr.
"""

from __future__ import annotations

import io
import types
from typing import TYPE_CHECKING, Any

from loom_jupyter.tools.base import VariableInfo

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["describe_value", "is_user_variable", "namespace_variables", "shape_of", "variable_info"]

_SUMMARY_CHARS = 120
_DETAIL_CHARS = 6000
_HIDDEN = {"In", "Out", "exit", "quit", "get_ipython"}


def is_user_variable(name: str, value: Any) -> bool:
    """A public data value (not a module, function, class or IPython helper)."""
    if name.startswith("_") or name in _HIDDEN:
        return False
    return not isinstance(
        value, types.ModuleType | types.FunctionType | types.BuiltinFunctionType | type
    )


def shape_of(value: Any) -> str | None:
    """``"3x4"`` for frames and arrays, ``"len 7"`` for sized containers, else None."""
    shape = getattr(value, "shape", None)
    if isinstance(shape, tuple) and all(isinstance(n, int) for n in shape):
        return "x".join(str(n) for n in shape) or "scalar"
    if isinstance(value, list | tuple | dict | set | frozenset | str | bytes):
        return f"len {len(value)}"
    return None


def variable_info(name: str, value: Any) -> VariableInfo:
    """One line about ``value``."""
    return VariableInfo(
        name, type(value).__name__, shape_of(value), _cap(_safe_repr(value), _SUMMARY_CHARS)
    )


def describe_value(name: str, value: Any) -> str:
    """Details of one value: head/dtypes/describe for frames, stats for arrays, else repr."""
    lines = [f"{name}: {type(value).__module__}.{type(value).__name__}"]
    if (shape := shape_of(value)) is not None:
        lines.append(f"shape: {shape}")
    lines.extend(_frame_details(value) or _array_details(value) or [_safe_repr(value)])
    return _cap("\n".join(lines), _DETAIL_CHARS)


def _frame_details(value: Any) -> list[str]:
    if not (hasattr(value, "dtypes") and hasattr(value, "head") and hasattr(value, "describe")):
        return []
    parts = [f"dtypes:\n{value.dtypes}", f"head:\n{value.head()}"]
    try:
        parts.append(f"describe:\n{value.describe()}")
    except Exception as exc:  # describe() fails on some frames (all-object columns, say)
        parts.append(f"describe: unavailable ({type(exc).__name__})")
    if hasattr(value, "info"):
        buffer = io.StringIO()
        value.info(buf=buffer)
        parts.append(buffer.getvalue())
    return parts


def _array_details(value: Any) -> list[str]:
    if not (hasattr(value, "dtype") and hasattr(value, "ndim") and hasattr(value, "size")):
        return []
    parts = [f"dtype: {value.dtype}"]
    if value.size and value.dtype.kind in "biuf":
        parts.append(f"min {value.min()!r}, max {value.max()!r}, mean {value.mean()!r}")
    parts.append(_safe_repr(value))
    return parts


def _safe_repr(value: Any) -> str:
    try:
        return repr(value)
    except Exception as exc:  # a broken __repr__ must not break the tool
        return f"<repr failed: {type(exc).__name__}>"


def _cap(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def namespace_variables(namespace: Mapping[str, Any]) -> list[VariableInfo]:
    """Every user variable of ``namespace``, sorted by name."""
    return [variable_info(n, v) for n, v in sorted(namespace.items()) if is_user_variable(n, v)]
