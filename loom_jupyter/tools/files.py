"""File tools that read: ``read_file``, ``list_files``, ``search_files``.

All paths go through the jail in :mod:`loom_jupyter.tools.paths`. The writing
tools (``write_file``, ``edit_file``) live in :mod:`loom_jupyter.tools.edits`
and are re-exported here.

Reads are bounded (security review R10): a line range is found by scanning the file in
chunks, at most :data:`SCAN_BYTES` per call, keeping only the lines asked for, each cut
at :data:`LONG_LINE_CHARS` characters; the result says which lines were cut and how long
they are, and when the scan stopped before the range ended. All file work runs on a
worker thread, never on the engine loop.
"""

from __future__ import annotations

import asyncio
import codecs
import fnmatch
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, BinaryIO, ClassVar

from loom_jupyter.errors import PathOutsideNotebookError, ToolError
from loom_jupyter.messages import ToolSpec
from loom_jupyter.tools.base import FileEffect, ToolAccess, ToolContext, ToolOutput, TypedTool
from loom_jupyter.tools.edits import EditFile, WriteFile
from loom_jupyter.tools.load_skill import skill_path
from loom_jupyter.tools.output import HeadTail, redact, secret_values
from loom_jupyter.tools.paths import (
    decode_text,
    display_path,
    is_skipped_dir,
    read_searchable,
    read_text,
    require_file,
    resolve_path,
    sniff_binary,
)
from loom_jupyter.tools.regex_worker import RegexJob, search_in_child
from loom_jupyter.tools.schema import Limit, ToolInput, input_schema

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

__all__ = [
    "LONG_LINE_CHARS",
    "SCAN_BYTES",
    "CutLine",
    "EditFile",
    "LineScan",
    "ListFiles",
    "ListFilesInput",
    "ReadFile",
    "ReadFileInput",
    "SearchFiles",
    "SearchFilesInput",
    "WriteFile",
    "scan_lines",
]

_MAX_LINE = 300  # characters shown of one matching line in search results
SCAN_BYTES = 16 * 1024 * 1024
"""A line range reads at most this many bytes of the file per call."""
LONG_LINE_CHARS = 5000
"""A longer line is shown cut to this many characters (secrets redacted before the cut)."""
_CHUNK = 1024 * 1024
_CUT_MARGIN = HeadTail.MARGIN
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
        """Read the file, refusing paths outside the folder (but in a usable skill's folder),
        binary and oversized files."""
        real, shown = _readable(ctx, args.path)
        start, end = args.start_line, args.end_line
        if start is not None and end is not None and end < start:
            raise ToolError(f"end_line ({end}) is before start_line ({start}).")
        settings = ctx.settings
        budget = settings.tool_output_max_chars - 400
        clean = _redactor(ctx)
        if start is None and end is None:
            text = await asyncio.to_thread(
                _read_whole, real, shown, settings.max_file_bytes, budget, clean
            )
        else:
            scan = await asyncio.to_thread(
                scan_lines,
                real,
                shown,
                start or 1,
                end,
                keep_chars=budget,
                clean=clean,
            )
            text = _render_scan(shown, scan, start or 1, budget)
        effect = FileEffect(shown, "read")
        return ToolOutput.text(text, summary=f"read {shown}").with_effects(effect)


def _readable(ctx: ToolContext, raw: str) -> tuple[Path, str]:
    """The real path of ``raw`` and how to show it: inside the notebook's folder, else
    inside the folder of a skill the model may load (DESIGN §15)."""
    try:
        real = resolve_path(ctx, raw)
    except PathOutsideNotebookError:
        found = skill_path(ctx, raw)
        if found is None:
            raise
        return found
    return real, display_path(ctx, real)


@dataclass(frozen=True)
class CutLine:
    """A line shown cut: its number, its length, and how much of it is shown."""

    number: int
    size: int
    """Its bytes (without the newline), as far as they were read."""
    whole: bool
    """False when the scan stopped inside it: it is longer than ``size``."""
    shown: int
    """Characters shown."""

    def note(self) -> str:
        """The line's note in the result."""
        length = f"{self.size:,} bytes long" if self.whole else f"over {self.size:,} bytes long"
        return (
            f"[line {self.number} is {length}; only its first {self.shown:,} characters are shown]"
        )


@dataclass
class LineScan:
    """The lines of a range, as read within the budget."""

    lines: list[tuple[int, str]] = field(default_factory=list)
    """(number, text) of each line, a long one cut."""
    cut: list[CutLine] = field(default_factory=list)
    stopped: str | None = None
    """Why the scan stopped before the range ended, if it did."""
    scanned: int = 0
    """Bytes read."""


def _open_binary(real: Path) -> BinaryIO:
    return real.open("rb")


def _redactor(ctx: ToolContext) -> Callable[[str], str]:
    """The registry's redaction (its secrets), for text this tool cuts before the registry
    sees it."""
    servers = ctx.settings.mcp_servers
    found = {*secret_values(), *(secret for server in servers for secret in server.secrets())}
    secrets = sorted(found, key=len, reverse=True)
    return lambda text: redact(text, secrets)


def _cut(text: str, limit: int, clean: Callable[[str], str]) -> str:
    """``text`` cut at ``limit`` characters. Secrets are redacted first, with a margin past
    the cut, so none is left cut in half (the registry redacts the text after, whole)."""
    return clean(text[: limit + _CUT_MARGIN])[:limit]


def _identity(text: str) -> str:
    return text


