"""The host of one kernel's coworker, free of Jupyter: the floor every front stands on.

Nothing is imported here. :class:`~loom_jupyter.host.host.Host` owns the archive, the
session, the turns and the event stream; the Jupyter layer wraps it for a kernel and
the cell, the panel and the sidebar subscribe to its stream. Its rooms, lowest first
(each imports only those before it; ``tests/core/test_layering.py`` checks it):

- ``wire/``       the typed messages of the stream and the sidebar's comm
- ``runtime/``    the loop thread, the turn floor, the event stream and its replay
- ``upkeep/``     archive upkeep: which archive, renames, repair
- ``services/``   views of the archive, mentions, origins, restart offers, options,
                  trust and keys: what fronts ask for besides a turn
- ``host``        :class:`Host`: opening and closing, the one turn driver, sessions
- ``commands``    the commands every front offers (``/new``, ``%cowork cost``, ...)
"""
