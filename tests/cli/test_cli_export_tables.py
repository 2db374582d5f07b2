"""``loom-jupyter export`` carries every table that holds a session's rows (issue 39.3, D9).

The archive has rows in every declared table (``tests/every_table.py``); the JSON export
of a session holds, per table, exactly that session's rows; the Markdown journal marks
an outside agent's calls as ``show`` does and lists the cells each turn changed.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from contextlib import closing
from typing import TYPE_CHECKING

import pytest
from clirun import run_cli
from every_table import CLIENT, Built, build_every_table

from loom_jupyter.archive import archive_path_for
from loom_jupyter.archive.tables import TABLES

if TYPE_CHECKING:
    from pathlib import Path

_KEYS = {"cowork_sessions": "session", "conversation_turns": "turns"}  # their typed forms


@pytest.fixture(scope="module")
def notebook(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Built]:
    path = tmp_path_factory.mktemp("export") / "analysis.ipynb"
    path.write_text("{}")
    return path, asyncio.run(build_every_table(archive_path_for(path), str(path), turns=64))


def _count(notebook: Path, table: str, where: str, sid: str) -> int:
    with closing(sqlite3.connect(archive_path_for(notebook))) as db:
        sql = f'SELECT count(*) FROM "{table}" WHERE {where}'
        return int(db.execute(sql, [sid] * where.count("?")).fetchone()[0])


def test_the_json_export_carries_every_table_of_the_session(
    notebook: tuple[Path, Built],
) -> None:
    path, built = notebook
    sid = built.sessions[-1]
    done = run_cli("export", str(path), sid[:8], "--format", "json")
    assert done.code == 0, done.err
    exported = json.loads(done.out)
    per_session = [t for t in TABLES if t.session_rows is not None]
    assert set(exported) == {_KEYS.get(t.name, t.name) for t in per_session}
    for declared in per_session:
        rows = exported[_KEYS.get(declared.name, declared.name)]
        found = 1 if isinstance(rows, dict) else len(rows)
        assert declared.session_rows is not None
        expected = _count(path, declared.name, declared.session_rows, sid)
        assert found == expected > 0, declared.name
    marks = {(m["turn_number"], m["client"]) for m in exported["outside_calls"]}
    assert (built.outside_turn[1], CLIENT) in marks
    assert all(row["session_id"] == sid for row in exported["executions"])


def test_the_journal_marks_outside_calls_and_changed_cells(notebook: tuple[Path, Built]) -> None:
    path, built = notebook
    sid, marked = built.outside_turn
    done = run_cli("export", str(path), sid[:8], "--format", "md")
    assert done.code == 0, done.err
    heading = next(ln for ln in done.out.splitlines() if ln.startswith(f"## {marked}. "))
    assert heading == f"## {marked}. Tool `read_notebook` · called by {CLIENT} (outside agent)"
    shown = run_cli("show", str(path), sid[:8], "--range", f"{marked}:{marked}")
    assert f"called by {CLIENT} (outside agent)" in shown.out  # the same mark as show's
    changed = built.cell_turn[1]
    turn = done.out.split(f"\n## {changed}. ", 1)[1].split("\n## ", 1)[0]
    assert "Changed cells: `c" in turn
    assert "edited" in turn
    assert "inserted" in turn
