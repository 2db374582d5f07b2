"""The host of one kernel's coworker, free of Jupyter: the floor every front stands on.

Nothing is imported here. :class:`~loom_jupyter.host.host.Host` owns the archive, the
session, the turns and the event stream; the Jupyter layer wraps it for a kernel and
the cell, the panel and the sidebar subscribe to its stream. Modules:

- ``host``        :class:`Host`: opening and closing, the one turn driver, sessions
- ``floor``       one turn at a time, the queue behind it, Stop, approvals routing
- ``stream``      the typed event stream the fronts subscribe to
- ``mirror``      the running turn's engine events -> protocol messages
- ``protocol``    the typed messages of the stream and of the sidebar's wire, written once
- ``contract``    from them: the JSON Schema the front's TypeScript is generated from
- ``replay``      seq numbers and the ring buffer behind ``since_seq``
- ``queue``       messages waiting behind a turn; idempotent client ids
- ``approvals``   the sidebar and stdin ask together; the first answer wins
- ``views``       history pages, sessions, search and the panel's data: the fronts'
                  only way to the archive (``history`` and ``panel_data`` build them)
- ``location``    which notebook (and so which archive) a kernel serves
- ``relocate``    the rules when a notebook is renamed or adopted
- ``repair``      checking and rebuilding a damaged archive (``%cowork recover``)
- ``loop_thread`` the engine's asyncio loop in a daemon thread
"""
