"""Reading a damaged archive page by page, as SQLite's file format lays it out.

The tree pass (:mod:`.salvage_read`) asks SQLite for rows by rowid, so a page
in the wrong place hides every row below it. This pass reads every page of
the file (with the ``-wal``'s committed frames laid over it, as SQLite would
see them) and takes the rows of each table leaf page: cells decoded by the
record format (varints, serial types, overflow chains followed while they
are intact), each row checked against the table's columns and types.

A leaf page belongs to the table whose b-tree reaches it from its root page
(``sqlite_master``, read by this module too); a page no intact tree reaches is
given to the one table whose shape its rows fit. When two pages hold the same
rowid, the newer one wins: a page from later in the WAL, then a page the
table's own tree reaches.

When page 1's 100-byte header is destroyed, the page size is found from the
pages themselves (the legal size under which the most pages read as b-tree
pages), and :func:`rebuilt_header` writes a header a copy of the file can be
opened with. Only a file in which no page reads as a SQLite page is not SQLite.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterable, Iterator, Mapping

__all__ = [
    "Column",
    "PageFinds",
    "PageImage",
    "PageRow",
    "TableShape",
    "leaf_rows",
    "load_image",
    "page_pass",
    "page_rows",
    "rebuilt_header",
    "schema_roots",
    "table_shape",
    "typed",
]

SQLITE_HEADER = b"SQLite format 3\x00"
LEGAL_SIZES = tuple(1 << n for n in range(9, 17))
_TABLE_LEAF, _TABLE_INTERIOR, _INDEX_INTERIOR = 0x0D, 0x05, 0x02
_BTREE_TYPES = (0x02, 0x05, 0x0A, 0x0D)
_WAL_MAGIC = (0x377F0682, 0x377F0683)
_MAX_OVERFLOW = 1 << 16  # overflow pages followed for one cell, at most
# A value of each serial type's kind (text and blobs: the rest), to tell a record's table.
_STAND_INS: dict[int, object] = {0: None, 7: 0.0, **dict.fromkeys((1, 2, 3, 4, 5, 6, 8, 9), 0)}


class _Bad(Exception):
    """A page, cell or record that does not decode."""


@dataclass(frozen=True)
class Column:
    """One column of a table as the archive's schema declares it."""

    name: str
    kind: str  # the declared type, upper case: INTEGER, TEXT, REAL, BLOB or ''
    not_null: bool
    has_default: bool
    rowid_alias: bool  # INTEGER PRIMARY KEY: stored as NULL, the value is the rowid
    default: object = None  # the value a record too short for this column reads


@dataclass(frozen=True)
class TableShape:
    """The columns of one table, in the file's order."""

    name: str
    columns: tuple[Column, ...]

    def column(self, name: str) -> Column | None:
        """The column called ``name``, if the table has one."""
        return next((c for c in self.columns if c.name == name), None)

    def fits(self, values: tuple[object, ...]) -> bool:
        """Whether a record's ``values`` can be a row of this table.

        A record may be shorter than the table (columns added later read their
        default); each value must have its column's type, NOT NULL included.
        """
        if not values or len(values) > len(self.columns):
            return False
        for column, value in zip(self.columns, values, strict=False):
            if not typed(column, value):
                return False
        rest = self.columns[len(values) :]
        return all(c.has_default or not c.not_null for c in rest)


def typed(column: Column, value: object) -> bool:
    """Whether ``value`` can be stored in ``column`` (its declared type, NOT NULL)."""
    if value is None:
        return column.rowid_alias or not column.not_null
    if column.rowid_alias:
        return False
    kind = column.kind
    if "INT" in kind:
        return isinstance(value, int | float)
    if "CHAR" in kind or "CLOB" in kind or "TEXT" in kind:
        return isinstance(value, str)
    if "REAL" in kind or "FLOA" in kind or "DOUB" in kind:
        return isinstance(value, int | float)
    return True


@dataclass(frozen=True)
class PageRow:
    """A row read from a leaf page: its rowid, its values, and how new its page is."""

    rowid: int
    values: tuple[object, ...]
    rank: tuple[int, int]  # (WAL frame, 0 for the main file; 1 when its table's tree reaches it)


