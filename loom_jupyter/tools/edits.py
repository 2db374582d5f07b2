"""File tools that change files: ``write_file`` and ``edit_file`` (exact string replacement).

Both are confined like the reading tools and refuse the ``.loom`` archive
folder. For approval they describe the change as a unified diff.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, ClassVar

from loom_jupyter.errors import ToolError
from loom_jupyter.messages import ToolSpec
from loom_jupyter.tools.approval import ApprovalRequest
from loom_jupyter.tools.base import FileEffect, ToolAccess, ToolContext, ToolOutput, TypedTool
from loom_jupyter.tools.guard import AlwaysScope, protected_path
from loom_jupyter.tools.paths import ARCHIVE_DIR, display_path, read_text, resolve_path
from loom_jupyter.tools.schema import Limit, ToolInput, input_schema

__all__ = ["EditFile", "EditFileInput", "WriteFile", "WriteFileInput", "unified_diff"]

_DIFF_LINES = 400  # lines of diff shown to the person when approving


def unified_diff(old: str, new: str, shown: str) -> str:
    """A unified diff of ``old`` -> ``new`` for ``shown`` (capped for display)."""
    lines = list(
        difflib.unified_diff(
            old.splitlines(), new.splitlines(), f"a/{shown}", f"b/{shown}", lineterm=""
        )
    )
    if len(lines) > _DIFF_LINES:
        lines = [*lines[:_DIFF_LINES], f"[... {len(lines) - _DIFF_LINES} more diff lines]"]
    return "\n".join(lines) or "(no change)"


def _writable_target(ctx: ToolContext, raw: str) -> tuple[Path, str]:
    real = resolve_path(ctx, raw)
    shown = display_path(ctx, real)
    if _in_archive_folder(shown):
        raise ToolError(
            f"{shown} is inside the conversation archive folder ({ARCHIVE_DIR}/), "
            "which loom manages; write somewhere else."
        )
    if real.is_dir():
        raise ToolError(f"{shown} is a folder; give a file path.")
    if real.exists() and not real.is_file():
        raise ToolError(f"{shown} is not a regular file (a pipe, socket or device).")
    return real, shown


@dataclass(frozen=True, kw_only=True)
class WriteFileInput(ToolInput):
    """``write_file``: the file and its whole new content."""

    path: str
    """Path relative to the notebook's folder."""
    content: str


@dataclass(frozen=True, kw_only=True)
class EditFileInput(ToolInput):
    """``edit_file``: the file, the exact text to replace and what replaces it."""

    path: str
    """Path relative to the notebook's folder."""
    old_string: Annotated[str, Limit(min_length=1)]
    new_string: str
    replace_all: bool = False


class _FileGuard:
    """What the two file tools share for approval: guard rails and a folder's "Always"."""

    def guard_rail(
        self, args: WriteFileInput | EditFileInput, ctx: ToolContext | None
    ) -> str | None:
        """The guard rail this path is (``loom.yaml``, ``AGENTS.md``, ``.git/``...), if any."""
        if ctx is None:
            return protected_path(Path(args.path))
        real = resolve_path(ctx, args.path)
        if _in_archive_folder(display_path(ctx, real)):
            return None  # refused by the tool itself, whatever the person would answer
        return protected_path(real)

    def always_scope(
        self, args: WriteFileInput | EditFileInput, ctx: ToolContext | None
    ) -> AlwaysScope:
        """ "Always" allows changes to files in this file's folder and below it."""
        shown = display_path(ctx, resolve_path(ctx, args.path)) if ctx else args.path
        folder = Path(shown).parent.as_posix()
        if folder in ("", "."):
            return AlwaysScope("files:./", "changes to any file in the notebook's folder", True)
        return AlwaysScope(f"files:./{folder}/", f"changes to files in {folder}/", True)


def _in_archive_folder(shown: str) -> bool:
    return shown == ARCHIVE_DIR or shown.startswith(ARCHIVE_DIR + "/")


def _stats(text: str) -> str:
    lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    return f"{lines} lines, {len(text.encode('utf-8')):,} bytes"


