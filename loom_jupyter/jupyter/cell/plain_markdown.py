"""Markdown made readable as plain text, line by line (for terminal IPython).

Headings lose their ``#`` marks (level 1 and 2 are underlined), bullets become
``•``, code fences disappear and their lines are indented, emphasis and inline
code marks are dropped, links show their address in parentheses, quotes get a
bar. Tables and everything else pass through unchanged. Streaming text is fed
in pieces; only complete lines are converted, so a fence or a ``**`` split
across pieces is still understood.
"""

from __future__ import annotations

import re

__all__ = ["MarkdownLines", "plain_line", "plain_text"]

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^(\s*)[-*+]\s+(.*)$")
_RULE = re.compile(r"^\s*([-*_])(\s*\1){2,}\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_QUOTE = re.compile(r"^\s*>\s?(.*)$")
_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")
_STRONG = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_EMPHASIS = re.compile(
    r"(?<![\w*])\*(?=\S)([^*]+?)(?<=\S)\*(?!\*)|(?<![\w_])_(?=\S)([^_]+?)(?<=\S)_(?!\w)"
)
_CODE = re.compile(r"`([^`]+)`")


def _inline(text: str) -> str:
    text = _LINK.sub(lambda m: m.group(1) if m.group(1) == m.group(2) else f"{m[1]} ({m[2]})", text)
    text = _STRONG.sub(r"\2", text)
    text = _EMPHASIS.sub(lambda m: m.group(1) or m.group(2), text)
    return _CODE.sub(r"\1", text)


def plain_line(line: str) -> str:
    """One Markdown line (outside a code block) as plain text (may add an underline)."""
    if (heading := _HEADING.match(line)) is not None:
        title = _inline(heading.group(2))
        marks = {1: "=", 2: "-"}.get(len(heading.group(1)))
        return f"{title}\n{marks * len(title)}" if marks else title
    if _RULE.match(line):
        return "─" * 40
    if (bullet := _BULLET.match(line)) is not None:
        return f"{bullet.group(1)}• {_inline(bullet.group(2))}"
    if (quote := _QUOTE.match(line)) is not None:
        return f"│ {_inline(quote.group(1))}"
    return _inline(line)


def plain_text(markdown: str) -> str:
    """A whole Markdown text as plain text (a cell answer's ``text/plain``)."""
    lines = MarkdownLines()
    return (lines.feed(markdown) + lines.flush()).rstrip("\n")


class MarkdownLines:
    """Feed streamed Markdown; get back the plain text of each completed line."""

    def __init__(self) -> None:
        self._partial = ""
        self._in_code = False

    def feed(self, text: str) -> str:
        """The plain text of the lines ``text`` completes (each ending in a newline)."""
        lines = (self._partial + text).split("\n")
        self._partial = lines.pop()
        return "".join(self._convert(line) + "\n" for line in lines if self._keep(line))

    def flush(self) -> str:
        """The plain text of the unfinished last line (end of a segment)."""
        line, self._partial = self._partial, ""
        text = self._convert(line) if line and self._keep(line) else ""
        self._in_code = False
        return text

    def _keep(self, line: str) -> bool:
        """False for fence lines (they only switch code mode)."""
        if _FENCE.match(line):
            self._in_code = not self._in_code
            return False
        return True

    def _convert(self, line: str) -> str:
        return f"    {line}" if self._in_code else plain_line(line)
