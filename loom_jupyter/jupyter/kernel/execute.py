"""Run the agent's code in the live user namespace (on the main thread).

The code runs where the person's data is: names it defines stay in
``shell.user_ns``. Printed output, the value of a trailing expression,
``display()`` outputs and new matplotlib figures are captured and returned;
figures come back as PNG images for the model. Nothing is printed into the
cell here: rendering is the front's job.
"""

from __future__ import annotations

import ast
import base64
import contextlib
import io
import sys
import traceback
from typing import TYPE_CHECKING, Any

from loom_jupyter.jupyter.kernel.fdcapture import captured_descriptors
from loom_jupyter.messages import ImageBlock
from loom_jupyter.tools.base import ExecutionResult
from loom_jupyter.tools.describe import changed_variables, snapshot

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

__all__ = ["run_in_namespace"]

_REPR_LIMIT = 4000


def run_in_namespace(shell: Any, source: str, *, cell_id: int) -> ExecutionResult:
    """Execute ``source`` in ``shell.user_ns``; must be called on the main thread."""
    from IPython.core.displaypub import CapturingDisplayPublisher

    before = snapshot(shell.user_ns)
    figures_before = _figure_numbers()
    stdout, stderr = io.StringIO(), io.StringIO()
    publisher = CapturingDisplayPublisher()
    result: str | None = None
    error: str | None = None
    with (
        _swapped(shell, publisher),
        contextlib.redirect_stdout(stdout),
        contextlib.redirect_stderr(stderr),
        captured_descriptors(stdout),  # os.system, subprocesses, C extensions
    ):
        try:
            result = _execute(shell, source, cell_id)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # the agent's code may raise anything, even SystemExit
            error = _format_error(exc)
    images, rich = _outputs(publisher.outputs)
    return ExecutionResult(
        stdout=stdout.getvalue(),
        stderr=stderr.getvalue(),
        result=result,
        error=error,
        images=images + _new_figures(figures_before),
        rich=rich,
        changed=changed_variables(before, shell.user_ns),
        execution_count=getattr(shell, "execution_count", None),
    )


def _execute(shell: Any, source: str, cell_id: int) -> str | None:
    code = shell.transform_cell(source)  # %magics and !shell lines work as in a cell
    filename = shell.compile.cache(code, cell_id)  # tracebacks can show the source lines
    tree = ast.parse(code, filename=filename)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    ns = shell.user_ns
    exec(compile(tree, filename, "exec"), ns, ns)
    if last is None:
        return None
    value = eval(compile(ast.Expression(last.value), filename, "eval"), ns, ns)
    if value is None:
        return None
    ns["_"] = value
    return _short_repr(value)


def _short_repr(value: Any) -> str:
    try:
        text = repr(value)
    except Exception as exc:
        text = f"<repr failed: {type(exc).__name__}: {exc}>"
    if len(text) > _REPR_LIMIT:
        text = text[:_REPR_LIMIT] + f"... [{len(text) - _REPR_LIMIT} more characters]"
    return text


def _format_error(exc: BaseException) -> str:
    lines = traceback.format_exception(type(exc), exc, exc.__traceback__)
    # Drop our own frames (the exec/eval call sites) so the model sees only its code.
    kept = [line for line in lines if __file__ not in line]
    return "".join(kept).rstrip()


@contextlib.contextmanager
def _swapped(shell: Any, publisher: Any) -> Iterator[None]:
    saved = shell.display_pub
    shell.display_pub = publisher
    try:
        yield
    finally:
        shell.display_pub = saved


def _outputs(outputs: list[Any]) -> tuple[tuple[ImageBlock, ...], tuple[str, ...]]:
    images: list[ImageBlock] = []
    rich: list[str] = []
    for output in outputs:
        data: Mapping[str, Any] = output.get("data") or {}
        if "image/png" in data:
            images.append(ImageBlock(_b64(data["image/png"])))
        elif "text/markdown" in data:
            rich.append(str(data["text/markdown"]))
        elif "text/plain" in data:
            rich.append(str(data["text/plain"]))
    return tuple(images), tuple(rich)


def _b64(png: str | bytes) -> str:
    return png if isinstance(png, str) else base64.b64encode(png).decode("ascii")


def _figure_numbers() -> set[int]:
    pyplot = sys.modules.get("matplotlib.pyplot")
    return set(pyplot.get_fignums()) if pyplot is not None else set()


def _new_figures(before: set[int]) -> tuple[ImageBlock, ...]:
    """PNGs of figures the code created; closed so the inline backend does not repeat them."""
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is None:
        return ()
    images: list[ImageBlock] = []
    for number in sorted(set(pyplot.get_fignums()) - before):
        figure = pyplot.figure(number)
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png", dpi=80, bbox_inches="tight")
        images.append(ImageBlock(base64.b64encode(buffer.getvalue()).decode("ascii")))
        pyplot.close(figure)
    return tuple(images)
