"""Every notebook archive of a project, searched read-only.

The project root is the nearest folder up from the notebook holding ``.git``,
else the notebook's own folder. Every ``.loom/*.sqlite`` under it is a notebook's
archive, and so is every archive ``archive_dir`` keeps for a folder under it
(:mod:`loom_jupyter.archive.paths`: the folder's key names its sub-folder there).
The walk is bounded (folders visited, archives kept: the most recently written
first), each archive is opened read-only (never created, migrated or
locked for writing) and the whole search has a deadline; what was left out is
reported, never silently dropped.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar
from urllib.parse import quote

from loom_jupyter.archive.core import Archive
from loom_jupyter.archive.db import Db
from loom_jupyter.archive.hygiene import is_plain_archive
from loom_jupyter.archive.paths import configured_archive_dir, folder_key
from loom_jupyter.archive.readable import ReadableMatch, search_for_people, with_notebook
from loom_jupyter.archive.search import search_turns
from loom_jupyter.archive.tables import MIGRATIONS
from loom_jupyter.errors import ArchiveError
from loom_jupyter.folders import project_root
from loom_jupyter.records import ProjectHit, ProjectSearch

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Iterator

    from loom_jupyter.records import SearchHit

_T = TypeVar("_T")

__all__ = [
    "MAX_ARCHIVES",
    "SEARCH_SECONDS",
    "ProjectArchives",
    "ProjectMatches",
    "SearchScope",
    "find_archives",
    "find_notebook_archives",
    "neighbour_pauses",
    "open_read_only",
    "people_search",
    "project_root",
]

SearchScope = Literal["session", "notebook", "all_notebooks"]

MAX_ARCHIVES = 64
"""Archives searched at most (the most recently written)."""

SEARCH_SECONDS = 5.0
"""The whole project search's deadline."""

_MAX_FOLDERS = 5_000
_SKIP = frozenset({".git", "node_modules", "__pycache__", ".ipynb_checkpoints", ".venv", "venv"})


@dataclass(frozen=True)
class _Skipped:
    reason: str


def _folders(root: Path) -> Iterator[tuple[Path, Path]]:
    """Each folder under ``root`` (itself first) that may hold archives, with the notebook
    folder they belong to: its ``.loom`` and its sub-folder of ``archive_dir`` (when set);
    tool and environment folders are skipped."""
    base = configured_archive_dir()
    kept = _archive_dir_folders(base.path) if base is not None else set()
    for seen, (here, dirs, _files) in enumerate(os.walk(root)):
        if seen >= _MAX_FOLDERS:
            return
        dirs[:] = sorted(d for d in dirs if d not in _SKIP and (d == ".loom" or d[0] != "."))
        if ".loom" in dirs:
            dirs.remove(".loom")  # archives are files in it, not folders to walk
            yield Path(here) / ".loom", Path(here)
        if base is not None and (key := folder_key(here)) in kept:
            yield base.path / key, Path(here)


def _archive_dir_folders(base: Path) -> set[str]:
    """The names of ``archive_dir``'s real sub-folders (links are not followed)."""
    try:
        return {e.name for e in os.scandir(base) if e.is_dir(follow_symlinks=False)}
    except OSError:
        return set()


def find_archives(root: Path, limit: int = MAX_ARCHIVES) -> tuple[list[Path], int]:
    """The project's archive files, most recently written first, and how many were left out."""
    found, left_out = find_notebook_archives(root, limit)
    return [archive for archive, _ in found], left_out


def find_notebook_archives(
    root: Path, limit: int = MAX_ARCHIVES
) -> tuple[list[tuple[Path, Path]], int]:
    """The project's archives with their notebooks' paths, most recently written first, and
    how many were left out."""
    found = [
        (path, folder / path.name.removesuffix(".sqlite"))
        for where, folder in _folders(root)
        for path in where.glob("*.sqlite")
        if is_plain_archive(path)
    ]
    found.sort(key=lambda pair: _written(pair[0]), reverse=True)
    return found[:limit], max(len(found) - limit, 0)


