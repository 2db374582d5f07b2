"""File tools that read: ``read_file``, ``list_files``, ``search_files``.

All paths go through the jail in :mod:`loom_jupyter.tools.paths`. The writing
tools (``write_file``, ``edit_file``) live in :mod:`loom_jupyter.tools.edits`
and are re-exported here.
"""

from __future__ import annotations

import asyncio
import fnmatch
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, ClassVar

from loom_jupyter.errors import ToolError
from loom_jupyter.messages import ToolSpec
from loom_jupyter.tools.base import FileEffect, ToolAccess, ToolContext, ToolOutput, TypedTool
from loom_jupyter.tools.edits import EditFile, WriteFile
from loom_jupyter.tools.paths import (
    display_path,
    is_skipped_dir,
    iter_lines,
    read_searchable,
    read_text,
    resolve_path,
)
from loom_jupyter.tools.regex_worker import RegexJob, search_in_child
from loom_jupyter.tools.schema import Limit, ToolInput, input_schema

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = [
    "EditFile",
    "ListFiles",
    "ListFilesInput",
    "ReadFile",
    "ReadFileInput",
    "SearchFiles",
    "SearchFilesInput",
    "WriteFile",
]

_MAX_LINE = 300  # characters shown of one matching line in search results
_MAX_PATTERN = 2000  # a longer pattern takes the regex compiler seconds (holding the GIL)
LineNumber = Annotated[int, Limit(ge=1)]


@dataclass(frozen=True, kw_only=True)
class ReadFileInput(ToolInput):
    """``read_file``: the file, and a range of its lines (1-based, inclusive)."""

    path: str
    """Path relative to the notebook's folder."""
    start_line: LineNumber | None = None
    end_line: LineNumber | None = None


class ReadFile(TypedTool[ReadFileInput]):
    """``read_file``: a text file with numbered lines, optionally a line range."""

    input_type = ReadFileInput
    access: ClassVar[ToolAccess] = "read"
    spec: ClassVar[ToolSpec] = ToolSpec(
        name="read_file",
        description=(
            "Read a text file in the notebook's folder. Lines are numbered. Use start_line and "
            "end_line (1-based, inclusive) for part of a file, e.g. a big one."
        ),
        input_schema=input_schema(ReadFileInput),
    )

    async def run(self, args: ReadFileInput, ctx: ToolContext) -> ToolOutput:
        """Read the file, refusing paths outside the folder, binary and oversized files."""
        real = resolve_path(ctx, args.path)
        shown = display_path(ctx, real)
        start, end = args.start_line, args.end_line
        if start is not None and end is not None and end < start:
            raise ToolError(f"end_line ({end}) is before start_line ({start}).")
        if start is None and end is None:
            lines = read_text(real, shown, max_bytes=ctx.settings.max_file_bytes).splitlines()
            numbered = list(enumerate(lines, 1))
            total: int | None = len(lines)
        else:
            numbered = _line_range(real, shown, start or 1, end)
            total = None
        text = _render_lines(shown, numbered, total, ctx.settings.tool_output_max_chars - 400)
        effect = FileEffect(shown, "read")
        return ToolOutput.text(text, summary=f"read {shown}").with_effects(effect)


def _line_range(real: Path, shown: str, start: int, end: int | None) -> list[tuple[int, str]]:
    picked: list[tuple[int, str]] = []
    for number, line in enumerate(iter_lines(real, shown), 1):
        if end is not None and number > end:
            break
        if number >= start:
            picked.append((number, line))
    if not picked:
        raise ToolError(f"{shown} has fewer than {start} lines.")
    return picked


def _render_lines(
    shown: str, numbered: list[tuple[int, str]], total: int | None, budget: int
) -> str:
    if not numbered:
        return f"{shown} is empty."
    body: list[str] = []
    used = 0
    last = numbered[0][0]
    stop = ""
    for number, line in numbered:
        row = f"{number:>6}\t{line}"
        if used + len(row) > budget and body:
            stop = (
                f"\n[output stops at line {last} to fit the tool output limit; "
                f"continue with start_line={number}]"
            )
            break
        body.append(row)
        used += len(row) + 1
        last = number
    span = f"lines {numbered[0][0]}-{last}" + (f" of {total}" if total is not None else "")
    return f"{shown} ({span}):\n" + "\n".join(body) + stop


