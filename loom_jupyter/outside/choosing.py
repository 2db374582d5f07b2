"""Which notebook ``loom-jupyter mcp`` works in when ``--notebook`` does not say (DESIGN §14).

The person's pages tell each notebook's kernel whether it is on screen and when it last
was (``hello``, ``focus``); a kernel tells an agent's link as ``pages``. :func:`survey` asks
every open notebook's kernel at once (a ``loom-agent`` link each, Loom left unloaded where
it is not), and :func:`choose` takes, in order:

1. the notebook a page shows now (of several, the one brought on screen last);
2. the one a page showed last;
3. the one whose kernel was active last (Jupyter Server's ``last_activity``), as before.

:func:`mark` says what was heard of each, for ``list_notebooks``.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from loom_jupyter.outside.kernel_link import KernelLink

if TYPE_CHECKING:
    from loom_jupyter.outside.jupyter_api import NotebookSession
    from loom_jupyter.outside.kernel_link import Attention
    from loom_jupyter.outside.servers import ServerInfo

__all__ = ["SURVEY_SECONDS", "Seen", "choose", "mark", "survey"]

SURVEY_SECONDS = 30.0
"""How long one kernel may take to say which pages it has (its pages' check included)."""


@dataclass(frozen=True)
class Seen:
    """One open notebook, what its kernel said of its pages, and the link that asked."""

    notebook: NotebookSession
    attention: Attention | None
    """None: Loom is not loaded in the kernel, or it did not say."""
    link: KernelLink | None = None
    """The link that asked, still open (None when it could not be opened)."""


async def survey(
    server: ServerInfo,
    notebooks: list[NotebookSession],
    client: str,
    keep: KernelLink | None = None,
) -> list[Seen]:
    """Ask every notebook's kernel about its pages, all at once (``keep``: a link already
    open to one of them, asked over that link). The caller closes the links it does not
    keep."""
    asked = [_ask(server, notebook, client, keep) for notebook in notebooks]
    return list(await asyncio.gather(*asked))


async def _ask(
    server: ServerInfo, notebook: NotebookSession, client: str, keep: KernelLink | None
) -> Seen:
    if keep is not None and keep.usable and keep.kernel_id == notebook.kernel_id:
        with contextlib.suppress(Exception):
            return Seen(notebook, await asyncio.wait_for(keep.look(), SURVEY_SECONDS), keep)
        return Seen(notebook, None, keep)
    if notebook.state == "dead":
        return Seen(notebook, None)
    link = KernelLink(server, notebook.kernel_id, notebook.path, client)
    try:
        await asyncio.wait_for(link.connect(load=False), SURVEY_SECONDS)
    except Exception:  # no answer: this notebook is chosen, if at all, by its activity
        await link.close()
        return Seen(notebook, None)
    if not link.usable:
        await link.close()
        return Seen(notebook, None)
    return Seen(notebook, link.attention, link)


def choose(seen: list[Seen]) -> tuple[Seen, str] | None:
    """The notebook to work in, and why (``seen`` most recently active first)."""
    if not seen:
        return None
    shown = [s for s in seen if s.attention is not None and s.attention.on_screen]
    if shown:
        best = min(shown, key=_ago)
        return best, "it is on screen in JupyterLab"
    focused = [s for s in seen if s.attention is not None and s.attention.focused_ago is not None]
    if focused:
        best = min(focused, key=_ago)
        return best, f"it was on screen last ({_duration(_ago(best))} ago)"
    if len(seen) == 1:
        return seen[0], "it is the only notebook open"
    return seen[0], (
        "its kernel was active last (no Loom sidebar says which notebook is on screen)"
    )


def mark(seen: Seen) -> str:
    """What was heard of one notebook's pages, e.g. ``on screen, 1 page``."""
    attention = seen.attention
    if attention is None:
        return "Loom not loaded" if seen.notebook.state != "dead" else "kernel dead"
    if attention.on_screen:
        where = "on screen"
    elif attention.focused_ago is not None:
        where = f"on screen {_duration(attention.focused_ago)} ago"
    else:
        where = "never on screen"
    pages = "no page open" if attention.pages == 0 else f"{attention.pages} page(s) open"
    return f"{where}, {pages}"


def _ago(seen: Seen) -> float:
    ago = seen.attention.focused_ago if seen.attention is not None else None
    return float("inf") if ago is None else ago


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
