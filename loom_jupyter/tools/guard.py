"""Loom's guard rails: writes the agent never makes without asking (DESIGN §12, review F8).

Whatever the approval mode and whatever the person answered "Always" to before, a write
to one of these asks every time: the folder's ``loom.yaml`` and instruction files
(``AGENTS.md``, ``CLAUDE.md``, ``.loom/instructions.md``), the ``.loom/`` archive folder,
the repository's ``.git/`` (its hooks and config run commands), notebook files
(``.ipynb``: cells change through the cell tools, which show diffs) and the person's Loom
configuration. File tools know their path; for ``shell`` and ``run_python`` the command or
code is read for those names (a heuristic: it names the rail the agent is reaching for).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from loom_jupyter.folders import CONFIG_FILE_NAME, INSTRUCTION_FILES
from loom_jupyter.settings import user_config_path

__all__ = ["AlwaysScope", "code_rail", "mentioned_rail", "protected_path"]

_INSTRUCTION_NAMES = frozenset(Path(name).name for name in INSTRUCTION_FILES) - {"instructions.md"}
_MENTION = re.compile(
    r"loom\.ya?ml|AGENTS\.md|CLAUDE\.md|trust\.json|\.config/loom"
    r"|(?:^|[\s'\"/=(])\.(?:loom|git)(?:/|\b)|[\w.-]+\.ipynb\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class AlwaysScope:
    """What an "Always" answer allows from then on: ``key`` and the words the person reads
    on the button and in ``%cowork approval``. A later call is covered when its own scope's
    key is the same, or, for a ``prefix`` scope (a folder of files), begins with it."""

    key: str
    label: str
    prefix: bool = False


def protected_path(real: Path) -> str | None:
    """Why writing ``real`` always asks (which guard rail it is), or ``None``."""
    parts = real.parts
    if real.name == CONFIG_FILE_NAME:
        return f"{real.name}, Loom's settings for this folder"
    if real.name in _INSTRUCTION_NAMES or parts[-2:] == (".loom", "instructions.md"):
        return f"{real.name}, an instruction file the model reads"
    if ".loom" in parts:
        return "the .loom/ folder, where the conversation's archive lives"
    if ".git" in parts:
        return "the repository's .git/ folder, whose hooks and config run commands"
    if real.suffix == ".ipynb":
        return f"{real.name}, a notebook file (cells change through the cell tools)"
    config = user_config_path().parent
    if real == config or config in real.parents:
        return "your own Loom configuration"
    return None


def mentioned_rail(text: str) -> str | None:
    """The guard rail a command or code names (``loom.yaml``, ``.git/`` ...), or ``None``."""
    found = _MENTION.search(text)
    return found.group().strip(" '\"=(") if found else None


def code_rail(code: str) -> str | None:
    """The guard rail Python ``code`` reaches for: one it names, when the code also writes,
    runs processes or builds code (a first question; the text can hide a name)."""
    from loom_jupyter.effects import CONSENT_EFFECTS
    from loom_jupyter.lineage import analyze

    named = mentioned_rail(code)
    if named is None or not CONSENT_EFFECTS.intersection(analyze(code).effects):
        return None
    return f"{named} (the code names it)"
