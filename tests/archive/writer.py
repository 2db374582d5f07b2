"""A separate process that appends turns and prints each acknowledged turn number.

Run as ``python writer.py ARCHIVE COUNT [LABEL [JOURNAL]]``; prints ``session <id>`` then
``ack <n>`` after each ``append_turn`` returns (COUNT 0 means forever). JOURNAL is the
archive's ``journal_mode`` (``auto`` when not given).
"""

from __future__ import annotations

import asyncio
import sys
from typing import TYPE_CHECKING, cast

from loom_jupyter.archive import Archive
from loom_jupyter.messages import TurnDraft

if TYPE_CHECKING:
    from loom_jupyter.settings import JournalMode


async def main(path: str, count: int, label: str, journal: str) -> None:
    mode = cast("JournalMode", journal)
    async with Archive.open(path, busy_timeout=10.0, journal_mode=mode) as archive:
        sid = await archive.create_session(notebook_path="/nb.ipynb", model=label)
        print(f"session {sid}", flush=True)
        n = 0
        while count == 0 or n < count:
            n = await archive.append_turn(
                sid, TurnDraft(role="user", content=f"{label} message {n + 1} " * 8, token_count=3)
            )
            print(f"ack {n}", flush=True)


if __name__ == "__main__":
    label = sys.argv[3] if len(sys.argv) > 3 else "w"
    journal = sys.argv[4] if len(sys.argv) > 4 else "auto"
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), label, journal))
