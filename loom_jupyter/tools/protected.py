"""Rails checked after the fact: the protected files, before and after a call (issue 38).

A text rail reads a command for names like ``loom.yaml``, and code can build those names
from pieces. What counts is the effect: around every call that runs code or commands the
caller takes a :class:`ProtectedWatch`'s :meth:`~ProtectedWatch.before` (the baseline)
and :meth:`~ProtectedWatch.after`. Each change to a protected place comes back as a
:class:`ProtectedChange`, which :func:`undo` takes back, :func:`reapply` puts back once
the person says "Keep this change", and :func:`diff_text` shows; the watch's own
``undo``, ``reapply`` and ``accept`` also move its baseline, so overlapping calls share it.

Protected (:class:`ProtectedPlaces`), in the notebook's folder and every parent up to the
project root: ``loom.yaml``, the instruction files, the skill folders and ``.loom/``; at
the root ``.git/config`` and ``.git/hooks/``; and the person's Loom config folder and skill
folders. Not protected, since the person, Jupyter and Loom write them during a call:
notebooks, the rest of ``.git/`` and Loom's archives (:func:`is_archive_file`).

A snapshot ``lstat``s each place; a folder is listed breadth first, sorted, up to
:data:`MAX_ENTRIES` entries, and a link is recorded with its target, never followed. A
file's bytes are read only when its stat signature changed since the last snapshot, or
when it changed so recently that its timestamps cannot tell (git's "racily clean" rule).
"""

from __future__ import annotations

import contextlib
import difflib
import errno
import hashlib
import os
import secrets
import stat
import time
from collections import deque
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Literal

from typing_extensions import assert_never

from loom_jupyter.apikey import KEY_FILE_NAME
from loom_jupyter.controls import visible
from loom_jupyter.folders import (
    CONFIG_FILE_NAME,
    SKILL_FOLDERS,
    instruction_candidates,
    project_root,
)
from loom_jupyter.settings import user_config_path
from loom_jupyter.tools.paths import ARCHIVE_DIR

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

__all__ = [
    "ARCHIVE_COMPANIONS",
    "ARCHIVE_SUFFIX",
    "KEEP_MAX_BYTES",
    "MAX_ENTRIES",
    "ChangeKind",
    "FileState",
    "PlacesSnapshot",
    "ProtectedChange",
    "ProtectedPlaces",
    "ProtectedWatch",
    "StateKind",
    "Unrestored",
    "compare",
    "describe_changes",
    "diff_text",
    "is_archive_file",
    "reapply",
    "undo",
]

StateKind = Literal["file", "dir", "link", "other"]
ChangeKind = Literal["created", "modified", "deleted", "mode-changed"]

ARCHIVE_SUFFIX = ".sqlite"
ARCHIVE_COMPANIONS = ("-wal", "-shm", "-journal")
"""SQLite's files beside an archive (as ``archive.hygiene.COMPANION_SUFFIXES``)."""
KEEP_MAX_BYTES = 1 << 20
"""A larger file is recorded by its hash only: its change is reported, never restored."""
KEEP_BUDGET_BYTES = 32 << 20
"""Bytes one snapshot keeps at most; files past it are recorded by hash only."""
HASH_MAX_BYTES = 64 << 20
"""Bytes of a file hashed at most; past it, any change of its stat counts as a change."""
MAX_ENTRIES = 1000
"""Entries recorded per protected folder; the rest are not watched (:attr:`PlacesSnapshot.cut`)."""
DIFF_LIMIT = 20_000
"""Characters :func:`diff_text` returns at most."""

_ARCHIVE_ENDINGS = (ARCHIVE_SUFFIX, *(ARCHIVE_SUFFIX + end for end in ARCHIVE_COMPANIONS))
_RACY_NS = 2_000_000_000  # timestamps this close to a read cannot tell a later write apart
_DIFF_SOURCE_MAX = 64 * 1024  # larger texts get a size line, not a line diff
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_CLOEXEC", 0)
)


