"""Agent Skills (DESIGN §15): folders holding a ``SKILL.md``, found, checked, offered.

A skill is a folder whose ``SKILL.md`` starts with YAML front matter naming it (``name``:
lowercase letters, digits and hyphens, at most 64 characters) and saying what it is for
(``description``), then Markdown instructions; its other files are read on demand.

- The person's skills (:func:`person_skill_roots`) come first, then the project's
  (:func:`project_skill_roots`: ``.claude/skills`` and ``.agents/skills`` in the
  notebook's folder and every parent up to the project root, nearest first). A name
  already taken leaves a later skill ``shadowed``: the person's wins over the project's.
- Each ``SKILL.md`` is read once, bounded (:data:`SKILL_MAX_BYTES`) and guarded
  (:func:`~loom_jupyter.folders.read_bounded`: a link out of its folder, or a project
  skill folder out of the project, is not read). The project's are read by folder trust
  (:func:`loom_jupyter.trust.read_request`), hashed with what the folder asks for, and
  become :class:`SkillSet` from those bytes (:func:`loom_jupyter.trust.skills_for`);
  untrusted, they ``need trust`` and are never usable.
- The model sees :func:`skills_block` in the system prompt (``name: description`` per
  usable skill, sorted by name: stable bytes for the prompt cache) and reads one with the
  ``load_skill`` tool (:func:`skill_text`). A skill never changes approvals or tools:
  ``allowed-tools`` and other keys are shown, not obeyed.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from loom_jupyter.controls import visible
from loom_jupyter.errors import LoomConfigError
from loom_jupyter.folders import SKILL_FOLDERS, FolderFile, read_bounded, within
from loom_jupyter.settings import parse_yaml, user_config_path

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence

__all__ = [
    "DESCRIPTION_MAX_CHARS",
    "LISTED_FILES_MAX",
    "NAME_MAX_CHARS",
    "PROJECT_SKILL_FOLDERS",
    "SKILL_FILE",
    "SKILL_MAX_BYTES",
    "Skill",
    "SkillSet",
    "SkillSource",
    "SkillStatus",
    "find_skills",
    "loaded_skill",
    "loaded_summary",
    "parse_skill",
    "person_skill_roots",
    "project_skill_roots",
    "read_skill_files",
    "skill_files",
    "skill_text",
    "skills_block",
]

SKILL_FILE = "SKILL.md"
SKILL_MAX_BYTES = 256 * 1024
"""A larger ``SKILL.md`` is refused by its size, before a byte of it is read."""
NAME_MAX_CHARS = 64
DESCRIPTION_MAX_CHARS = 1024
"""A longer description would crowd the system prompt (the Agent Skills limit)."""
PROJECT_SKILL_FOLDERS = SKILL_FOLDERS
"""Looked for in the notebook's folder and every parent up to the project root."""
LISTED_FILES_MAX = 200
"""``load_skill`` lists at most this many of a skill's other files."""
_FOLDERS_MAX = 256  # skill folders looked at in one skills folder
_WALK_MAX = 5000  # entries a listing of a skill's files looks at
_NAME = re.compile(r"[a-z0-9-]+")

SkillSource = Literal["user", "project"]
SkillStatus = Literal["usable", "needs-trust", "invalid", "shadowed"]


