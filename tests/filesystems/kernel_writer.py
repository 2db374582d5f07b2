"""One "kernel" writing turns through the real Archive API, in its own process.

``python kernel_writer.py ARCHIVE LABEL TURNS [--take SESSION] [--hostname NAME]``:
opens the archive (``journal_mode`` from ``LOOM_JOURNAL_MODE``, else ``auto``), prints
``journal MODE FSTYPE``; with ``--take``, tries to take that session's lease and prints
``lease held`` or ``lease taken``; then creates its own session, takes its lease, prints
``session ID`` and waits for a line on stdin before appending TURNS turns, printing
``ack N`` after each ``append_turn`` returns (a heartbeat every 10). Prints ``done`` and
waits for stdin to close before closing the archive. ``--hostname`` (under ``unshare
--uts``) makes it look like another machine to the lease.
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import sys

from loom_jupyter.archive import Archive
from loom_jupyter.archive.liveness import this_process_owner
from loom_jupyter.errors import LeaseHeldError
from loom_jupyter.messages import TurnDraft
from loom_jupyter.settings import Settings


async def main(args: argparse.Namespace) -> None:
    if args.hostname:
        socket.sethostname(args.hostname)
    mode = Settings.load().journal_mode  # LOOM_JOURNAL_MODE, as a kernel reads it
    async with Archive.open(args.archive, busy_timeout=30.0, journal_mode=mode) as archive:
        print(f"journal {archive.journal_mode} {archive.filesystem.fs_type}", flush=True)
        owner = str(this_process_owner())
        if args.take:
            try:
                await archive.acquire_lease(args.take, owner, stale_after=3600)
                print("lease taken", flush=True)
            except LeaseHeldError:
                print("lease held", flush=True)
        sid = await archive.create_session(notebook_path="/nb.ipynb", model=args.label)
        await archive.acquire_lease(sid, owner, stale_after=3600)
        print(f"session {sid}", flush=True)
        sys.stdin.readline()
        for n in range(1, args.turns + 1):
            text = f"{args.label} turn {n} " + "lorem ipsum dolor " * 60
            number = await archive.append_turn(sid, TurnDraft(role="user", content=text))
            print(f"ack {number}", flush=True)
            if n % 10 == 0:
                await archive.heartbeat(sid, owner)
        print("done", flush=True)
        sys.stdin.read()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("archive")
    parser.add_argument("label")
    parser.add_argument("turns", type=int)
    parser.add_argument("--take")
    parser.add_argument("--hostname")
    asyncio.run(main(parser.parse_args()))