def is_archive_file(name: str) -> bool:
    """Whether a file ``name`` is a Loom archive (``*.sqlite``) or a SQLite companion of one."""
    return name.endswith(_ARCHIVE_ENDINGS)


@dataclass(frozen=True)
class FileState:
    """What one protected path held: its kind, permission bits and content."""

    kind: StateKind
    mode: int
    """Permission bits (``stat.S_IMODE``)."""
    size: int = 0
    target: str = ""
    """A link's target (the link is never followed)."""
    data: bytes | None = None
    """A file's bytes, when kept (see :attr:`skipped`)."""
    digest: str = ""
    """sha256 of a file's bytes when they were not kept."""
    skipped: str = ""
    """Why a file's bytes were not kept (too large, unreadable)."""
    stamp: tuple[int, ...] = field(default=(), compare=False, repr=False)
    """The stat signature it was read under; the same signature reuses it."""
    racy: bool = field(default=False, compare=False, repr=False)
    """Changed too shortly before it was read for its signature to be trusted."""

    @property
    def sha256(self) -> str:
        """The content's hash (a file's bytes; empty for other kinds)."""
        return self.digest or (hashlib.sha256(self.data).hexdigest() if self.data else "")

    @property
    def restorable(self) -> bool:
        """Whether Loom can put this state back (a file's bytes were kept)."""
        return self.kind in ("dir", "link") or self.data is not None

    def same_content(self, other: FileState) -> bool:
        """Same kind, target and bytes (permission bits aside)."""
        if (self.kind, self.target) != (other.kind, other.target):
            return False
        if self.data is not None and other.data is not None:
            return self.data == other.data
        return self.sha256 == other.sha256


@dataclass(frozen=True)
class PlacesSnapshot:
    """The protected places' states at one moment."""

    states: Mapping[str, FileState]
    """By path (as a string: snapshots are taken often and ``Path`` costs)."""
    cut: tuple[Path, ...] = ()
    """Folders listed only up to :data:`MAX_ENTRIES` entries."""


@dataclass(frozen=True)
class ProtectedChange:
    """One protected path that changed during a call, with its state before and after."""

    kind: ChangeKind
    path: Path
    old: FileState | None
    """``None``: the path did not exist before (``created``)."""
    new: FileState | None
    """``None``: the path is gone (``deleted``)."""

    @property
    def old_bytes(self) -> bytes | None:
        return None if self.old is None else self.old.data

    @property
    def new_bytes(self) -> bytes | None:
        return None if self.new is None else self.new.data

    @property
    def undoable(self) -> bool:
        """Whether :func:`undo` can put the old state back."""
        return self.kind == "mode-changed" or self.old is None or self.old.restorable

    @property
    def note(self) -> str:
        """Why the change cannot be undone, or ``""``."""
        return "" if self.undoable or self.old is None else _unrestorable(self.old)


@dataclass(frozen=True)
class Unrestored:
    """A path :func:`undo` or :func:`reapply` could not put in place, and why."""

    path: Path
    reason: str


@dataclass(frozen=True)
class ProtectedPlaces:
    """The protected files (each may not exist) and folders (walked, bounded)."""

    files: tuple[Path, ...]
    folders: tuple[Path, ...]

    @classmethod
    def for_notebook(cls, notebook_path: str | os.PathLike[str]) -> ProtectedPlaces:
        """The places of the notebook's folder (:meth:`for_folder`)."""
        return cls.for_folder(Path(notebook_path).expanduser().absolute().parent)

    @classmethod
    def for_folder(cls, folder: str | os.PathLike[str]) -> ProtectedPlaces:
        """The places of a notebook folder and each parent up to the project root, the
        root's ``.git/config`` and ``.git/hooks/``, and the person's own places."""
        folder = Path(folder).expanduser().absolute()
        root = project_root(folder / CONFIG_FILE_NAME)  # the rule takes a file in the folder
        levels = _levels(root, folder)
        files = [
            *instruction_candidates(root, folder),
            *(level / CONFIG_FILE_NAME for level in levels),
            root / ".git" / "config",
        ]
        folders = [
            *(level / name for level in levels for name in (*SKILL_FOLDERS, ARCHIVE_DIR)),
            root / ".git" / "hooks",
            *_person_folders(),
        ]
        return cls(tuple(dict.fromkeys(files)), tuple(dict.fromkeys(folders)))