def _read_whole(
    real: Path, shown: str, max_bytes: int, budget: int, clean: Callable[[str], str]
) -> str:
    lines = read_text(real, shown, max_bytes=max_bytes).splitlines()
    numbered: list[tuple[int, str]] = []
    cut: list[CutLine] = []
    for number, line in enumerate(lines, 1):
        if len(line) > LONG_LINE_CHARS:
            size = len(line.encode("utf-8"))
            line = _cut(line, LONG_LINE_CHARS, clean)
            cut.append(CutLine(number, size, True, len(line)))
        numbered.append((number, line))
    return _render_lines(shown, numbered, len(lines), budget, cut, None)


def _render_scan(shown: str, scan: LineScan, start: int, budget: int) -> str:
    if not scan.lines:  # the scan stopped before the range
        return f"{shown}: line {start} was not reached.\n[{scan.stopped}]"
    return _render_lines(shown, scan.lines, None, budget, scan.cut, scan.stopped)


def scan_lines(
    real: Path,
    shown: str,
    start: int,
    end: int | None,
    *,
    keep_chars: int,
    long_line: int = LONG_LINE_CHARS,
    scan_bytes: int = SCAN_BYTES,
    clean: Callable[[str], str] = _identity,
) -> LineScan:
    """Lines ``start``..``end`` (1-based, inclusive; ``None``: to the end) of a text file,
    reading at most ``scan_bytes`` bytes in chunks and keeping lines until their numbered
    rows fill ``keep_chars`` (the output limit), each cut at ``long_line`` characters:
    memory and time stay bounded whatever the file holds, a 400 MB file with no newline
    included. ``clean`` (a redactor) runs over a long line's start before it is cut."""
    file_size = require_file(real, shown)
    scan = LineScan()
    line_bytes = (long_line + _CUT_MARGIN) * 4 + 4  # UTF-8 for the kept characters, at most
    number, size, kept = 1, 0, 0
    head = bytearray()
    with _open_binary(real) as handle:
        while True:
            chunk = handle.read(min(_CHUNK, scan_bytes - scan.scanned))
            if scan.scanned == 0 and sniff_binary(chunk):
                raise ToolError(
                    f"{shown} is a binary file (it contains NUL bytes); file tools read text only."
                )
            if not chunk:
                break
            scan.scanned += len(chunk)
            pos = 0
            if number < start:  # skip the lines before the range, whole chunks at a time
                newlines = chunk.count(b"\n")
                if number + newlines < start:
                    number += newlines
                    pos = len(chunk)
                else:
                    pos = _after_newline(chunk, start - number)
                    number = start
            while pos < len(chunk):
                newline = chunk.find(b"\n", pos)
                stop = newline if newline >= 0 else len(chunk)
                if number >= start:
                    if len(head) < line_bytes:
                        head += chunk[pos : min(stop, pos + line_bytes - len(head))]
                    size += stop - pos
                if newline < 0:
                    break
                if number >= start:
                    kept += _keep_line(scan, shown, number, head, size, long_line, clean, True)
                number, size, pos = number + 1, 0, newline + 1
                head.clear()
                if end is not None and number > end:
                    return scan
                if kept > keep_chars:
                    scan.stopped = (
                        f"output stops to fit the tool output limit; continue with "
                        f"start_line={number}"
                    )
                    return scan
            if scan.scanned >= scan_bytes:
                break
        at_end = not chunk or scan.scanned >= file_size
    if size and number >= start:  # the last line (no newline at its end), or a part of it
        _keep_line(scan, shown, number, head, size, long_line, clean, at_end)
    if not at_end:
        where = f"inside line {number}" if size and number >= start else f"at line {number}"
        scan.stopped = (
            f"the scan stopped after reading {scan.scanned:,} bytes, {where}, the most one call "
            "reads; the rest of the range was not read. Read further with run_python or shell"
        )
    elif not scan.lines:
        raise ToolError(f"{shown} has fewer than {start} lines.")
    return scan


def _after_newline(chunk: bytes, count: int) -> int:
    """The position just after the ``count``-th newline of ``chunk`` (which has as many)."""
    low, high = 0, len(chunk) - 1
    while low < high:  # the first position up to which ``count`` newlines are found
        middle = (low + high) // 2
        if chunk.count(b"\n", 0, middle + 1) >= count:
            high = middle
        else:
            low = middle + 1
    return low + 1


def _keep_line(
    scan: LineScan,
    shown: str,
    number: int,
    head: bytearray,
    size: int,
    long_line: int,
    clean: Callable[[str], str],
    whole: bool,
) -> int:
    """Add one line (decoded, cut at ``long_line`` characters) to ``scan``; the size of its
    numbered row."""
    if whole and len(head) == size:
        text = decode_text(bytes(head), shown).rstrip("\r\n")
    else:  # the start of a longer line: drop a character cut in two at the end
        text = _decode_start(bytes(head), shown)
    if len(text) > long_line or not whole or len(head) < size:
        text = _cut(text, long_line, clean)
        scan.cut.append(CutLine(number, size, whole, len(text)))
    scan.lines.append((number, text))
    return len(text) + 8


def _decode_start(data: bytes, shown: str) -> str:
    if b"\x00" in data:
        decode_text(data, shown)  # raises: binary
    try:
        return codecs.getincrementaldecoder("utf-8")().decode(data, final=False)
    except UnicodeDecodeError:
        return decode_text(data, shown)  # raises with the offset, like a whole file


def _render_lines(
    shown: str,
    numbered: list[tuple[int, str]],
    total: int | None,
    budget: int,
    cut: list[CutLine],
    stopped: str | None,
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
    notes = [line.note() for line in cut if line.number <= last]
    if stopped is not None and not stop:
        notes.append(f"[{stopped}]")
    tail = "".join("\n" + note for note in notes[:20])
    if len(notes) > 20:
        tail += f"\n[... {len(notes) - 20} more lines cut]"
    return f"{shown} ({span}):\n" + "\n".join(body) + stop + tail


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
