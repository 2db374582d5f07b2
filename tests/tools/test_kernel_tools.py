"""Kernel tools over a LocalKernel: run_python, inspect_variables, read_notebook, insert_cell."""

from __future__ import annotations

import base64
import dataclasses
import json
from typing import TYPE_CHECKING, Any

import nbformat

from loom_jupyter.messages import ImageBlock
from loom_jupyter.tools.base import VariableEffect

if TYPE_CHECKING:
    from pathlib import Path

    from loom_jupyter.tools.local_kernel import LocalKernel

    from .conftest import Caller

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


async def test_stdout_and_the_final_expression(call: Caller) -> None:
    out = await call("run_python", code="x = 21\nprint('hello')\nx * 2")
    assert not out.is_error
    assert (
        out.text_content
        == "In [1]:\n[stdout]\nhello\n[result]\n42\n[variables created or changed] x (int)"
    )
    assert out.effects == (VariableEffect("x", "int"),)
    assert out.summary == "ran Python code · set x"


async def test_namespace_persists_between_runs(call: Caller, kernel: LocalKernel) -> None:
    await call("run_python", code="total = 10")
    out = await call("run_python", code="total += 5\ntotal")
    assert "[result]\n15" in out.text_content
    assert kernel.namespace["total"] == 15


async def test_an_exception_is_an_error_with_the_cell_traceback(call: Caller) -> None:
    code = "def ratio(a, b):\n    return a / b\n\nprint('before')\nratio(1, 0)"
    out = await call("run_python", code=code)
    assert out.is_error
    text = out.text_content
    assert "[stdout]\nbefore" in text
    assert "Traceback (most recent call last):" in text
    assert 'File "<cell-1>", line 2, in ratio' in text
    assert "return a / b" in text
    assert text.rstrip().endswith("ZeroDivisionError: division by zero")
    assert "local_kernel.py" not in text  # our own frames are not the model's business
    assert out.summary == "error: ZeroDivisionError: division by zero"


async def test_a_syntax_error_is_reported(call: Caller) -> None:
    out = await call("run_python", code="for i in range(3)\n    print(i)")
    assert out.is_error
    assert "SyntaxError" in out.text_content


async def test_stderr_is_captured(call: Caller) -> None:
    out = await call("run_python", code="import sys\nsys.stderr.write('careful\\n')")
    assert "[stderr]\ncareful" in out.text_content


async def test_variable_effects_with_shapes(call: Caller) -> None:
    code = (
        "import numpy as np\nimport pandas as pd\n"
        "df = pd.DataFrame({'a': range(5), 'b': list('vwxyz')})\n"
        "arr = np.zeros((3, 4))\nnames = ['x', 'y']\n_private = 1"
    )
    out = await call("run_python", code=code)
    effects = {e.name: e for e in out.effects if isinstance(e, VariableEffect)}
    assert set(effects) == {"df", "arr", "names"}  # modules and private names are not variables
    assert effects["df"] == VariableEffect("df", "DataFrame", "(5, 2)")
    assert effects["arr"] == VariableEffect("arr", "ndarray", "(3, 4)")
    assert effects["names"] == VariableEffect("names", "list", "len 2")
    again = await call("run_python", code="names = names\narr = arr + 1")
    assert [e.name for e in again.effects if isinstance(e, VariableEffect)] == [
        "arr"
    ]  # rebinding to the same object is no change


async def test_a_matplotlib_figure_becomes_an_image_block(call: Caller) -> None:
    code = (
        "import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\nax.plot([1, 3, 2])\nplt.show()"
    )
    out = await call("run_python", code=code)
    assert not out.is_error
    images = [b for b in out.content if isinstance(b, ImageBlock)]
    assert len(images) == 1
    assert images[0].media_type == "image/png"
    assert base64.b64decode(images[0].data).startswith(PNG_MAGIC)
    assert "[1 figure(s); 1 attached as images]" in out.text_content
    assert "non-interactive" not in out.text_content
    followup = await call("run_python", code="len(plt.get_fignums())")
    assert "[result]\n0" in followup.text_content  # figures are closed once captured
    assert not any(isinstance(b, ImageBlock) for b in followup.content)


async def test_inspect_variables_table_and_details(call: Caller) -> None:
    await call(
        "run_python",
        code=(
            "import pandas as pd\n"
            "sales = pd.DataFrame({'region': ['n', 's'], 'amount': [10.5, 20.0]})\nn = 3"
        ),
    )
    table = await call("inspect_variables")
    assert not table.is_error
    lines = table.text_content.splitlines()
    assert lines[0].split() == ["name", "type", "shape", "value"]
    assert any(
        line.startswith("sales") and "DataFrame" in line and "(2, 2)" in line for line in lines
    )
    assert any(line.startswith("n ") and "int" in line for line in lines)
    assert not any(line.startswith("pd ") for line in lines)
    detail = await call("inspect_variables", name="sales")
    text = detail.text_content
    assert text.startswith("sales: DataFrame (2, 2)")
    assert "amount: float64" in text
    assert "head:" in text
    assert "describe:" in text
    assert "mean" in text