class ProtectedWatch:
    """The protected places across calls: :meth:`before` takes the baseline, :meth:`after`
    compares the places with it (as often as calls end: overlapping calls share one).

    Holds the last snapshot, so a file's bytes are read again only when its stat
    signature changed. Not thread-safe: one thread at a time."""

    def __init__(self, places: ProtectedPlaces) -> None:
        self.places = places
        self._last = PlacesSnapshot({})
        self._baseline: PlacesSnapshot | None = None

    @classmethod
    def for_notebook(cls, notebook_path: str | os.PathLike[str]) -> ProtectedWatch:
        return cls(ProtectedPlaces.for_notebook(notebook_path))

    @classmethod
    def for_folder(cls, folder: str | os.PathLike[str]) -> ProtectedWatch:
        return cls(ProtectedPlaces.for_folder(folder))

    def before(self) -> PlacesSnapshot:
        """Take the places' state now as the baseline (before a call)."""
        self._baseline = self._last = _take(self.places, self._last)
        return self._baseline

    def after(self) -> tuple[ProtectedChange, ...]:
        """What differs in the places from the baseline, sorted by path."""
        if self._baseline is None:
            raise RuntimeError("ProtectedWatch.after() needs a before() first")
        self._last = _take(self.places, self._last)
        return compare(self._baseline, self._last)

    def accept(self, changes: Iterable[ProtectedChange]) -> None:
        """Make each change's new state the baseline: the person approved that very write
        (or Loom made it, a key saved or a folder trusted meanwhile)."""
        if self._baseline is None:
            return
        states = dict(self._baseline.states)
        for change in changes:
            if change.new is None:
                states.pop(str(change.path), None)
            else:
                states[str(change.path)] = change.new
        self._baseline = replace(self._baseline, states=states)

    def undo(self, changes: Iterable[ProtectedChange]) -> tuple[Unrestored, ...]:
        """:func:`undo`; what could not be undone becomes the baseline (reported once)."""
        listed = tuple(changes)
        failed = undo(listed)
        self.accept(_among(listed, failed, failed=True))
        return failed

    def reapply(self, changes: Iterable[ProtectedChange]) -> tuple[Unrestored, ...]:
        """:func:`reapply`; what was put back becomes the baseline."""
        listed = tuple(changes)
        failed = reapply(listed)
        self.accept(_among(listed, failed, failed=False))
        return failed


def _among(
    changes: tuple[ProtectedChange, ...], failures: tuple[Unrestored, ...], *, failed: bool
) -> tuple[ProtectedChange, ...]:
    paths = {failure.path for failure in failures}
    return tuple(change for change in changes if (change.path in paths) == failed)


def describe_changes(changes: Iterable[ProtectedChange], *, base: Path | None = None) -> str:
    """The changed paths in a phrase (``loom.yaml (modified) and 2 more``), for a sentence;
    paths below ``base`` relative to it, the home folder as ``~``."""
    listed = list(changes)
    named = [f"{_shown(change.path, base)} ({change.kind})" for change in listed[:3]]
    if len(listed) > 3:
        named.append(f"{len(listed) - 3} more")
    if len(named) > 1:
        named[-2:] = [f"{named[-2]} and {named[-1]}"]
    return visible(", ".join(named))


def compare(old: PlacesSnapshot, new: PlacesSnapshot) -> tuple[ProtectedChange, ...]:
    """The changes from ``old`` to ``new``, sorted by path."""
    changes = []
    for path in sorted(old.states.keys() | new.states.keys()):
        was, now = old.states.get(path), new.states.get(path)
        kind = _change_kind(was, now)
        if kind is not None:
            changes.append(ProtectedChange(kind, Path(path), was, now))
    return tuple(changes)


