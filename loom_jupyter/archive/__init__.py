"""The conversation archive: one SQLite file per notebook (see ``docs/architecture.md``)."""
