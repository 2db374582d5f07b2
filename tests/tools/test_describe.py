"""Describe helpers (shared with the Jupyter bridge) and LocalKernel's light footprint."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd

from loom_jupyter.tools.base import VariableEffect
from loom_jupyter.tools.describe import (
    changed_variables,
    describe_value,
    is_user_variable,
    shape_of,
    short_repr,
    snapshot,
    user_variables,
    variables_table,
)


class Grumpy:
    def __repr__(self) -> str:
        raise RuntimeError("no repr for you")


def test_shapes() -> None:
    assert shape_of(pd.DataFrame({"a": [1, 2, 3]})) == "(3, 1)"
    assert shape_of(np.arange(4)) == "(4,)"
    assert shape_of([1, 2]) == "len 2"
    assert shape_of({"a": 1}) == "len 1"
    assert shape_of(3.5) is None


def test_short_repr_is_bounded_and_survives_broken_reprs() -> None:
    assert short_repr("x" * 500, 40).endswith("...")
    assert len(short_repr(list(range(1000)), 40)) <= 40
    assert short_repr(Grumpy()).startswith("<Grumpy ")
    frame = pd.DataFrame({f"c{i}": [i] for i in range(12)})
    assert short_repr(frame, 200) == "columns: c0, c1, c2, c3, c4, c5, c6, c7, ..."


def test_user_variables_filter_modules_functions_classes_and_private() -> None:
    namespace = {
        "np": np,
        "helper": lambda: 1,
        "Grumpy": Grumpy,
        "_hidden": 1,
        "In": [],
        "rows": [1, 2],
        "g": Grumpy(),
    }
    assert [v.name for v in user_variables(namespace)] == ["g", "rows"]
    assert not is_user_variable("Out", {})
    table = variables_table(user_variables(namespace))
    assert "rows" in table
    assert "len 2" in table
    assert variables_table([]) == "The namespace has no user variables yet."


def test_describe_series_array_and_plain_values() -> None:
    series = pd.Series([1.0, 2.0, None], name="price")
    text = describe_value("price", series)
    assert text.startswith("price: Series (3,)")
    assert "missing values: 1" in text
    array = describe_value("arr", np.array([[1, 2], [3, 4]]))
    assert "stats: min 1, max 4, mean 2.5" in array
    assert "preview: [1, 2, 3, 4]" in array
    assert describe_value("d", {"k": 1, "j": 2}) == "d: dict len 2\nkeys: 'k', 'j'"
    assert describe_value("g", Grumpy()) == "g: Grumpy\n(repr failed: RuntimeError)"


def test_describe_dataframe_reports_missing_values() -> None:
    frame = pd.DataFrame({"a": [1.0, None], "b": ["x", "y"]})
    text = describe_value("frame", frame)
    assert "missing values: {'a': 1}" in text
    assert "memory:" in text


def test_changed_variables_by_identity() -> None:
    namespace: dict[str, object] = {"a": [1], "b": "same"}
    before = snapshot(namespace)
    namespace["a"] = [1]  # equal but a new object
    namespace["c"] = 3
    assert changed_variables(before, namespace) == (
        VariableEffect("a", "list", "len 1"),
        VariableEffect("c", "int", None),
    )


def test_describing_plain_values_imports_neither_pandas_nor_numpy_nor_matplotlib() -> None:
    script = textwrap.dedent(
        """
        import asyncio, sys
        from loom_jupyter.tools.describe import describe_value, user_variables
        from loom_jupyter.tools.local_kernel import LocalKernel

        kernel = LocalKernel()
        result = asyncio.run(kernel.run_code("x = {'a': [1, 2]}\\nprint(x)"))
        assert result.stdout == "{'a': [1, 2]}\\n", result
        describe_value("x", kernel.namespace["x"])
        user_variables(kernel.namespace)
        heavy = [m for m in ("pandas", "numpy", "matplotlib") if m in sys.modules]
        print(heavy)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"
