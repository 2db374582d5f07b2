"""``@``-mentions in the sidebar: completing them, and what a sent mention adds to the prompt.

A person types ``@`` in the sidebar's message box and picks a variable of the live
namespace, a cell of the notebook (``@cell:ID``) or a file in the notebook's folder
(``@data/sales.csv``). :func:`complete` answers the box's ``complete`` requests;
:func:`expand_mentions` runs when the message is sent and appends a summary of each
mentioned object to the prompt, capped and clearly marked, so the archive keeps the
person's text and what Loom added apart. Variables come through the session's kernel
bridge, cells from the live document (else the ``.ipynb`` file), files through the
same path jail as the file tools. Nothing here imports Jupyter.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from loom_jupyter.cells import CellChange
from loom_jupyter.errors import LoomError
from loom_jupyter.host.wire.protocol import CompletionItem

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from loom_jupyter.host.runtime.document import FrontDocument
    from loom_jupyter.host.wire.protocol import CompletionKind
    from loom_jupyter.settings import Settings
    from loom_jupyter.tools.base import KernelBridge

__all__ = [
    "MENTIONS_HEADER",
    "MentionSources",
    "complete",
    "expand_mentions",
    "find_mentions",
]

MAX_ITEMS = 50
"""The most completions one answer holds."""
MAX_PER_KIND = 20
MAX_MENTIONS = 8
"""The most objects one message expands (further mentions stay plain text)."""
MAX_OBJECT_CHARS = 3000
"""One object's summary is cut here..."""
MAX_TOTAL_CHARS = 12_000
"""...and all of them together here."""
FILE_LINES = 40
"""A mentioned file adds its first lines."""
MAX_FILES_SCANNED = 2000
_MAX_DEPTH = 4
VARIABLES_SECONDS = 3.0
"""A completion does not wait longer for the namespace (a running cell holds it)."""
MENTIONS_HEADER = "[Loom added these summaries of what the message mentions with @]"
"""The line that starts the expansion in the archived message."""

_MENTION = re.compile(r"(?<![\w@.])@((?:cell:)?[\w][\w.\-/]*)")
_TRAILING = ".,;:!?)/'\""
_SKIP_DIRS = (".loom", "__pycache__", "node_modules")


@dataclass(frozen=True)
class MentionSources:
    """Where mentioned objects are looked up."""

    kernel: KernelBridge
    folder: Path
    """The notebook's folder: the file jail's root."""
    notebook: Path | None = None
    """The notebook file (its cells when no page holds the live document)."""
    document: FrontDocument | None = None
    settings: Settings | None = None


def find_mentions(text: str) -> list[str]:
    """The distinct names mentioned with ``@`` in ``text``, in order (trailing punctuation
    is not part of a name; ``a@b.com`` is no mention)."""
    names: list[str] = []
    for match in _MENTION.finditer(text):
        name = match.group(1).rstrip(_TRAILING)
        if name and name != "cell:" and name not in names:
            names.append(name)
    return names


# -- completion ---------------------------------------------------------------------------


async def complete(
    sources: MentionSources, query: str, kind: CompletionKind | str = "all"
) -> tuple[CompletionItem, ...]:
    """What ``@query`` may name: variables, then cells, then files, best match first."""
    items: list[CompletionItem] = []
    if kind in ("all", "variable") and not query.startswith("cell:"):
        items += _ranked(await _variable_items(sources), query)
    if kind in ("all", "cell"):
        cell_query = query.removeprefix("cell:")
        cells = await _cells(sources)
        items += _ranked(
            [CompletionItem("cell", f"cell:{cid}", _first_line(src)) for cid, src in cells],
            cell_query,
            also=lambda item: cell_query.lower() in item.detail.lower(),
            key=lambda item: item.label.removeprefix("cell:"),
        )
    if kind in ("all", "file") and not query.startswith("cell:"):
        files = await asyncio.to_thread(_files, sources.folder)
        items += _ranked(
            [CompletionItem("file", p, "folder" if p.endswith("/") else "file") for p in files],
            query,
            also=lambda item: query.lower() in item.label.rsplit("/", 1)[-1].lower(),
        )
    return tuple(items[:MAX_ITEMS])


def _ranked(
    items: list[CompletionItem],
    query: str,
    *,
    also: Callable[[CompletionItem], bool] | None = None,
    key: Callable[[CompletionItem], str] | None = None,
) -> list[CompletionItem]:
    """Items whose key starts with ``query`` (case-insensitive) first, then those ``also``
    accepts (e.g. a cell whose first line holds the words); at most :data:`MAX_PER_KIND`."""
    q = query.lower()
    label = key or (lambda item: item.label)
    first = [item for item in items if label(item).lower().startswith(q)]
    rest = [item for item in items if item not in first and also is not None and also(item)]
    return (first + rest)[:MAX_PER_KIND]


async def _variable_items(sources: MentionSources) -> list[CompletionItem]:
    try:
        variables = await asyncio.wait_for(sources.kernel.list_variables(), VARIABLES_SECONDS)
    except (TimeoutError, LoomError):
        return []  # a running cell holds the namespace: no variables this time
    items = []
    for v in variables:
        detail = v.type_name + (f" {v.shape}" if v.shape else "")
        items.append(CompletionItem("variable", v.name, detail))
    return items


async def _cells(sources: MentionSources) -> list[tuple[str, str]]:
    """The notebook's cells as (id, source): the live document, else the saved file."""
    document = sources.document
    if document is not None and document.available:
        result = await document.peek(CellChange("read", include_outputs=False))
        if result.ok:
            return [(cell.id, cell.source) for cell in result.cells]
    if sources.notebook is None:
        return []
    return await asyncio.to_thread(_saved_cells, sources.notebook)