@dataclass(frozen=True, kw_only=True)
class ListFilesInput(ToolInput):
    """``list_files``: a folder, and a glob to look for below it."""

    path: str = "."
    """Path relative to the notebook's folder."""
    pattern: str | None = None
    recursive: bool = False
    include_hidden: bool = False
    limit: Annotated[int, Limit(ge=1, le=5000)] = 200


class ListFiles(TypedTool[ListFilesInput]):
    """``list_files``: a folder's entries, or files matching a glob below it."""

    input_type = ListFilesInput
    access: ClassVar[ToolAccess] = "read"
    spec: ClassVar[ToolSpec] = ToolSpec(
        name="list_files",
        description=(
            "List files in the notebook's folder (or a subfolder). With `pattern` (a glob such as "
            "'*.csv', or 'data/*.csv' to match the relative path) files are searched recursively. "
            "Hidden folders and the .loom archive folder are skipped unless include_hidden is true."
        ),
        input_schema=input_schema(ListFilesInput),
    )

    async def run(self, args: ListFilesInput, ctx: ToolContext) -> ToolOutput:
        """List the folder's entries (directories end with ``/``) with sizes."""
        real = resolve_path(ctx, args.path)
        shown = display_path(ctx, real)
        if not real.is_dir():
            raise ToolError(f"{shown} is not a folder. Use read_file for files.")
        pattern = args.pattern
        recursive = args.recursive or pattern is not None
        entries = _walk(real, recursive=recursive, hidden=args.include_hidden)
        if pattern is not None:
            entries = (e for e in entries if _matches(e, pattern, real))
        # Walking a big tree blocks; a worker thread keeps the event loop (and the UI) live.
        limit = args.limit
        text = await asyncio.to_thread(_render_entries, ctx, real, entries, limit)
        return ToolOutput.text(text, summary=f"listed {shown}").with_effects(
            FileEffect(shown, "list")
        )


@dataclass(frozen=True)
class _Entry:
    path: Path
    is_dir: bool


def _walk(top: Path, *, recursive: bool, hidden: bool) -> Iterator[_Entry]:
    """Entries below ``top`` in sorted order; never follows symlinked folders."""
    for dirpath, dirnames, filenames in os.walk(top, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if hidden or not is_skipped_dir(d))
        base = Path(dirpath)
        entries = [_Entry(base / d, True) for d in dirnames]
        entries += [_Entry(base / f, False) for f in filenames if hidden or not f.startswith(".")]
        yield from sorted(entries, key=lambda e: e.path.name.lower())
        if not recursive:
            return


def _matches(entry: _Entry, pattern: str, top: Path) -> bool:
    """Match the file name, or the path relative to ``top`` when the pattern has a ``/``."""
    if entry.is_dir:
        return False
    if "/" not in pattern:
        return fnmatch.fnmatch(entry.path.name, pattern)
    relative = entry.path.relative_to(top).as_posix()
    return fnmatch.fnmatch(relative, pattern.removeprefix("./").removeprefix("**/")) or (
        pattern.startswith("**/") and fnmatch.fnmatch(relative, pattern)
    )


def _render_entries(ctx: ToolContext, top: Path, entries: Iterator[_Entry], limit: int) -> str:
    rows: list[str] = []
    more = 0
    for entry in entries:
        if len(rows) >= limit:
            more += 1
            continue
        rows.append(_entry_row(top, entry))
    shown = display_path(ctx, top)
    if not rows:
        return f"No matching entries in {shown}."
    tail = (
        [f"[... {more} more entries not shown; raise limit or narrow the pattern]"] if more else []
    )
    return f"{shown}:\n" + "\n".join(rows + tail)


def _entry_row(top: Path, entry: _Entry) -> str:
    relative = entry.path.relative_to(top).as_posix()
    if entry.is_dir:
        return relative + "/"
    try:
        size = entry.path.stat().st_size
    except OSError:  # a dangling symlink
        return f"{relative}  (broken link)"
    return f"{relative}  {_human_size(size)}"