class WriteFile(_FileGuard, TypedTool[WriteFileInput]):
    """``write_file``: create or overwrite a text file (parent folders are created)."""

    input_type = WriteFileInput
    access: ClassVar[ToolAccess] = "write"
    spec: ClassVar[ToolSpec] = ToolSpec(
        name="write_file",
        description=(
            "Create or overwrite a text file in the notebook's folder with `content`. "
            "Prefer edit_file for changing part of an existing file."
        ),
        input_schema=input_schema(WriteFileInput),
    )

    def approval_request(self, args: WriteFileInput, ctx: ToolContext | None) -> ApprovalRequest:
        """Shows the diff against the existing file, or the new file's content."""
        path, content = args.path, args.content
        if ctx is None:
            return ApprovalRequest("write_file", f"write {path}", content)
        real, shown = _writable_target(ctx, path)
        if not real.exists():
            return ApprovalRequest("write_file", f"create {shown} ({_stats(content)})", content)
        old = read_text(real, shown, max_bytes=ctx.settings.max_file_bytes)
        return ApprovalRequest(
            "write_file", f"overwrite {shown}", unified_diff(old, content, shown)
        )

    async def run(self, args: WriteFileInput, ctx: ToolContext) -> ToolOutput:
        """Write the file and report it."""
        real, shown = _writable_target(ctx, args.path)
        content = args.content
        existed = real.exists()
        real.parent.mkdir(parents=True, exist_ok=True)
        real.write_text(content, encoding="utf-8", newline="")
        verb = "Overwrote" if existed else "Created"
        text = f"{verb} {shown} ({_stats(content)})."
        return ToolOutput.text(text, summary=f"{verb.lower()} {shown}").with_effects(
            FileEffect(shown, "write")
        )


class EditFile(_FileGuard, TypedTool[EditFileInput]):
    """``edit_file``: replace an exact string in a text file."""

    input_type = EditFileInput
    access: ClassVar[ToolAccess] = "write"
    spec: ClassVar[ToolSpec] = ToolSpec(
        name="edit_file",
        description=(
            "Edit a text file by exact string replacement. `old_string` must match the file "
            "exactly (whitespace and indentation included) and occur exactly once, unless "
            "replace_all is true. Include enough surrounding lines to make it unique."
        ),
        input_schema=input_schema(EditFileInput),
    )

    def approval_request(self, args: EditFileInput, ctx: ToolContext | None) -> ApprovalRequest:
        """Shows the edit as a diff of the file."""
        if ctx is None:
            detail = f"- {args.old_string}\n+ {args.new_string}"
            return ApprovalRequest("edit_file", f"edit {args.path}", detail)
        _real, shown, old, new, count = self._plan(args, ctx)
        return ApprovalRequest(
            "edit_file", f"edit {shown} ({count} change)", unified_diff(old, new, shown)
        )

    async def run(self, args: EditFileInput, ctx: ToolContext) -> ToolOutput:
        """Apply the replacement and say where it happened."""
        real, shown, old, new, count = self._plan(args, ctx)
        real.write_text(new, encoding="utf-8", newline="")
        line = old[: old.index(args.old_string)].count("\n") + 1
        where = f"at line {line}" if count == 1 else f"{count} occurrences, first at line {line}"
        text = f"Edited {shown}: replaced {where}."
        return ToolOutput.text(text, summary=f"edited {shown}").with_effects(
            FileEffect(shown, "edit")
        )

    def _plan(self, args: EditFileInput, ctx: ToolContext) -> tuple[Path, str, str, str, int]:
        real, shown = _writable_target(ctx, args.path)
        old = read_text(real, shown, max_bytes=ctx.settings.max_file_bytes)
        find, replace = args.old_string, args.new_string
        if find == replace:
            raise ToolError("old_string and new_string are the same; nothing to change.")
        count = old.count(find)
        if count == 0:
            raise ToolError(
                f"old_string was not found in {shown}. It must match exactly, whitespace and "
                "indentation included; read the file (read_file) and copy the text."
            )
        if count > 1 and not args.replace_all:
            lines = _match_lines(old, find)
            raise ToolError(
                f"old_string occurs {count} times in {shown} (lines {lines}). Include more "
                "surrounding text to make it unique, or set replace_all to true."
            )
        return real, shown, old, old.replace(find, replace), count


def _match_lines(text: str, find: str) -> str:
    lines: list[str] = []
    start = text.find(find)
    while start != -1 and len(lines) < 10:
        lines.append(str(text.count("\n", 0, start) + 1))
        start = text.find(find, start + 1)
    return ", ".join(lines)
