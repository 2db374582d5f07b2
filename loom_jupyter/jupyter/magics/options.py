"""``%cowork thinking on|off`` and ``%cowork effort LEVEL``: the model options.

They change the session's settings from the next turn on (every open sidebar is told,
through :func:`loom_jupyter.host.services.options.apply_options`); without an argument they show
what is set and whether the current model takes it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from loom_jupyter.jupyter.cell.output import show_text

if TYPE_CHECKING:
    import argparse

    from loom_jupyter.jupyter.coworker.runtime import KernelCowork

__all__ = ["effort", "thinking"]


def thinking(cw: KernelCowork, args: argparse.Namespace) -> None:
    """``%cowork thinking [on|off]``."""
    from loom_jupyter.host.services.options import apply_options, options_line

    mode: Literal["off", "adaptive"] | None = None
    if args.mode is not None:
        mode = "adaptive" if args.mode == "on" else "off"
    show_text(options_line(cw.run(apply_options(cw.host, thinking=mode))))


def effort(cw: KernelCowork, args: argparse.Namespace) -> None:
    """``%cowork effort [LEVEL|default]``."""
    from loom_jupyter.host.services.options import apply_options, options_line

    show_text(options_line(cw.run(apply_options(cw.host, effort=args.level))))