def undo(changes: Iterable[ProtectedChange]) -> tuple[Unrestored, ...]:
    """Put each path back as it was before the call: old bytes and modes restored, created
    files removed (and created folders, once empty), deleted ones made again."""
    return _restore(changes, lambda change: change.old)


def reapply(changes: Iterable[ProtectedChange]) -> tuple[Unrestored, ...]:
    """Put each path back as the call left it (the person said "Keep this change")."""
    return _restore(changes, lambda change: change.new)


def diff_text(
    changes: Iterable[ProtectedChange], *, base: Path | None = None, limit: int = DIFF_LIMIT
) -> str:
    """The changes as text: a unified diff per text file, else a size and hash line (the
    API key file's bytes are never shown); paths as :func:`describe_changes` shows them,
    control characters made visible, cut at ``limit`` characters."""
    listed, parts, size = list(changes), [], 0
    for change in listed:
        if size > limit:
            break
        parts.append(visible(_describe_change(change, base)))
        size += len(parts[-1]) + 1
    text = "\n".join(parts)
    if len(text) <= limit and len(parts) == len(listed):
        return text
    return f"{text[:limit]}\n… (cut at {limit:,} characters; {len(listed):,} changes in all)"


# -- places ------------------------------------------------------------------------------


def _levels(root: Path, folder: Path) -> tuple[Path, ...]:
    """The folders from ``root`` down to ``folder``."""
    try:
        below = folder.relative_to(root).parts
    except ValueError:
        return (folder,)
    levels = [root]
    for part in below:
        levels.append(levels[-1] / part)
    return tuple(levels)


def _person_folders() -> tuple[Path, ...]:
    home = Path.home()
    return (user_config_path().parent, *(home / name for name in SKILL_FOLDERS))


# -- snapshots -----------------------------------------------------------------------------


def _take(places: ProtectedPlaces, last: PlacesSnapshot) -> PlacesSnapshot:
    taker = _Taker(last.states)
    for path in places.files:
        taker.file(str(path))
    cut = tuple(folder for folder in places.folders if taker.folder(str(folder)))
    return PlacesSnapshot(taker.states, cut)


class _Taker:
    """Builds one snapshot, reusing the last one's states whose signature is unchanged."""

    def __init__(self, last: Mapping[str, FileState]) -> None:
        self.last = last
        self.states: dict[str, FileState] = {}
        self.kept = 0
        self.now = time.time_ns()

    def file(self, path: str) -> StateKind | None:
        """Record ``path`` when it exists; its kind."""
        try:
            return self._record(path, os.lstat(path))
        except OSError:
            return None

    def folder(self, top: str) -> bool:
        """Record ``top`` and what it holds, breadth first; whether the cap cut it."""
        queue = deque([top] if self.file(top) == "dir" else [])
        count = 0
        while queue:
            for entry in _listing(queue.popleft()):
                if count == MAX_ENTRIES:
                    return True
                count += 1
                try:
                    kind = self._record(entry.path, entry.stat(follow_symlinks=False))
                except OSError:  # gone meanwhile
                    continue
                if kind == "dir":
                    queue.append(entry.path)
        return False

    def _record(self, path: str, info: os.stat_result) -> StateKind:
        stamp = _stamp(info)
        state = self.last.get(path)
        if state is None or state.stamp != stamp or state.racy:
            state = self._read(path, info, stamp)
        self.states[path] = state
        self.kept += len(state.data or b"")
        return state.kind

    def _read(self, path: str, info: os.stat_result, stamp: tuple[int, ...]) -> FileState:
        mode, racy = stat.S_IMODE(info.st_mode), self.now - max(stamp[-2:]) < _RACY_NS
        if stat.S_ISDIR(info.st_mode):
            return FileState("dir", mode, stamp=stamp)
        if stat.S_ISLNK(info.st_mode):
            return FileState(
                "link", mode, target=str(Path(path).readlink()), stamp=stamp, racy=racy
            )
        if not stat.S_ISREG(info.st_mode):
            return FileState("other", mode, stamp=stamp, racy=racy)
        keep = info.st_size <= KEEP_MAX_BYTES and self.kept + info.st_size <= KEEP_BUDGET_BYTES
        state = _read_file(path, keep=keep, stamp=stamp)
        return replace(state, mode=mode, size=info.st_size, stamp=stamp, racy=racy)


