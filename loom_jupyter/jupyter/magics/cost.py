"""``%cowork cost``'s plot of the cost ledger (its tables are the command registry's:
``loom_jupyter/host/commands/usage.py``)."""

from __future__ import annotations

import base64
import importlib.util
import io
from typing import TYPE_CHECKING

from loom_jupyter.jupyter.cell.output import show_table, show_text
from loom_jupyter.models.pricing import unpriced_call as _unpriced

if TYPE_CHECKING:
    from collections.abc import Sequence

    from loom_jupyter.records import ModelCallRecord

__all__ = ["NO_MATPLOTLIB", "cost_plot_png", "show_cost", "show_plot"]

NO_MATPLOTLIB = (
    "(A plot of tokens and cost per call needs matplotlib: pip install matplotlib, "
    "then run %cowork cost again.)"
)


def show_cost(calls: Sequence[ModelCallRecord], *, rich: bool) -> None:
    """The per-call table of ``%cowork cost`` (the registry's, :func:`per_call_table`);
    in a notebook, a plot of tokens and cost per call."""
    from loom_jupyter.host.commands.usage import per_call_table

    if not calls:
        show_text("No model calls yet in this session.")
        return
    table = per_call_table(calls)
    show_table(table.headers, table.rows)
    if rich:
        show_plot(calls)


def show_plot(calls: Sequence[ModelCallRecord]) -> None:
    """The plot under the table; without matplotlib (not a dependency), how to get it."""
    if not _has_matplotlib():
        show_text(NO_MATPLOTLIB)
        return
    from IPython.display import display

    words = f"(A plot of tokens and cost for each of the {len(calls)} model calls above.)"
    display({"image/png": cost_plot_png(calls), "text/plain": words}, raw=True)


def _has_matplotlib() -> bool:
    try:
        return importlib.util.find_spec("matplotlib") is not None
    except ModuleNotFoundError:  # only the notebook's folder has one: never Loom's
        return False


def cost_plot_png(calls: Sequence[ModelCallRecord]) -> str:
    """A small two-axis bar/line plot, base64 PNG. Uses a bare Figure: pyplot state is untouched."""
    from matplotlib.figure import Figure  # the installed one, never the folder's (importguard)

    figure = Figure(figsize=(5, 2.2), dpi=80)
    axes = figure.add_subplot()
    xs = list(range(1, len(calls) + 1))
    axes.bar(xs, [c.input_tokens + c.output_tokens for c in calls], color="#90caf9", label="tokens")
    axes.set_xlabel("model call")
    axes.set_ylabel("tokens")
    twin = axes.twinx()
    costs = [float("nan") if _unpriced(c) else c.cost_usd for c in calls]  # a gap, not $0
    twin.plot(xs, costs, color="#c62828", marker="o", label="cost $")
    twin.set_ylabel("cost (USD)")
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return base64.b64encode(buffer.getvalue()).decode("ascii")