def _saved_cells(notebook: Path) -> list[tuple[str, str]]:
    try:
        data = json.loads(notebook.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    cells = []
    for cell in data.get("cells", []) if isinstance(data, dict) else []:
        if isinstance(cell, dict) and isinstance(cell.get("id"), str):
            source = cell.get("source", "")
            cells.append((cell["id"], "".join(source) if isinstance(source, list) else str(source)))
    return cells


def _first_line(source: str) -> str:
    for line in source.splitlines():
        if line.strip():
            return line.strip()[:80]
    return "(empty)"


def _files(folder: Path) -> list[str]:
    """Paths below ``folder`` (relative, ``/``-separated; folders end with ``/``), shallow
    first, hidden folders and the archive skipped; at most :data:`MAX_FILES_SCANNED`."""
    root = folder.resolve()
    found: list[str] = []
    level = [root]
    for _ in range(_MAX_DEPTH):
        below: list[Path] = []
        for directory in level:
            try:
                entries = sorted(directory.iterdir(), key=lambda p: p.name.lower())
            except OSError:
                continue
            for entry in entries:
                if entry.name.startswith(".") or entry.name in _SKIP_DIRS:
                    continue
                relative = entry.relative_to(root).as_posix()
                if entry.is_dir() and not entry.is_symlink():
                    found.append(relative + "/")
                    below.append(entry)
                elif entry.is_file():
                    found.append(relative)
                if len(found) >= MAX_FILES_SCANNED:
                    return found
        level = below
    return found


# -- expansion ------------------------------------------------------------------------------


async def expand_mentions(sources: MentionSources, text: str) -> str:
    """``text``, followed by a marked summary of each object it mentions with ``@``
    (unchanged when it mentions none that exist)."""
    parts: list[str] = []
    total = 0
    cells: list[tuple[str, str]] | None = None
    for name in find_mentions(text)[:MAX_MENTIONS]:
        if name.startswith("cell:"):
            if cells is None:
                cells = await _cells(sources)
            summary = _cell_summary(name.removeprefix("cell:"), cells)
        else:
            summary = await _variable_summary(sources, name)
            if summary is None:
                summary = await asyncio.to_thread(_file_summary, sources, name)
        if summary is None:
            continue
        kind, body = summary
        body = _cap(body, MAX_OBJECT_CHARS)
        if total + len(body) > MAX_TOTAL_CHARS:
            parts.append(f"@{name} ({kind}): left out, the mentions' summaries are capped.")
            continue
        total += len(body)
        parts.append(f"@{name} ({kind}):\n```\n{body}\n```")
    if not parts:
        return text
    return f"{text}\n\n{MENTIONS_HEADER}\n\n" + "\n\n".join(parts)


def _cap(body: str, limit: int) -> str:
    body = body.replace("```", "'''")  # keep the fence ours
    if len(body) <= limit:
        return body.rstrip()
    return body[:limit].rstrip() + f"\n[... cut at {limit:,} characters]"


async def _variable_summary(sources: MentionSources, name: str) -> tuple[str, str] | None:
    if not name.isidentifier():
        return None
    from loom_jupyter.tools.namespace_reader import DescribeTimeout

    try:
        return "variable", await sources.kernel.describe_variable(name)
    except DescribeTimeout as exc:  # a value whose repr hangs: say so, not what it holds
        return "variable", str(exc)
    except LoomError:
        return None


def _cell_summary(ref: str, cells: list[tuple[str, str]]) -> tuple[str, str] | None:
    matches = [(cid, src) for cid, src in cells if cid == ref]
    if not matches:
        matches = [(cid, src) for cid, src in cells if cid.startswith(ref)]
    if len(matches) != 1:
        return None
    cid, source = matches[0]
    number = [c for c, _ in cells].index(cid) + 1
    return f"cell {number} of the notebook, id {cid}", source


def _file_summary(sources: MentionSources, name: str) -> tuple[str, str] | None:
    """A file's first lines, only inside the notebook's folder (the file tools' jail)."""
    from loom_jupyter.tools.base import ToolContext
    from loom_jupyter.tools.paths import decode_text, display_path, resolve_path, sniff_binary

    if sources.settings is None:
        return None
    ctx = ToolContext(notebook_dir=sources.folder, settings=sources.settings, kernel=sources.kernel)
    try:
        real = resolve_path(ctx, name.rstrip("/"))
        shown = display_path(ctx, real)
        if real.is_dir():
            names = sorted(p.name + ("/" if p.is_dir() else "") for p in real.iterdir())
            visible = [n for n in names if not n.startswith(".")]
            return "folder", "\n".join(visible[:100]) or "(empty)"
        if not real.is_file():
            return None
        size = real.stat().st_size
        with real.open("rb") as handle:
            head = handle.read(MAX_OBJECT_CHARS * 2)
    except (LoomError, OSError):
        return None
    if sniff_binary(head):
        return f"file {shown}, {size:,} bytes", "(binary: not shown)"
    try:
        text = decode_text(head, shown)
    except LoomError:
        text = head.decode("utf-8", errors="replace")
    lines = text.splitlines()[:FILE_LINES]
    more = len(text.splitlines()) > FILE_LINES or size > len(head)
    tail = f"\n[... first {len(lines)} lines of {size:,} bytes]" if more else ""
    return f"file {shown}, {size:,} bytes", "\n".join(lines) + tail