@dataclass(frozen=True)
class Skill:
    """One skill as found: what it says it is, where it is, and whether it can be used."""

    name: str
    """Its front matter's ``name``; the folder's name when that is missing or wrong."""
    description: str
    source: SkillSource
    folder: Path
    """The skill's folder (its real path, when it could be resolved)."""
    status: SkillStatus = "usable"
    reason: str = ""
    """Why it is ``invalid`` or ``shadowed``."""
    keys: tuple[str, ...] = ()
    """Its front matter's other keys (``allowed-tools``, ...): shown, never obeyed."""
    file: FolderFile | None = field(default=None, repr=False, compare=False)
    """The ``SKILL.md`` as read once (its bytes are what :func:`skill_text` returns)."""

    @property
    def usable(self) -> bool:
        """Whether the model is offered it."""
        return self.status == "usable"

    @property
    def state(self) -> str:
        """The table's words: ``usable``, ``needs trust``, ``invalid: WHY``, ``shadowed: WHY``."""
        if self.status == "needs-trust":
            return "needs trust"
        return f"{self.status}: {self.reason}" if self.reason else self.status

    def body(self) -> str:
        """The whole ``SKILL.md`` as read (front matter included)."""
        data = self.file.data if self.file is not None else None
        return (data or b"").decode("utf-8", "replace")


@dataclass(frozen=True)
class SkillSet:
    """Every skill found, in a fixed order: the person's first, then the project's."""

    skills: tuple[Skill, ...] = ()

    @property
    def usable(self) -> tuple[Skill, ...]:
        """The skills the model is offered, sorted by name."""
        return tuple(sorted((s for s in self.skills if s.usable), key=lambda s: s.name))

    def get(self, name: str) -> Skill | None:
        """The usable skill called ``name``."""
        return next((s for s in self.skills if s.usable and s.name == name), None)

    def holding(self, real: Path) -> Skill | None:
        """The usable skill whose folder holds the real path ``real`` (not the folder)."""
        return next((s for s in self.usable if real != s.folder and within(real, s.folder)), None)


# -- finding ------------------------------------------------------------------------------


def person_skill_roots(home: Path | None = None) -> tuple[Path, ...]:
    """The person's skills folders, in order: Loom's (``$XDG_CONFIG_HOME/loom/skills``,
    else ``~/.config/loom/skills``), then ``~/.claude/skills`` and ``~/.agents/skills``."""
    home = home or Path.home()
    return (user_config_path().parent / "skills", *(home / f for f in PROJECT_SKILL_FOLDERS))


def project_skill_roots(root: Path, folder: Path) -> tuple[Path, ...]:
    """The project's skills folders from the notebook's ``folder`` up to ``root``,
    nearest first (``.claude/skills`` before ``.agents/skills`` at each level)."""
    try:
        below = folder.relative_to(root).parts
    except ValueError:  # the root rule always gives the folder or a parent; be safe
        below, root = (), folder
    levels = [root]
    for part in below:
        levels.append(levels[-1] / part)
    return tuple(level / name for level in reversed(levels) for name in PROJECT_SKILL_FOLDERS)


def read_skill_files(
    roots: Iterable[Path], *, inside: Path | None = None, base: Path | None = None
) -> tuple[FolderFile, ...]:
    """The ``SKILL.md`` of each folder in ``roots``, read once and bounded, in order
    (folders by name). ``inside``: a real path no skills folder may leave (the project
    root); ``base``: names are shown relative to it (else whole)."""
    found: list[FolderFile] = []
    for root in roots:
        for folder in _skill_folders(root, inside):
            path = folder / SKILL_FILE
            name = _shown(path, base)
            file = read_bounded(path, name, SKILL_MAX_BYTES, inside=_real(folder))
            if file is not None:
                found.append(file)
    return tuple(found)


def _skill_folders(root: Path, inside: Path | None) -> list[Path]:
    real = _real(root)
    if inside is not None and not within(real, inside):
        return []
    try:
        entries = sorted(e.name for e in os.scandir(root) if e.is_dir())
    except OSError:
        return []
    folders = [root / name for name in entries[:_FOLDERS_MAX]]
    return [f for f in folders if inside is None or within(_real(f), inside)]


def find_skills(
    project: Sequence[FolderFile] = (), *, trusted: bool, home: Path | None = None
) -> SkillSet:
    """The person's skills read now, then the project's from the bytes folder trust read
    (``trusted``: whether the folder's extras are on), with names settled."""
    person = read_skill_files(person_skill_roots(home))
    skills = [parse_skill(f, "user") for f in person]
    skills += [_gated(parse_skill(f, "project"), trusted) for f in project]
    return SkillSet(tuple(_settled(skills)))


