"""A short hash of a small value, to tell a rebuilt value from the original.

Numbers, short strings and bytes and small containers of them hash their ``repr``; NumPy
arrays and pandas objects their shape, dtype and (up to 100,000 cells) their bytes.
"""

from __future__ import annotations

import hashlib
from typing import Any

__all__ = ["fingerprint"]

_FINGERPRINT_CELLS = 100_000  # arrays and frames up to this many cells are hashed whole
_FINGERPRINT_TEXT = 10_000  # strings, bytes and small containers up to this repr length


def fingerprint(value: Any) -> str | None:
    """A short hash of a small value, to tell a rebuilt value from the original; else None.

    Numbers, short strings and bytes, small containers of them: their ``repr``. NumPy
    arrays and pandas objects: shape, dtype and (up to 100,000 cells) their bytes.
    Anything else, or anything too big to hash cheaply: None (no check).
    """
    try:
        text = _fingerprint_text(value)
    except Exception:  # a value's own repr or hash may fail; then there is no check
        return None
    if text is None:
        return None
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _fingerprint_text(value: Any) -> str | None:
    if value is None or isinstance(value, (bool, int, float, complex)):
        return f"{type(value).__name__}:{value!r}"
    if isinstance(value, (str, bytes)):
        return f"{type(value).__name__}:{value!r}" if len(value) <= _FINGERPRINT_TEXT else None
    module = type(value).__module__.split(".", 1)[0]
    if module == "numpy" and hasattr(value, "shape") and hasattr(value, "dtype"):
        head = f"ndarray:{value.shape}:{value.dtype}"
        if value.size > _FINGERPRINT_CELLS or value.dtype == object:
            return head
        return head + ":" + hashlib.sha256(value.tobytes()).hexdigest()
    if module == "pandas" and hasattr(value, "shape"):
        dtypes = getattr(value, "dtypes", getattr(value, "dtype", ""))
        head = f"{type(value).__name__}:{value.shape}:{dtypes!s}"
        size = 1
        for dim in value.shape:
            size *= int(dim)
        if size > _FINGERPRINT_CELLS:
            return head
        import pandas  # already loaded: the value is a pandas object

        hashed = pandas.util.hash_pandas_object(value, index=True).to_numpy().tobytes()
        return head + ":" + hashlib.sha256(hashed).hexdigest()
    if isinstance(value, (tuple, list, dict, set, frozenset)) and len(value) <= 1_000:
        text = repr(sorted(value, key=repr) if isinstance(value, (set, frozenset)) else value)
        if len(text) <= _FINGERPRINT_TEXT and " at 0x" not in text:
            return f"{type(value).__name__}:{text}"
    return None
