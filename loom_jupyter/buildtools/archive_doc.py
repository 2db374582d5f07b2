"""The archive's table of tables in ``docs/architecture.md``, from ``archive/tables.py``.

Run ``python -m loom_jupyter.buildtools.archive_doc`` after declaring or changing a table;
``tests/archive/test_every_table.py`` fails while the page's table is stale.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from typing_extensions import assert_never

from loom_jupyter.archive.tables import (
    TABLES,
    ArchiveTable,
    Copied,
    Derived,
    Follows,
    ForkRule,
    Left,
    OwnRow,
    Ref,
    Verbatim,
)

__all__ = ["DOC_PATH", "main", "render", "table_of_tables"]

DOC_PATH = Path("docs/architecture.md")
_MARKER = re.compile(
    r"(<!-- GENERATED archive-tables: [^>]*-->\n)(.*?)(<!-- END GENERATED -->)", re.DOTALL
)


def table_of_tables() -> str:
    """A Markdown table: each table, what it holds, its migrations, a fork, a recovery."""
    lines = [
        "| table | holds | migrations | a fork | a recovery |",
        "|---|---|---|---|---|",
    ]
    lines += [_row(declared) for declared in TABLES]
    return "\n".join(lines)


def _row(declared: ArchiveTable) -> str:
    steps = ", ".join(f"{m.version} `{m.name}`" for m in declared.migrations)
    cells = (f"`{declared.name}`", declared.doc, steps, _fork(declared.fork), _recovery(declared))
    return "| " + " | ".join(cells) + " |"


def _fork(rule: ForkRule) -> str:
    match rule:
        case OwnRow():
            return "makes its own row"
        case Copied():
            return "copies the rows of turns up to the fork's"
        case Left(why=why):
            return f"leaves them: {why}"
        case Follows(table=table):
            return f"follows `{table}`"
        case _:
            assert_never(rule)


def _recovery(declared: ArchiveTable) -> str:
    remake = declared.remake
    match remake:
        case Verbatim():
            return "; ".join(["rows copied verbatim", *map(_parent_lost, declared.refs)])
        case Derived():
            return "made again from the saved rows"
        case _:
            assert_never(remake)


def _parent_lost(ref: Ref) -> str:
    parent = "session" if ref.parent == "cowork_sessions" else ref.parent.rstrip("s")
    if ref.lost == "home":
        return f"`{ref.column}`'s {parent} lost: recreated"
    return f"`{ref.column}`'s {parent} lost: kept on its own"


def render(root: Path) -> str:
    """``docs/architecture.md`` under ``root`` with its table of tables made again."""
    page = (root / DOC_PATH).read_text(encoding="utf-8")
    if not _MARKER.search(page):
        raise ValueError(f"{DOC_PATH} lacks the GENERATED archive-tables markers")
    return _MARKER.sub(lambda m: m[1] + table_of_tables() + "\n" + m[3], page)


def main() -> None:
    """``python -m loom_jupyter.buildtools.archive_doc [REPO]``: regenerate the table."""
    root = Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    if not (root / DOC_PATH).is_file():
        raise SystemExit(f"run this from the loom_jupyter repository (no {DOC_PATH} here)")
    page = render(root)
    if page == (root / DOC_PATH).read_text(encoding="utf-8"):
        print("up to date")
        return
    (root / DOC_PATH).write_text(page, encoding="utf-8")
    print(f"wrote {DOC_PATH}")


if __name__ == "__main__":
    main()