class PageImage:
    """The file's pages as SQLite would read them: the main file, the WAL's commits over it."""

    def __init__(self, data: bytes, size: int, wal: Mapping[int, tuple[int, bytes]]) -> None:
        self.data = data
        self.size = size
        self.wal = wal  # page number → (frame index, page)
        self.count = max(len(data) // size, max(wal, default=0))
        self.header_ok = _header_size(data) == size
        self.zeros = bytes(size)

    def page(self, number: int) -> bytes:
        """Page ``number`` (from 1), empty when the file does not have it."""
        if number in self.wal:
            return self.wal[number][1]
        return self.data[(number - 1) * self.size : number * self.size]

    def frame(self, number: int) -> int:
        """The WAL frame page ``number`` comes from (0: the main file)."""
        return self.wal[number][0] if number in self.wal else 0

    def image(self) -> bytes:
        """Every page, in order (short or missing pages as zeros)."""
        return b"".join(self.page(n).ljust(self.size, b"\0") for n in range(1, self.count + 1))

    @property
    def readable(self) -> int:
        """How many pages read as b-tree pages."""
        return sum(1 for n in range(1, self.count + 1) if _btree_type(self.page(n), n) is not None)


def load_image(path: Path) -> PageImage | None:
    """The pages of the database at ``path`` and its ``-wal``; ``None``: no page reads as SQLite."""
    data = path.read_bytes()
    size = _header_size(data) or find_page_size(data)
    if size is None:
        return None
    wal_path = Path(f"{path}-wal")
    wal = _wal_frames(wal_path.read_bytes(), size) if wal_path.is_file() else {}
    image = PageImage(data, size, wal)
    if not image.header_ok and image.readable == 0:
        return None
    return image


def _header_size(data: bytes) -> int | None:
    if not data.startswith(SQLITE_HEADER) or len(data) < 100:
        return None
    raw = int.from_bytes(data[16:18], "big")
    size = 65536 if raw == 1 else raw
    return size if size in LEGAL_SIZES and data[20] == 0 else None


def find_page_size(data: bytes) -> int | None:
    """The legal page size under which the most pages read as b-tree pages (ties: the larger)."""
    best, found = 0, None
    for size in LEGAL_SIZES:
        if len(data) < size:
            break
        pages = len(data) // size
        valid = sum(
            1
            for n in range(1, pages + 1)
            if _btree_type(data[(n - 1) * size : n * size], n) is not None
        )
        if valid and valid >= best:
            best, found = valid, size
    return found


def _btree_type(page: bytes, number: int) -> int | None:
    """The page's b-tree type when its header and cell pointers are well formed."""
    try:
        return _cells(page, number)[0]
    except _Bad:
        return None


def _cells(page: bytes, number: int) -> tuple[int, list[int], int]:
    """(type, cell offsets, right-most child) of a b-tree page; raises :class:`_Bad`."""
    start = 100 if number == 1 else 0
    usable = len(page)
    if usable < 512 or len(page) < start + 12:
        raise _Bad
    kind = page[start]
    if kind not in _BTREE_TYPES:
        raise _Bad
    head = 8 if kind in (0x0A, 0x0D) else 12
    count = int.from_bytes(page[start + 3 : start + 5], "big")
    content = int.from_bytes(page[start + 5 : start + 7], "big") or 65536
    pointers_end = start + head + 2 * count
    if page[start + 7] > 60 or pointers_end > content or content > usable:
        raise _Bad
    if count == 0 and content != usable:
        raise _Bad
    offsets = [
        int.from_bytes(page[start + head + 2 * i : start + head + 2 * i + 2], "big")
        for i in range(count)
    ]
    if any(not content <= off < usable - 3 for off in offsets):
        raise _Bad
    right = int.from_bytes(page[start + 8 : start + 12], "big") if head == 12 else 0
    return kind, offsets, right


def _varint(buf: bytes, at: int) -> tuple[int, int]:
    value = 0
    for i in range(9):
        if at + i >= len(buf):
            raise _Bad
        byte = buf[at + i]
        if i == 8:
            return (value << 8) | byte, at + 9
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, at + i + 1
    raise _Bad  # pragma: no cover


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def decode_record(payload: bytes) -> tuple[object, ...]:
    """The values of a record (the format's serial types); raises :class:`_Bad`."""
    size, at = _varint(payload, 0)
    if size > len(payload) or size < at:
        raise _Bad
    types = []
    while at < size:
        kind, at = _varint(payload, at)
        types.append(kind)
    if at != size:
        raise _Bad
    values: list[object] = []
    body = size
    for kind in types:
        width = _width(kind)
        chunk = payload[body : body + width]
        if len(chunk) != width:
            raise _Bad
        body += width
        values.append(_value(kind, chunk))
    if body != len(payload):
        raise _Bad
    return tuple(values)


def _width(kind: int) -> int:
    if kind in (10, 11):
        raise _Bad
    if kind >= 12:
        return (kind - 12) // 2
    return (0, 1, 2, 3, 4, 6, 8, 8, 0, 0)[kind]


def _value(kind: int, chunk: bytes) -> object:
    if kind == 0:
        return None
    if 1 <= kind <= 6:
        return int.from_bytes(chunk, "big", signed=True)
    if kind == 7:
        return float(struct.unpack(">d", chunk)[0])
    if kind in (8, 9):
        return kind - 8
    if kind % 2 == 0:
        return bytes(chunk)
    try:
        return chunk.decode("utf-8")
    except UnicodeDecodeError as error:
        raise _Bad from error


def leaf_rows(image: PageImage, number: int) -> Iterator[tuple[int, tuple[object, ...]]]:
    """(rowid, values) of each cell of table leaf page ``number`` that decodes whole.

    A cell whose overflow chain is broken on its own (see :func:`_chain`) is left
    out; :func:`page_pass` also checks each chain against the others.
    """
    for cell in _leaf_cells(image, number):
        if cell.broken:
            continue
        try:
            yield cell.rowid, decode_record(cell.payload(image))
        except _Bad:
            continue


@dataclass(frozen=True)
class _Cell:
    """A table leaf cell: its rowid, the payload on the page, its overflow chain."""

    rowid: int
    local: bytes  # the payload's bytes on the leaf page
    size: int  # the whole payload's
    chain: tuple[int, ...]  # the overflow pages, in order (empty: none)
    broken: bool  # the chain does not hold the payload as SQLite writes one

    def payload(self, image: PageImage) -> bytes:
        """The whole payload: the local bytes, then each overflow page's share."""
        wanted, parts = self.size - len(self.local), [self.local]
        for number in self.chain:
            part = image.page(number)[4 : 4 + min(wanted, image.size - 4)]
            parts.append(part)
            wanted -= len(part)
        return b"".join(parts)


def _leaf_cells(image: PageImage, number: int) -> Iterator[_Cell]:
    """The cells of table leaf page ``number`` whose on-page part is well formed."""
    page = image.page(number)
    try:
        kind, offsets, _ = _cells(page, number)
    except _Bad:
        return
    if kind != _TABLE_LEAF:
        return
    for offset in offsets:
        try:
            yield _leaf_cell(image, page, offset)
        except _Bad:
            continue


def _leaf_cell(image: PageImage, page: bytes, at: int) -> _Cell:
    usable = len(page)
    size, at = _varint(page, at)
    rowid, at = _varint(page, at)
    most = usable - 35
    if size <= most:
        local = size
    else:
        least = (usable - 12) * 32 // 255 - 23
        local = least + (size - least) % (usable - 4)
        local = local if local <= most else least
    payload = page[at : at + local]
    if len(payload) != local:
        raise _Bad
    if local == size:
        return _Cell(_signed(rowid), payload, size, (), broken=False)
    first = page[at + local : at + local + 4]
    if len(first) != 4:
        raise _Bad
    chain, broken = _chain(image, int.from_bytes(first, "big"), size - local)
    return _Cell(_signed(rowid), payload, size, chain, broken)


def _chain(image: PageImage, number: int, wanted: int) -> tuple[tuple[int, ...], bool]:
    """The overflow pages holding ``wanted`` bytes from page ``number`` on; whether broken.

    Broken: a page out of the file, short, all zeros or visited twice, or a
    last page that points on (SQLite writes 0 there; a b-tree page copied over
    an overflow page points out of the file). What is read of a broken chain is
    not the row's.
    """
    pages: list[int] = []
    while wanted > 0:
        if not 1 < number <= image.count or number in pages or len(pages) > _MAX_OVERFLOW:
            return tuple(pages), True
        page = image.page(number)
        if len(page) != image.size or page == image.zeros:
            return tuple(pages), True
        pages.append(number)
        wanted -= min(wanted, image.size - 4)
        number = int.from_bytes(page[:4], "big")
    return tuple(pages), number != 0


def tree_pages(image: PageImage, root: int) -> set[int]:
    """The table leaf pages a table's b-tree reaches from ``root`` (damaged branches skipped)."""
    reached = _walk_btrees(image, [root], follow=(_TABLE_INTERIOR,))
    return {number for number, kind in reached.items() if kind == _TABLE_LEAF}


def _walk_btrees(image: PageImage, roots: Iterable[int], follow: tuple[int, ...]) -> dict[int, int]:
    """Every page reached from ``roots`` through interior pages of the ``follow`` kinds,
    with its kind (``-1`` for a page that does not read as a b-tree page)."""
    reached: dict[int, int] = {}
    stack = list(roots)
    while stack:
        number = stack.pop()
        if number in reached or not 0 < number <= image.count:
            continue
        page = image.page(number)
        try:
            kind, offsets, right = _cells(page, number)
        except _Bad:
            reached[number] = -1
            continue
        reached[number] = kind
        if kind in follow:
            stack += [int.from_bytes(page[o : o + 4], "big") for o in offsets] + [right]
    return reached


def schema_roots(image: PageImage) -> dict[str, int]:
    """Table name → root page, from the ``sqlite_master`` b-tree on page 1 (what reads of it)."""
    roots: dict[str, int] = {}
    for number in sorted(tree_pages(image, 1)):
        for _, values in leaf_rows(image, number):
            if len(values) == 5 and values[0] == "table" and isinstance(values[3], int):
                roots.setdefault(str(values[1]), values[3])
    return roots


def freelist(image: PageImage) -> set[int]:
    """The free pages the header lists (old rows may linger there); empty without a header."""
    if not image.header_ok:
        return set()
    free: set[int] = set()
    trunk = int.from_bytes(image.data[32:36], "big")
    while 1 < trunk <= image.count and trunk not in free:
        free.add(trunk)
        page = image.page(trunk)
        count = min(int.from_bytes(page[4:8], "big"), (image.size - 8) // 4)
        free.update(int.from_bytes(page[8 + 4 * i : 12 + 4 * i], "big") for i in range(count))
        trunk = int.from_bytes(page[:4], "big")
    return free


@dataclass(frozen=True)
class PageFinds:
    """What the page pass read: each table's rows, and its rowids read through damage."""

    rows: dict[str, dict[int, PageRow]]  # table → rowid → the newest intact row
    # table → rowids with a cell whose payload runs through a damaged overflow chain:
    # a read of such a rowid (SQLite's too) may be garbled, only an intact cell's row is kept.
    damaged: dict[str, frozenset[int]]


def page_rows(
    image: PageImage, shapes: Mapping[str, TableShape], roots: Mapping[str, int]
) -> dict[str, dict[int, PageRow]]:
    """Every row of the ``shapes`` tables on the file's leaf pages, once per rowid (the newest)."""
    return page_pass(image, shapes, roots).rows


def page_pass(
    image: PageImage, shapes: Mapping[str, TableShape], roots: Mapping[str, int]
) -> PageFinds:
    """Every intact row of the ``shapes`` tables on the file's leaf pages, once per rowid
    (the newest), and the rowids whose overflow chain is damaged (:func:`_damaged_chains`).
    """
    owner: dict[int, str | None] = {}
    for table, root in roots.items():
        for leaf in tree_pages(image, root):
            owner[leaf] = table if owner.get(leaf, table) == table else None  # two trees: unsure
    free = freelist(image)
    cells = [  # a free page a tree reaches too (a garbled free list?): SQLite reads its rows
        (number, cell)
        for number in range(2, image.count + 1)
        if number not in free or number in owner
        for cell in _leaf_cells(image, number)
    ]
    chains = {cell.chain for _, cell in cells if cell.chain}
    bad = _damaged_chains(image, chains, _btree_slots(image) if chains else set())
    found: dict[str, dict[int, PageRow]] = {table: {} for table in shapes}
    damaged: dict[str, set[int]] = {table: set() for table in shapes}
    for number, cell in cells:
        mine = owner.get(number)
        values = _intact_values(image, cell, bad)
        if values is None:  # its chain is damaged: the rowid of the table its header fits
            home = _table_of(_header_kinds(cell.local), shapes, mine) or mine
            if home in damaged:
                damaged[home].add(cell.rowid)
            continue
        home = _table_of(values, shapes, mine)
        if home is None or not values or number in free:
            continue
        row = PageRow(cell.rowid, values, (image.frame(number), int(home == mine)))
        kept = found[home].get(cell.rowid)
        if kept is None or row.rank > kept.rank:
            found[home][cell.rowid] = row
    return PageFinds(found, {table: frozenset(rowids) for table, rowids in damaged.items()})


def _intact_values(
    image: PageImage, cell: _Cell, bad: set[tuple[int, ...]]
) -> tuple[object, ...] | None:
    """The cell's values; ``()`` when it does not decode; ``None`` when its chain is damaged."""
    if cell.broken or cell.chain in bad:
        return None
    try:
        return decode_record(cell.payload(image))
    except _Bad:
        return None if cell.chain else ()  # read through a chain: the chain is not the row's


def _damaged_chains(
    image: PageImage, chains: set[tuple[int, ...]], slots: set[int]
) -> set[tuple[int, ...]]:
    """The overflow chains that run through a page another chain runs through too, or
    through a page whose bytes another page of the file also holds.

    In an intact file each overflow page belongs to one chain, and no two pages
    are byte for byte the same (an overflow page starts with the number of the
    next one, a b-tree page with its own header). A page copied over another
    makes two: the chain through the overwritten one reads another row's bytes,
    which SQLite returns without an error. Which of the two is the copy is known
    only when the other one sits in a b-tree's place (``slots``: pages a b-tree
    points at, which must be b-tree pages): that one was overwritten, and the
    chain through the page that is the true source is kept. Otherwise neither
    chain's row is trusted.
    """
    if not chains:
        return set()
    users: dict[int, int] = {}
    for chain in chains:
        for number in chain:
            users[number] = users.get(number, 0) + 1
    contents = {image.page(number) for number in users}
    holders: dict[bytes, list[int]] = {}
    for number in range(1, image.count + 1):
        page = image.page(number)
        if page in contents:
            holders.setdefault(page, []).append(number)
    shared = {
        number
        for number, count in users.items()
        if count > 1
        or any(
            other != number and (other not in slots or other in users)
            for other in holders[image.page(number)]
        )
    }
    return {chain for chain in chains if not shared.isdisjoint(chain)}


def _btree_slots(image: PageImage) -> set[int]:
    """Pages a b-tree points at (each table's and index's root, interior pages' children).

    Read from the ``sqlite_master`` b-tree on page 1 with this module's reader;
    in an intact file each is a b-tree page.
    """
    roots = {1}
    for number in tree_pages(image, 1):
        for _, values in leaf_rows(image, number):
            if len(values) == 5 and values[0] in ("table", "index") and isinstance(values[3], int):
                roots.add(values[3])
    return set(_walk_btrees(image, roots, follow=(_TABLE_INTERIOR, _INDEX_INTERIOR)))


def _header_kinds(local: bytes) -> tuple[object, ...]:
    """A stand-in value of each column's type, from the record header on the leaf page
    (``()`` when the header does not read): enough to tell which table the row is of.
    """
    try:
        size, at = _varint(local, 0)
        if size > len(local) or size < at:
            return ()
        values: list[object] = []
        while at < size:
            kind, at = _varint(local, at)
            if kind in (10, 11):
                return ()
            values.append(_STAND_INS.get(kind, "" if kind % 2 else b""))
    except _Bad:
        return ()
    return tuple(values) if at == size else ()


def _table_of(
    values: tuple[object, ...], shapes: Mapping[str, TableShape], owner: str | None
) -> str | None:
    """The table a row belongs to: its page's owner when it fits, else the one table it fits.

    A row its owner's shape does not fit sits on a misplaced page (a copy of
    another table's page reached through the owner's tree): its shape decides.
    """
    shape = shapes.get(owner or "")
    if shape is not None and shape.fits(values):
        return owner
    fitting = [name for name, shape in shapes.items() if shape.fits(values)]
    exact = [name for name in fitting if len(shapes[name].columns) == len(values)]
    if owner is None and len(fitting) == 1:
        return fitting[0]
    return exact[0] if len(exact) == 1 else None  # on another table's page: a whole row only


def _wal_frames(wal: bytes, size: int) -> dict[int, tuple[int, bytes]]:
    """The committed frames of a WAL: page → (frame index, page), the last commit's view."""
    if len(wal) < 32 or int.from_bytes(wal[:4], "big") not in _WAL_MAGIC:
        return {}
    if int.from_bytes(wal[8:12], "big") != size:
        return {}
    order = ">" if wal[3] == 0x83 else "<"
    salt = wal[16:24]
    check = _checksum(wal[:24], (0, 0), order)
    if check != struct.unpack(">II", wal[24:32]):
        return {}
    committed: dict[int, tuple[int, bytes]] = {}
    pending: dict[int, tuple[int, bytes]] = {}
    at, index = 32, 0
    while at + 24 + size <= len(wal):
        head, page = wal[at : at + 24], wal[at + 24 : at + 24 + size]
        if head[8:16] != salt:
            break
        check = _checksum(head[:8] + page, check, order)
        if check != struct.unpack(">II", head[16:24]):
            break
        index += 1
        pending[int.from_bytes(head[:4], "big")] = (index, page)
        if int.from_bytes(head[4:8], "big"):  # a commit frame
            committed.update(pending)
            pending = {}
        at += 24 + size
    return committed


def _checksum(data: bytes, start: tuple[int, int], order: str) -> tuple[int, int]:
    s0, s1 = start
    words = struct.unpack(f"{order}{len(data) // 4}I", data)
    mask = 0xFFFFFFFF
    for i in range(0, len(words), 2):
        s0 = (s0 + words[i] + s1) & mask
        s1 = (s1 + words[i + 1] + s0) & mask
    return s0, s1


def rebuilt_header(image: PageImage, user_version: int) -> bytes:
    """A 100-byte header for a file whose own is destroyed: what the archive's must be.

    UTF-8, no reserved bytes, rollback journal (the WAL's frames are laid into
    the copy), no free list (its pages are not needed to read), the schema
    format SQLite writes today and the archive schema's ``user_version``.
    """
    size = 1 if image.size == 65536 else image.size
    head = bytearray(100)
    head[:16] = SQLITE_HEADER
    head[16:18] = size.to_bytes(2, "big")
    head[18], head[19], head[20] = 1, 1, 0
    head[21], head[22], head[23] = 64, 32, 32
    head[24:28] = (1).to_bytes(4, "big")  # file change counter
    head[28:32] = image.count.to_bytes(4, "big")
    head[40:44] = (1).to_bytes(4, "big")  # schema cookie
    head[44:48] = (4).to_bytes(4, "big")  # schema format
    head[56:60] = (1).to_bytes(4, "big")  # UTF-8
    head[60:64] = user_version.to_bytes(4, "big")
    head[92:96] = (1).to_bytes(4, "big")  # version-valid-for = the change counter
    head[96:100] = (3040001).to_bytes(4, "big")
    return bytes(head)


def table_shape(db: sqlite3.Connection, table: str) -> TableShape:
    """``table``'s columns as ``db`` declares them (defaults evaluated in ``db``)."""
    info = db.execute(f'PRAGMA table_info("{table}")').fetchall()
    keys = [row for row in info if row[5]]
    alias = str(keys[0][1]) if len(keys) == 1 and str(keys[0][2]).upper() == "INTEGER" else None
    columns = []
    for _, name, kind, not_null, default, _ in info:
        value = None if default is None else db.execute(f"SELECT {default}").fetchone()[0]
        columns.append(
            Column(str(name), str(kind).upper(), bool(not_null), default is not None, name == alias)
        )
        columns[-1] = replace(columns[-1], default=value)
    return TableShape(table, tuple(columns))