def _written(path: Path) -> float:
    wal = path.with_name(path.name + "-wal")
    try:
        return max(path.stat().st_mtime, wal.stat().st_mtime if wal.exists() else 0.0)
    except OSError:
        return 0.0


async def open_read_only(path: Path, busy_timeout: float = 2.0) -> Archive:
    """An existing archive opened for reading only; refuses other schema versions."""
    import aiosqlite  # deferred like Archive.open

    uri = f"file:{quote(str(path))}?mode=ro"
    try:
        conn = await aiosqlite.connect(uri, uri=True, timeout=busy_timeout, isolation_level=None)
    except sqlite3.Error as error:
        raise ArchiveError(f"{path}: cannot be opened for reading ({error})") from error
    conn.row_factory = sqlite3.Row
    archive = Archive(Db(conn, path, busy_timeout))
    try:
        await _check_version(archive, path)
    except BaseException:
        await archive.close()
        raise
    return archive


async def neighbour_pauses(own: Path, archives: int = 5) -> tuple[float, ...]:
    """The pauses between turns in the notebooks beside ``own`` (its ``.loom`` folder), the
    most recently written ``archives`` of them, read-only; oldest archive first. A locked,
    foreign or broken archive is skipped: this only seeds a new notebook's rhythm."""
    others = [p for p in own.parent.glob("*.sqlite") if p != own and is_plain_archive(p)]
    pauses: list[float] = []
    for path in sorted(others, key=_written)[-archives:]:
        try:
            archive = await open_read_only(path)
        except ArchiveError:
            continue
        try:
            pauses.extend(await archive.recent_pauses())
        except ArchiveError:
            continue
        finally:
            await archive.close()
    return tuple(pauses)


async def _check_version(archive: Archive, path: Path) -> None:
    row = await archive._db.fetchone("PRAGMA user_version")
    version = row[0] if row is not None else 0
    if version != len(MIGRATIONS):
        raise ArchiveError(
            f"{path}: schema version {version}, this loom_jupyter reads {len(MIGRATIONS)} "
            "(open its notebook once with this version to upgrade it)"
        )


@dataclass(frozen=True)
class ProjectMatches:
    """Matches for people across a project's archives (see :mod:`.readable`)."""

    matches: tuple[ReadableMatch, ...]
    archives: int
    skipped: tuple[str, ...] = ()


