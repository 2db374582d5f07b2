"""The runtime core: one turn at a time, its events, and the thread it runs on.

- ``loop_thread`` the engine's asyncio loop in a daemon thread
- ``replay``      seq numbers and the ring buffer behind ``since_seq``
- ``queue``       messages waiting behind a turn; idempotent client ids
- ``stream``      the typed event stream the fronts subscribe to
- ``history``     archived turns as the protocol's history items
- ``mirror``      the running turn's engine events -> protocol messages
- ``floor``       :class:`TurnFloor`: the cross-front lock, the queue, Stop, approvals routing
- ``approvals``   the sidebar and stdin ask together; the first answer wins
- ``document``    the notebook held by a front: requests to it, edits made in it
"""
