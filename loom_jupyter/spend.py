"""The day's spend of one person, across all their notebooks and kernels (DESIGN §16).

The managed policy's ``daily_spend_limit_usd`` is kept here: ``spend.sqlite`` in
``$XDG_STATE_HOME/loom/`` (``~/.local/state/loom/``), one row per model request with its
cost, written through (each request's row is committed when it returns) so that a second
notebook, a restarted kernel or a delegation's sub-agents see the same total. Days are UTC
days; the ledger keeps the person's name (``getpass.getuser()``) so a state folder shared by
mistake still counts each person apart. A request is checked before it is sent
(:meth:`SpendLedger.check`); its cost is added after (:meth:`SpendLedger.add`).

The file is opened for each read or write (a kernel holds nothing open between requests)
with SQLite's rollback journal and a busy timeout: it is safe on a home folder that is a
network mount, and two notebooks that write at once wait for each other.
"""

from __future__ import annotations

import contextlib
import datetime
import getpass
import os
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

from loom_jupyter.errors import RequestRefusedError

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["SPEND_FILE_NAME", "SpendLedger", "spend_path", "utc_day"]

SPEND_FILE_NAME = "spend.sqlite"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS spend (
    id INTEGER PRIMARY KEY,
    day TEXT NOT NULL,            -- the UTC day, YYYY-MM-DD
    person TEXT NOT NULL,
    at TEXT NOT NULL,             -- when the request returned (UTC, ISO 8601)
    model TEXT NOT NULL,
    cost_usd REAL NOT NULL,
    notebook TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS spend_by_day ON spend (person, day);
"""


def spend_path() -> Path:
    """``$XDG_STATE_HOME/loom/spend.sqlite`` (``~/.local/state/loom/`` when it is unset)."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "loom" / SPEND_FILE_NAME


def utc_day(now: datetime.datetime | None = None) -> str:
    """The UTC day of ``now`` (default: now), ``YYYY-MM-DD``."""
    return (now or _now()).astimezone(datetime.timezone.utc).date().isoformat()


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc)


class SpendLedger:
    """One person's spend per UTC day, in ``path`` (default :func:`spend_path`)."""

    def __init__(self, path: Path | None = None, *, person: str | None = None) -> None:
        self.path = path or spend_path()
        self.person = person or _person()

    def spent_today(self, now: datetime.datetime | None = None) -> float:
        """What the person's requests cost so far this UTC day, in dollars."""
        if not self.path.exists():
            return 0.0
        with self._connected() as db:
            row = db.execute(
                "SELECT COALESCE(SUM(cost_usd), 0) FROM spend WHERE person = ? AND day = ?",
                (self.person, utc_day(now)),
            ).fetchone()
        return float(row[0])

    def add(
        self,
        cost_usd: float,
        *,
        model: str,
        notebook: str = "",
        now: datetime.datetime | None = None,
    ) -> None:
        """Add one request's cost to the day it returned on (committed before returning)."""
        when = now or _now()
        with self._connected() as db:
            db.execute(
                "INSERT INTO spend (day, person, at, model, cost_usd, notebook) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (utc_day(when), self.person, when.isoformat(), model, cost_usd, notebook),
            )

    def check(
        self, limit_usd: float, *, policy_file: str, now: datetime.datetime | None = None
    ) -> None:
        """Refuse (:class:`RequestRefusedError`) a request once the day's spend reached
        ``limit_usd``, with the figures and when it resets."""
        spent = self.spent_today(now)
        if spent >= limit_usd:
            raise RequestRefusedError(refusal(spent, limit_usd, policy_file, now))

    @contextlib.contextmanager
    def _connected(self) -> Iterator[sqlite3.Connection]:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not self.path.exists():
            fd = os.open(self.path, os.O_CREAT | os.O_WRONLY, 0o600)
            os.close(fd)
        db = sqlite3.connect(self.path, timeout=10.0, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode = DELETE")
            db.executescript(_SCHEMA)
            yield db
        finally:
            db.close()


def refusal(
    spent: float, limit_usd: float, policy_file: str, now: datetime.datetime | None = None
) -> str:
    """``The daily spend limit is reached: today $20.13 of $20.00 spent; resets at 00:00 UTC
    (in 5 h 12 min). …``"""
    moment = now or _now()
    tomorrow = datetime.datetime.combine(
        moment.astimezone(datetime.timezone.utc).date() + datetime.timedelta(days=1),
        datetime.time(0, 0),
        tzinfo=datetime.timezone.utc,
    )
    left = int((tomorrow - moment).total_seconds() // 60)
    return (
        f"The daily spend limit is reached: today ${spent:.2f} of ${limit_usd:.2f} spent; "
        f"resets at 00:00 UTC (in {left // 60} h {left % 60} min). Nothing was sent. The "
        f"limit is set by your organisation's managed policy ({policy_file})."
    )


def _person() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no name for this uid (some containers)
        return str(os.getuid()) if hasattr(os, "getuid") else "unknown"