def _gated(skill: Skill, trusted: bool) -> Skill:
    if trusted or skill.status != "usable":
        return skill
    return _with(skill, "needs-trust", "")


def _settled(skills: Iterable[Skill]) -> Iterator[Skill]:
    """Each name to the first skill that claims it; later ones are ``shadowed``."""
    taken: dict[str, Skill] = {}
    for skill in skills:
        first = taken.get(skill.name) if skill.status != "invalid" else None
        if first is None:
            if skill.status != "invalid":
                taken[skill.name] = skill
            yield skill
        else:
            yield _with(skill, "shadowed", f"the {first.source} skill in {first.folder} wins")


# -- checking ------------------------------------------------------------------------------


def parse_skill(file: FolderFile, source: SkillSource) -> Skill:
    """The skill whose ``SKILL.md`` is ``file``: its name and description, or why it is
    invalid (not read, not UTF-8, no front matter, front matter that does not parse, no
    or a bad name, no description)."""
    folder = _real(file.path.parent)
    try:
        front = _front_matter(file)
    except _Invalid as error:
        return Skill(file.path.parent.name, "", source, folder, "invalid", str(error), file=file)
    name, described = front.get("name"), front.get("description")
    description = " ".join(described.split()) if isinstance(described, str) else ""
    keys = tuple(str(k) for k in front if k not in ("name", "description"))
    problem = _name_problem(name) or _description_problem(described, description)
    if problem or not isinstance(name, str):
        shown = file.path.parent.name if _name_problem(name) else str(name)
        return Skill(shown, description, source, folder, "invalid", problem, keys, file)
    return Skill(name, description, source, folder, keys=keys, file=file)


class _Invalid(Exception):
    """Why a ``SKILL.md`` has no front matter to read."""


def _front_matter(file: FolderFile) -> dict[object, object]:
    if file.data is None:
        raise _Invalid(file.skipped)
    try:
        text = file.data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise _Invalid(f"{SKILL_FILE} is not UTF-8 text (byte {error.start:,})") from None
    lines = text.lstrip("\ufeff").splitlines()
    if not lines or lines[0].strip() != "---":
        raise _Invalid(f"{SKILL_FILE} has no front matter (a --- line first)")
    end = next((i for i, line in enumerate(lines[1:], 1) if line.strip() == "---"), None)
    if end is None:
        raise _Invalid(f"{SKILL_FILE}'s front matter has no closing --- line")
    try:
        front = parse_yaml("\n".join(lines[1:end]), "front matter", SKILL_FILE)
    except LoomConfigError as error:
        raise _Invalid(" ".join(str(error).split())) from None  # one line in a table
    if not isinstance(front, dict):
        raise _Invalid("front matter: not a mapping of key: value")
    return front


def _name_problem(name: object) -> str:
    if name is None or name == "":
        return "no name"
    if isinstance(name, str) and len(name) <= NAME_MAX_CHARS and _NAME.fullmatch(name):
        return ""
    return (
        f"bad name {visible(str(name))[:80]!r}: lowercase letters, digits and hyphens, at "
        f"most {NAME_MAX_CHARS} characters"
    )


def _description_problem(described: object, description: str) -> str:
    if described is None or described == "":
        return "no description"
    if not isinstance(described, str):
        return "description is not text"
    if not description:
        return "no description"
    if len(description) > DESCRIPTION_MAX_CHARS:
        return f"description longer than {DESCRIPTION_MAX_CHARS:,} characters"
    return ""


# -- what the model sees ----------------------------------------------------------------------

_BLOCK_HEAD = (
    "Skills: instructions and files for particular tasks. When a task matches one, call "
    "load_skill with its name first and follow what it says (it changes no approvals and "
    "no tools). Available skills (name: description):"
)