@dataclass(frozen=True)
class ProjectArchives:
    """The archives under ``root``; satisfies :class:`~loom_jupyter.readers.ProjectReader`."""

    root: Path
    max_archives: int = MAX_ARCHIVES
    seconds: float = SEARCH_SECONDS
    busy_timeout: float = 2.0
    _notebooks: dict[Path, Path] = field(default_factory=dict, compare=False, repr=False)
    """Each archive found so far and its notebook (an ``archive_dir`` key is not read back)."""

    async def search_project(
        self, query: str, limit: int = 10, *, before: tuple[str, int] | None = None
    ) -> ProjectSearch:
        """Best hits across the project's archives, each with one turn of context each side
        (``before`` = (session, turn): that session's turns from that turn on are left out)."""
        found, archives, skipped = await self._each(lambda p: self._search(p, query, limit, before))
        hits = [hit for result in found for hit in result]
        hits.sort(key=lambda h: (-h.hit.score, h.notebook, -h.hit.turn_number))
        return ProjectSearch(hits=tuple(hits[:limit]), archives=archives, skipped=skipped)

    async def search_for_people(self, query: str, limit: int = 10) -> ProjectMatches:
        """Matches for a person across the project (phrase, then all words, then some)."""
        found, archives, skipped = await self._each(lambda p: self._people(p, query, limit))
        kinds = ("phrase", "all_words", "some_words")
        matches = sorted((m for result in found for m in result), key=lambda m: kinds.index(m.kind))
        return ProjectMatches(tuple(matches[:limit]), archives, skipped)

    async def _each(
        self, search: Callable[[Path], Awaitable[_T]]
    ) -> tuple[list[_T], int, tuple[str, ...]]:
        """``search`` over every archive under one deadline: results, count, what was skipped."""
        pairs, left_out = await asyncio.to_thread(
            find_notebook_archives, self.root, self.max_archives
        )
        paths = [path for path, _ in pairs]
        self._notebooks.update(pairs)
        skipped = [f"{left_out} older archive(s) beyond the first {self.max_archives}"]
        skipped = skipped if left_out else []
        deadline = time.monotonic() + self.seconds
        results = await asyncio.gather(*(self._one(search(p), deadline) for p in paths))
        found: list[_T] = []
        for path, result in zip(paths, results, strict=True):
            if isinstance(result, _Skipped):
                skipped.append(f"{self._label(path)}: {result.reason}")
            else:
                found.append(result)
        return found, len(paths), tuple(skipped)

    async def _one(self, work: Awaitable[_T], deadline: float) -> _T | _Skipped:
        """The archive's result, or why it was not searched."""
        try:
            return await asyncio.wait_for(work, max(deadline - time.monotonic(), 0.01))
        except asyncio.TimeoutError:  # not the builtin before Python 3.11
            return _Skipped(f"not searched within {self.seconds:g} s")
        except ArchiveError as error:
            return _Skipped(str(error))

    async def _people(self, path: Path, query: str, limit: int) -> list[ReadableMatch]:
        async with await open_read_only(path, self.busy_timeout) as archive:
            found = await search_for_people(archive, query, limit=limit)
        return with_notebook(found, self._label(path))

    async def _search(
        self, path: Path, query: str, limit: int, before: tuple[str, int] | None
    ) -> list[ProjectHit]:
        async with await open_read_only(path, self.busy_timeout) as archive:
            sessions = await archive.list_sessions(limit=1_000_000)
            titles = {s.id: s.title for s in sessions}
            ids = [s.id for s in sessions]
            found = await search_turns(
                archive._db, session_ids=ids, query=query, limit=limit, before=before
            )
            return [await self._hit(archive, path, hit, titles, before) for hit in found]

    async def _hit(
        self,
        archive: Archive,
        path: Path,
        hit: SearchHit,
        titles: dict[str, str],
        before: tuple[str, int] | None,
    ) -> ProjectHit:
        lo, hi = max(1, hit.turn_number - 1), hit.turn_number + 1
        if before is not None and hit.session_id == before[0]:
            hi = min(hi, before[1] - 1)  # never the question being answered
        context = tuple(await archive.get_turns(hit.session_id, lo, hi))
        return ProjectHit(
            notebook=self._label(path),
            session_id=hit.session_id,
            session_title=titles.get(hit.session_id, ""),
            hit=hit,
            context=context,
        )

    def _label(self, path: Path) -> str:
        """The notebook an archive belongs to, relative to the root when inside it."""
        notebook = self._notebooks.get(path, path.parent.parent / path.name.removesuffix(".sqlite"))
        try:
            return str(notebook.relative_to(self.root))
        except ValueError:
            return str(notebook)


async def people_search(
    archive: Archive,
    notebook: str | os.PathLike[str],
    query: str,
    *,
    scope: SearchScope = "session",
    session_id: str | None = None,
    limit: int = 10,
) -> dict[str, Any]:
    """Search as a person reads it, in any scope, as JSON-ready data (for the sidebar).

    ``{"matches": [ReadableMatch.to_json(), ...], "archives": N, "skipped": [...]}``:
    the exact phrase first, then all words, then some; each match with the turns
    before and after it. ``session`` needs ``session_id``; ``notebook`` is every
    session of ``archive``; ``all_notebooks`` every archive under the project root.
    """
    if scope == "all_notebooks":
        found = await ProjectArchives(project_root(notebook)).search_for_people(query, limit)
        matches, archives, skipped = list(found.matches), found.archives, list(found.skipped)
    elif scope == "session" and session_id is None:
        matches, archives, skipped = [], 1, []
    else:
        sid = session_id if scope == "session" else None
        matches = await search_for_people(archive, query, session_id=sid, limit=limit)
        archives, skipped = 1, []
    return {"matches": [m.to_json() for m in matches], "archives": archives, "skipped": skipped}