def _stamp(info: os.stat_result) -> tuple[int, ...]:
    """The stat signature; its last two items are the timestamps (the racy rule)."""
    return (
        info.st_mode,
        info.st_ino,
        info.st_dev,
        info.st_size,
        info.st_mtime_ns,
        info.st_ctime_ns,
    )


def _listing(folder: str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as entries:
            found = [entry for entry in entries if not is_archive_file(entry.name)]
    except OSError:
        return []
    return sorted(found, key=lambda entry: entry.name)


def _read_file(path: str, *, keep: bool, stamp: tuple[int, ...]) -> FileState:
    """A regular file's bytes (when ``keep`` and small enough), else its hash."""
    try:
        with os.fdopen(os.open(path, _OPEN_FLAGS), "rb") as handle:
            head = handle.read(KEEP_MAX_BYTES + 1)
            if keep and len(head) <= KEEP_MAX_BYTES:
                return FileState("file", 0, data=head)
            return _hashed(handle, head, stamp)
    except OSError as error:
        return FileState("file", 0, digest=f"{stamp}", skipped=f"unreadable: {error.strerror}")


def _hashed(handle: BinaryIO, head: bytes, stamp: tuple[int, ...]) -> FileState:
    """The sha256 of up to :data:`HASH_MAX_BYTES`; a longer file's hash also holds its stamp."""
    digest, total = hashlib.sha256(head), len(head)
    while total < HASH_MAX_BYTES and (chunk := handle.read(1 << 20)):
        digest.update(chunk)
        total += len(chunk)
    whole = not handle.read(1)
    text = digest.hexdigest() if whole else f"{digest.hexdigest()}+{stamp}"
    skipped = (
        f"larger than {KEEP_MAX_BYTES:,} bytes"
        if total > KEEP_MAX_BYTES
        else f"past the snapshot's {KEEP_BUDGET_BYTES:,}-byte budget"
    )
    return FileState("file", 0, digest=text, skipped=skipped)


def _change_kind(old: FileState | None, new: FileState | None) -> ChangeKind | None:
    if old is None:
        return None if new is None else "created"
    if new is None:
        return "deleted"
    if not old.same_content(new):
        return "modified"
    return "mode-changed" if old.mode != new.mode else None


# -- restoring -----------------------------------------------------------------------------


def _restore(
    changes: Iterable[ProtectedChange], pick: Callable[[ProtectedChange], FileState | None]
) -> tuple[Unrestored, ...]:
    """Removals deepest first, then the rest shallowest first (a folder before its files)."""
    listed = list(changes)
    removals = sorted((c for c in listed if pick(c) is None), key=_depth, reverse=True)
    puts = sorted((c for c in listed if pick(c) is not None), key=_depth)
    failed = []
    for change in (*removals, *puts):
        try:
            _put(change.path, pick(change), mode_only=change.kind == "mode-changed")
        except OSError as error:
            failed.append(Unrestored(change.path, error.strerror or str(error)))
    return tuple(failed)


def _depth(change: ProtectedChange) -> int:
    return len(change.path.parts)


def _put(path: Path, state: FileState | None, *, mode_only: bool) -> None:
    if state is None:
        _remove(path)
    elif mode_only:
        _chmod(path, state.mode)
    elif state.kind == "file":
        _write_file(path, state)
    elif state.kind == "link":
        _replace_with(path, lambda temp: temp.symlink_to(state.target))
    elif state.kind == "dir":
        _make_dir(path, state.mode)
    elif state.kind == "other":
        raise OSError(0, _unrestorable(state))
    else:
        assert_never(state.kind)


def _unrestorable(state: FileState) -> str:
    if state.kind == "other":
        return "not a file, folder or link: Loom cannot make it again"
    return f"its bytes were not kept ({state.skipped})"


def _remove(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        if stat.S_ISDIR(os.lstat(path).st_mode):
            path.rmdir()  # a folder still holding files is left (and reported)
        else:
            path.unlink()


def _chmod(path: Path, mode: int) -> None:
    if stat.S_ISLNK(os.lstat(path).st_mode):  # never the mode of what a link points at
        raise OSError(errno.ELOOP, "a link was put there meanwhile")
    path.chmod(mode)


def _write_file(path: Path, state: FileState) -> None:
    data = state.data
    if data is None:
        raise OSError(0, _unrestorable(state))

    def write(temp: Path) -> None:
        with temp.open("xb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        temp.chmod(state.mode)

    _replace_with(path, write)


def _replace_with(path: Path, make: Callable[[Path], None]) -> None:
    """Make the new entry beside ``path`` and rename it over ``path`` (atomic)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileNotFoundError, NotADirectoryError):
        if stat.S_ISDIR(os.lstat(path).st_mode):
            path.rmdir()  # an empty folder where a file was; one holding files refuses
    temp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.loom")
    try:  # ``make`` creates ``temp`` exclusively (``open(..., "x")``, a symlink)
        make(temp)
        temp.replace(path)
    except BaseException:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise


def _make_dir(path: Path, mode: int) -> None:
    with contextlib.suppress(FileNotFoundError):
        if not stat.S_ISDIR(os.lstat(path).st_mode):
            path.unlink()
    path.mkdir(parents=True, exist_ok=True)
    _chmod(path, mode)


# -- showing -------------------------------------------------------------------------------


def _describe_change(change: ProtectedChange, base: Path | None) -> str:
    old, new = change.old, change.new
    name = _shown(change.path, base)
    head = f"{change.kind}: {name}"
    if old is not None and new is not None and old.mode != new.mode and old.kind == new.kind:
        head += f" (mode {old.mode:04o} → {new.mode:04o})"
    if change.kind == "mode-changed":
        return head
    before, after = (None, None) if change.path.name == KEY_FILE_NAME else (_text(old), _text(new))
    if before is None or after is None:
        lines = [f"{head}: {_summary(old)} → {_summary(new)}"]
    else:
        was, now = (name if state else "/dev/null" for state in (old, new))
        lines = [head, *difflib.unified_diff(before, after, was, now, lineterm="")]
    if change.note:
        lines.append(f"  (cannot be undone: {change.note})")
    return "\n".join(lines)


def _shown(path: Path, base: Path | None) -> str:
    """``path`` relative to ``base`` when below it, else with ``~`` for the home folder."""
    for top, prefix in ((base, ""), (Path.home(), "~/")):
        if top is not None and top in path.parents:
            return prefix + path.relative_to(top).as_posix()
    return str(path)


def _text(state: FileState | None) -> list[str] | None:
    """A file's lines when it is text (no state: no lines), else ``None``."""
    if state is None:
        return []
    data = state.data
    if state.kind != "file" or data is None or len(data) > _DIFF_SOURCE_MAX or b"\0" in data:
        return None
    try:
        return data.decode("utf-8").splitlines()
    except UnicodeDecodeError:
        return None


def _summary(state: FileState | None) -> str:
    if state is None:
        return "absent"
    match state.kind:
        case "file":
            return f"{state.size:,} bytes, sha256 {state.sha256[:16]}"
        case "dir":
            return f"folder (mode {state.mode:04o})"
        case "link":
            return f"link to {state.target}"
        case "other":
            return "a special file (not a file, folder or link)"
        case _:
            assert_never(state.kind)
