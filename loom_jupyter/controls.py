"""Control characters made visible: text from files, archives and the model never drives
a terminal.

A file the agent once read may hold terminal escapes (an OSC 52 clipboard write, a title
change, hidden text); printed raw by the CLI or a terminal front they would act on the
person's terminal. :func:`visible` keeps newlines and tabs, turns CRLF into a newline and
shows every other C0 control as its Unicode control picture (ESC as ``␛``), DEL as
``␡`` and C1 controls as ``\\x9b``-style text.
"""

from __future__ import annotations

import re

__all__ = ["visible"]

_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def visible(text: str) -> str:
    """``text`` safe to print on a terminal: no control character acts."""
    return _CONTROLS.sub(_picture, text.replace("\r\n", "\n"))


def _picture(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)
    if code == 0x7F:
        return "\u2421"
    return f"\\x{code:02x}"