def skills_block(skills: SkillSet | Sequence[Skill]) -> str:
    """The system prompt's skills block: ``name: description`` per usable skill, sorted by
    name; the same bytes while the skills are the same; ``""`` when there is none."""
    found = skills.usable if isinstance(skills, SkillSet) else SkillSet(tuple(skills)).usable
    if not found:
        return ""
    return "\n".join([_BLOCK_HEAD, *(f"{s.name}: {s.description}" for s in found)])


def skill_text(skill: Skill) -> str:
    """What ``load_skill`` returns: which skill and from where, the whole ``SKILL.md``,
    and the skill's other files with their sizes (at most :data:`LISTED_FILES_MAX`)."""
    files, more = skill_files(skill.folder)
    head = [f"Skill {skill.name} ({skill.source} skill, {skill.folder}/{SKILL_FILE})"]
    if skill.keys:
        head.append(
            f"Its front matter's {', '.join(skill.keys)} are shown, not obeyed: approvals and "
            "tools stay as they are."
        )
    listing = [f"  {name}  ({size:,} bytes)" for name, size in files]
    if more:
        listing.append(f"  ... and {more:,} more not listed")
    tail = (
        [f"Its other files (read them with read_file at {skill.folder}/NAME):", *listing]
        if listing
        else ["It has no other files."]
    )
    return "\n".join([*head, "", skill.body().rstrip("\n"), "", *tail])


_LOADED = re.compile(r"Skill ([a-z0-9-]+) \((user|project) skill, (.+)/SKILL\.md\)")


def loaded_skill(text: str) -> tuple[str, SkillSource, str] | None:
    """Which skill a ``load_skill`` result (:func:`skill_text`, as archived) loaded: its
    name, source and folder, read off the result's first line; ``None`` for other text."""
    found = _LOADED.fullmatch(text.partition("\n")[0])
    if found is None:
        return None
    source: SkillSource = "user" if found[2] == "user" else "project"
    return found[1], source, found[3]


def loaded_summary(name: str, source: str, folder: object) -> str:
    """A ``load_skill`` call's one line (its tool card's summary, live and from the
    archive): ``loaded skill NAME (SOURCE: FOLDER)``."""
    return f"loaded skill {name} ({source}: {folder})"


def skill_files(folder: Path) -> tuple[tuple[tuple[str, int], ...], int]:
    """The regular files below ``folder`` but its ``SKILL.md`` (``/``-separated names
    and sizes, by name; links not followed, hidden folders skipped), at most
    :data:`LISTED_FILES_MAX`; and how many more were seen (the walk itself stops after
    :data:`_WALK_MAX` entries: a skill holding a package's whole tree stays cheap)."""
    found: list[tuple[str, int]] = []
    seen = 0
    for here, dirs, files in os.walk(folder, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        seen += len(dirs) + len(files)
        for name in sorted(files):
            path = Path(here) / name
            relative = path.relative_to(folder).as_posix()
            size = _file_size(path)
            if relative != SKILL_FILE and size is not None:
                found.append((relative, size))
        if seen >= _WALK_MAX:
            break
    listed = tuple(sorted(found[:LISTED_FILES_MAX]))
    return listed, len(found) - len(listed)


# -- small things ---------------------------------------------------------------------------


def _with(skill: Skill, status: SkillStatus, reason: str) -> Skill:
    return Skill(
        skill.name,
        skill.description,
        skill.source,
        skill.folder,
        status,
        reason,
        skill.keys,
        skill.file,
    )


def _file_size(path: Path) -> int | None:
    """A regular file's size, its link not followed; ``None`` for anything else."""
    try:
        found = path.lstat()
    except OSError:
        return None
    return found.st_size if stat.S_ISREG(found.st_mode) else None


def _shown(path: Path, base: Path | None) -> str:
    if base is not None:
        try:
            return path.relative_to(base).as_posix()
        except ValueError:
            pass
    return str(path)


def _real(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError, ValueError):
        return path