async def test_inspect_unknown_variable_names_the_known_ones(call: Caller) -> None:
    await call("run_python", code="alpha = 1")
    out = await call("inspect_variables", name="beta")
    assert out.is_error
    assert "No variable named 'beta'" in out.text_content
    assert "alpha" in out.text_content


async def test_insert_cell_records_the_proposal(call: Caller, kernel: LocalKernel) -> None:
    out = await call("insert_cell", source="df.describe()")
    assert not out.is_error
    assert "Proposed cell #1" in out.text_content
    assert [c.source for c in kernel.proposed_cells] == ["df.describe()"]
    run = await call("insert_cell", source="y = 2", run=True)
    assert "ran without error" in run.text_content
    assert kernel.namespace["y"] == 2


def _write_notebook(path: Path) -> None:
    v4: Any = nbformat.v4  # nbformat is untyped
    nb = v4.new_notebook()
    nb.cells = [
        v4.new_markdown_cell("# Sales analysis"),
        v4.new_code_cell(
            "import pandas as pd\nprint('loaded')",
            execution_count=1,
            outputs=[v4.new_output("stream", name="stdout", text="loaded\n" + "x" * 5000)],
        ),
        v4.new_code_cell(
            "1/0",
            execution_count=2,
            outputs=[
                v4.new_output(
                    "error", ename="ZeroDivisionError", evalue="division by zero", traceback=["..."]
                )
            ],
        ),
        v4.new_code_cell(
            "plot()",
            execution_count=3,
            outputs=[
                v4.new_output(
                    "display_data", data={"text/plain": "<Figure>", "image/png": "iVBORw0KGgo="}
                )
            ],
        ),
    ]
    write: Any = nbformat.write
    write(nb, str(path))


async def test_read_notebook_cells_outputs_and_history(notebook_dir: Path, call: Caller) -> None:
    path = notebook_dir / "sales.ipynb"
    _write_notebook(path)
    call.ctx = dataclasses.replace(call.ctx, notebook_path=path)
    await call("run_python", code="value = 42")
    out = await call("read_notebook")
    assert not out.is_error
    text = out.text_content
    ids = [cell["id"] for cell in json.loads(path.read_text())["cells"]]
    assert "Notebook sales.ipynb (4 cells; showing 1-4)" in text
    assert f"[cell 1 id={ids[0]}] markdown\n# Sales analysis" in text  # ids for the cell tools
    assert f"[cell 2 id={ids[1]}] code, In [1]\nimport pandas as pd" in text
    assert "  -> stdout: loaded" in text
    assert "chars cut]" in text  # the long output is trimmed
    assert "  -> error: ZeroDivisionError: division by zero" in text
    assert "  -> <Figure> [+ image]" in text
    assert "Kernel history (last 1 runs, oldest first):\nIn [1]: value = 42" in text
    ranged = await call("read_notebook", start_cell=3, end_cell=3, include_outputs=False, history=0)
    assert f"[cell 3 id={ids[2]}] code, In [2]\n1/0" in ranged.text_content
    assert "[cell 2 " not in ranged.text_content
    assert "-> error" not in ranged.text_content
    assert "Kernel history" not in ranged.text_content


async def test_read_notebook_without_a_file_or_with_a_broken_one(
    notebook_dir: Path, call: Caller
) -> None:
    out = await call("read_notebook")
    assert not out.is_error
    assert "No notebook file is known" in out.text_content
    broken = notebook_dir / "broken.ipynb"
    broken.write_text("{ not json")
    call.ctx = dataclasses.replace(call.ctx, notebook_path=broken)
    bad = await call("read_notebook")
    assert bad.is_error
    assert "could not be read as a notebook" in bad.text_content
    assert "read_file" in bad.text_content


async def test_read_notebook_of_a_notebook_with_no_cells(notebook_dir: Path, call: Caller) -> None:
    path = notebook_dir / "new.ipynb"
    write: Any = nbformat.write
    write(nbformat.v4.new_notebook(), str(path))
    call.ctx = dataclasses.replace(call.ctx, notebook_path=path)
    out = await call("read_notebook", history=0)
    assert not out.is_error, out.text_content
    assert "Notebook new.ipynb (0 cells" in out.text_content


async def test_top_level_await_works_like_in_ipython(call: Caller) -> None:
    code = "import asyncio\nvalue = await asyncio.sleep(0, result=7)\nvalue * 6"
    out = await call("run_python", code=code)
    assert not out.is_error
    assert "[result]\n42" in out.text_content
    code = "import asyncio\nawait asyncio.wait_for(asyncio.sleep(1), 0)"
    failing = await call("run_python", code=code)
    assert failing.is_error
    assert "TimeoutError" in failing.text_content
    assert 'File "<cell-2>", line 2' in failing.text_content
