"""Another process holding an archive open: ``python holder.py ARCHIVE``.

Opens the file with plain ``sqlite3`` (like a second kernel or a ``loom-jupyter``
command between two statements), reads it once, prints ``holding JOURNAL`` and keeps the
connection open until stdin closes.
"""

from __future__ import annotations

import sqlite3
import sys

db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("SELECT count(*) FROM conversation_turns").fetchone()
mode = db.execute("PRAGMA journal_mode").fetchone()[0]
print(f"holding {mode}", flush=True)
sys.stdin.read()
db.close()
