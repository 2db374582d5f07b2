"""A kernel's lease, from another process (run under ``unshare --pid`` by the tests).

``python lease_probe.py ARCHIVE SESSION take``: tries to take the session's lease and
prints ``held`` or ``taken``. ``... hold``: takes it, prints its owner, and exits
without releasing it (as a kernel killed by the OOM killer does).
"""

from __future__ import annotations

import asyncio
import sys

from loom_jupyter.archive import Archive
from loom_jupyter.archive.liveness import this_process_owner
from loom_jupyter.errors import LeaseHeldError


async def main(path: str, session: str, action: str) -> None:
    owner = str(this_process_owner())
    async with Archive.open(path, busy_timeout=30.0) as archive:
        try:
            await archive.acquire_lease(session, owner, stale_after=3600)
        except LeaseHeldError:
            print("held", flush=True)
            return
        print("taken" if action == "take" else f"owner {owner}", flush=True)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
