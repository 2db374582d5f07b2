"""Turning open matplotlib figures into PNG image blocks (without importing matplotlib).

Only code that already imported ``matplotlib.pyplot`` can have open figures,
so a run that never plotted pays nothing.
"""

from __future__ import annotations

import base64
import contextlib
import io
import os
import sys
import warnings
from typing import TYPE_CHECKING

from loom_jupyter.messages import ImageBlock

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["capture_figures", "headless_plotting"]


def capture_figures(*, dpi: int = 100) -> tuple[ImageBlock, ...]:
    """Save every open pyplot figure as a PNG image block, then close it."""
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is None:
        return ()
    images: list[ImageBlock] = []
    for number in plt.get_fignums():
        figure = plt.figure(number)
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
        plt.close(figure)
        images.append(ImageBlock(base64.b64encode(buffer.getvalue()).decode("ascii")))
    return tuple(images)


@contextlib.contextmanager
def headless_plotting() -> Iterator[None]:
    """Plot off screen while code runs: Agg backend, ``plt.show()`` a silent no-op.

    The backend is only chosen when matplotlib was not imported yet (the
    person's own choice is kept otherwise); ``MPLBACKEND`` is how matplotlib
    lets a host pick one before import.
    """
    if "matplotlib" not in sys.modules:
        os.environ.setdefault("MPLBACKEND", "Agg")
    with warnings.catch_warnings():
        # plt.show() under Agg warns that it cannot show; the figures are captured instead.
        warnings.filterwarnings("ignore", message=".*non-interactive.*")
        yield
