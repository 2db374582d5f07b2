"""``python -m loom_jupyter.cli`` runs the ``loom-jupyter`` command."""

from __future__ import annotations

from loom_jupyter.cli import main

raise SystemExit(main())