def _human_size(size: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GB"


@dataclass(frozen=True, kw_only=True)
class SearchFilesInput(ToolInput):
    """``search_files``: what to look for, where, and how many lines to show."""

    pattern: Annotated[str, Limit(min_length=1, max_length=_MAX_PATTERN)]
    path: str = "."
    """Path relative to the notebook's folder."""
    regex: bool = False
    ignore_case: bool = False
    glob: str | None = None
    limit: Annotated[int, Limit(ge=1, le=1000)] = 100


class SearchFiles(TypedTool[SearchFilesInput]):
    """``search_files``: find a substring or regex in the text files below a folder."""

    input_type = SearchFilesInput
    access: ClassVar[ToolAccess] = "read"
    spec: ClassVar[ToolSpec] = ToolSpec(
        name="search_files",
        description=(
            "Search text files in the notebook's folder for a substring (or a regular expression "
            "with regex=true). Prints path:line: text for each match. `glob` limits the files "
            "searched by name (e.g. '*.py'). Binary, oversized and hidden files are skipped."
        ),
        input_schema=input_schema(SearchFilesInput),
    )

    async def run(self, args: SearchFilesInput, ctx: ToolContext) -> ToolOutput:
        """Search and list the matching lines, capped at ``limit``."""
        real = resolve_path(ctx, args.path)
        shown = display_path(ctx, real)
        pattern, regex, limit = args.pattern, args.regex, args.limit
        matcher = _matcher(pattern, regex, args.ignore_case)
        if regex:  # in a child process: a pathological pattern must not stall the kernel
            files = await asyncio.to_thread(_files_below, real, args.glob)
            hits, skipped = await search_in_child(_regex_job(ctx, args, files, limit))
        else:
            hits, skipped = await asyncio.to_thread(
                _search_below, ctx, real, args.glob, matcher, limit
            )
        text = _render_hits(pattern, shown, hits, skipped, limit)
        return ToolOutput.text(text, summary=f"searched {shown}").with_effects(
            FileEffect(shown, "search")
        )


def _matcher(pattern: str, regex: bool, ignore_case: bool) -> re.Pattern[str]:
    flags = re.IGNORECASE if ignore_case else 0
    try:
        return re.compile(pattern if regex else re.escape(pattern), flags)
    except re.error as exc:
        raise ToolError(
            f"invalid regular expression {pattern!r}: {exc}. Fix it or set regex=false."
        ) from exc


def _text_candidates(top: Path, glob: str | None) -> list[Path]:
    if not top.is_dir():
        raise ToolError(f"{top.name} does not exist. Use list_files to see what is there.")
    entries = _walk(top, recursive=True, hidden=False)
    return [e.path for e in entries if not e.is_dir and (glob is None or _matches(e, glob, top))]


def _files_below(real: Path, glob: str | None) -> list[Path]:
    return [real] if real.is_file() else _text_candidates(real, glob)


def _regex_job(ctx: ToolContext, args: SearchFilesInput, files: list[Path], limit: int) -> RegexJob:
    return RegexJob(
        pattern=args.pattern,
        ignore_case=args.ignore_case,
        files=[(str(path), display_path(ctx, path)) for path in files],
        limit=limit,
        max_bytes=ctx.settings.max_file_bytes,
        max_line=_MAX_LINE,
    )


def _search_below(
    ctx: ToolContext, real: Path, glob: str | None, matcher: re.Pattern[str], limit: int
) -> tuple[list[str], int]:
    return _search(ctx, _files_below(real, glob), matcher, limit)


def _search(
    ctx: ToolContext, files: list[Path], matcher: re.Pattern[str], limit: int
) -> tuple[list[str], int]:
    hits: list[str] = []
    skipped = 0
    for path in files:
        text = read_searchable(path, ctx.settings.max_file_bytes)
        if text is None:
            skipped += 1
            continue
        shown = display_path(ctx, path)  # walked without following links: inside the folder
        for number, line in enumerate(text.splitlines(), 1):
            if matcher.search(line):
                hits.append(f"{shown}:{number}: {line.strip()[:_MAX_LINE]}")
                if len(hits) > limit:
                    return hits, skipped
    return hits, skipped


def _render_hits(pattern: str, shown: str, hits: list[str], skipped: int, limit: int) -> str:
    if not hits:
        head = f"No matches for {pattern!r} in {shown}."
    else:
        extra = f" (first {limit}; narrow the search for more)" if len(hits) > limit else ""
        head = f"Matches for {pattern!r} in {shown}{extra}:\n" + "\n".join(hits[:limit])
    if skipped:
        head += f"\n[{skipped} binary, oversized or linked files skipped]"
    return head
