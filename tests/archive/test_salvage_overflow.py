"""A long turn whose overflow chain runs through a damaged page is lost, never kept garbled.

SQLite follows an overflow chain by the next-page number each page starts
with, and nothing checks the bytes it reads on the way: a page copied over
one of a long turn's overflow pages (another turn's, a b-tree page), or a
zeroed last page, makes SQLite's own read of that turn return another page's
bytes as its text, without an error. The recovery keeps every row verbatim or
counts it lost: the turn is lost (or saved whole, when the page it runs
through is the true source of the copy).
"""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
from contextlib import closing
from typing import TYPE_CHECKING

import pytest
from damaged_archive import checkpoint, count, integrity, overwrite_page, page_size, root_page, rows

from loom_jupyter.archive import Archive
from loom_jupyter.archive.salvage import recover_archive
from loom_jupyter.archive.salvage_pages import leaf_rows, load_image, tree_pages
from loom_jupyter.messages import TurnDraft

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

NOTEBOOK = "/work/analysis.ipynb"
LONG = ("alpha", "beta", "gamma")  # long turns: about 20 kB each, five overflow pages
CHUNKS = 1800


def _text(name: str) -> str:
    return "".join(f"{name}{i:05d}." for i in range(CHUNKS))


async def _build(path: Path) -> dict[str, int]:
    """Short turns around three long ones; the long turns' rowids by name."""
    async with Archive.open(path) as archive:
        sid = await archive.create_session(notebook_path=NOTEBOOK, model="m")
        for n in range(30):
            await archive.append_turn(sid, TurnDraft(role="user", content=f"short {n} " * 20))
            if n % 10 == 5:
                await archive.append_turn(sid, TurnDraft(role="user", content=_text(LONG[n // 10])))
    checkpoint(path)
    with closing(sqlite3.connect(path)) as db:
        return {
            name: int(
                db.execute(
                    "SELECT id FROM conversation_turns WHERE content = ?", [_text(name)]
                ).fetchone()[0]
            )
            for name in LONG
        }


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, int]]:
    path = tmp_path_factory.mktemp("overflow") / "analysis.ipynb.sqlite"
    return path, asyncio.run(_build(path))


def _chain(path: Path, name: str) -> list[int]:
    """The overflow pages of turn ``name``, in order: found by the runs of its text they hold."""
    size, data = page_size(path), path.read_bytes()
    found = {}
    for number in range(2, len(data) // size + 1):
        page = data[(number - 1) * size : number * size]
        if page[0] != 0:  # an overflow page starts with a page number (a b-tree page: its type)
            continue
        for i in range(CHUNKS - 1):
            if f"{name}{i:05d}.{name}{i + 1:05d}.".encode() in page:
                found[number] = i
                break
    return sorted(found, key=found.__getitem__)


def _page(path: Path, number: int) -> bytes:
    size = page_size(path)
    return path.read_bytes()[(number - 1) * size : number * size]


def _turn_leaf(path: Path, avoid: int) -> int:
    """A leaf page of the turns that does not hold the rowid ``avoid``."""
    image = load_image(path)
    assert image is not None
    for leaf in sorted(tree_pages(image, root_page(path, "conversation_turns"))):
        if avoid not in {rowid for rowid, _ in leaf_rows(image, leaf)}:
            return leaf
    raise AssertionError("no leaf page of the turns")


def _over_alpha(position: int, data: Callable[[Path], bytes]) -> Callable[[Path], None]:
    """Write ``data`` over the overflow page at ``position`` of the long turn "alpha"."""
    return lambda path: overwrite_page(path, _chain(path, "alpha")[position], data(path))


# (damage, whether SQLite's read of the turn is garbled without an error; else it fails)
DAMAGES: dict[str, tuple[Callable[[Path], None], bool]] = {
    "another turn's overflow page over a middle one": (
        _over_alpha(2, lambda p: _page(p, _chain(p, "beta")[2])),
        True,
    ),
    "another turn's last overflow page over the last one": (
        _over_alpha(-1, lambda p: _page(p, _chain(p, "gamma")[-1])),
        True,
    ),
    "zeros over the last one": (_over_alpha(-1, lambda p: b""), True),
    # SQLite reads its bytes as the text's end too; Python's UTF-8 decoding refuses them.
    "a leaf page of the turns over the last one": (
        _over_alpha(-1, lambda p: _page(p, _turn_leaf(p, 0))),
        False,
    ),
}


def _tree_read(path: Path, rowid: int) -> object:
    """What SQLite itself reads of turn ``rowid`` in the damaged file (or the error)."""
    try:
        with closing(sqlite3.connect(f"{path.as_uri()}?immutable=1", uri=True)) as db:
            return db.execute(
                "SELECT content FROM conversation_turns WHERE id = ?", [rowid]
            ).fetchone()
    except sqlite3.Error as error:
        return error


@pytest.mark.parametrize("kind", sorted(DAMAGES))
async def test_a_turn_read_through_a_damaged_overflow_page_is_lost_not_garbled(
    pristine: tuple[Path, dict[str, int]], tmp_path: Path, kind: str
) -> None:
    original, ids = pristine
    path = tmp_path / ".loom" / "analysis.ipynb.sqlite"
    path.parent.mkdir()
    shutil.copyfile(original, path)
    assert len(_chain(path, "alpha")) >= 4  # several overflow pages
    damage, silent = DAMAGES[kind]
    damage(path)
    read = _tree_read(path, ids["alpha"])
    assert isinstance(read, tuple) == silent  # SQLite reads it without an error...
    assert read != (_text("alpha"),)  # ...and what it reads is garbled
    # integrity_check does not look at an overflow page's bytes: a page it does check, so
    # the file reads as damaged (the full-text index is rebuilt from the saved turns anyway).
    overwrite_page(path, root_page(path, "turns_fts_docsize"), b"")

    report = await recover_archive(path)

    turns = report.tally("conversation_turns")
    saved = rows(path, "conversation_turns")
    assert saved <= rows(original, "conversation_turns")  # verbatim: nothing garbled kept
    assert ids["alpha"] not in {row[0] for row in saved}  # its text is gone: lost
    assert turns.saved == count(path, "conversation_turns") == len(saved)
    assert turns.saved + turns.lost == count(original, "conversation_turns")  # counted lost
    assert turns.saved >= count(original, "conversation_turns") - 3
    assert integrity(path) == [("ok",)]


async def test_the_true_source_of_a_copy_is_kept(
    pristine: tuple[Path, dict[str, int]], tmp_path: Path
) -> None:
    """A long turn's overflow page copied over a b-tree page: two pages hold the same bytes,
    and the one in a b-tree's place is the copy, so the turn reads whole and is saved."""
    original, ids = pristine
    path = tmp_path / ".loom" / "analysis.ipynb.sqlite"
    path.parent.mkdir()
    shutil.copyfile(original, path)
    overwrite_page(path, _turn_leaf(path, ids["alpha"]), _page(path, _chain(path, "alpha")[2]))

    report = await recover_archive(path)

    saved = rows(path, "conversation_turns")
    assert saved <= rows(original, "conversation_turns")
    with closing(sqlite3.connect(path)) as db:
        found = db.execute("SELECT content FROM conversation_turns WHERE id = ?", [ids["alpha"]])
        assert found.fetchone() == (_text("alpha"),)
    turns = report.tally("conversation_turns")
    assert turns.saved + turns.lost == count(original, "conversation_turns")
