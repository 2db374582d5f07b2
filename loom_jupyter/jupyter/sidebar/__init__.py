"""The kernel side of the sidebar chat: comm target ``loom`` (see docs/sidebar-protocol.md).

Nothing is imported here (only :data:`TARGET` is defined); :class:`~.hub.SidebarHub` is built by
:class:`~loom_jupyter.jupyter.coworker.runtime.KernelCowork`.

Map:

- ``protocol``   typed messages both ways and their JSON codec: the one source of the protocol
- ``contract``   from it: the JSON Schema the front's TypeScript is generated from, the doc's tables
- ``bridge``     the comm: validate, hand to the engine loop, reply on the front's subshell
- ``hub``        one conversation for cells and sidebars: turns, queue, stop, sessions, search
- ``events``     engine events -> sidebar messages for the running turn
- ``replay``     seq numbers and the ring buffer behind ``since_seq``
- ``history``    pages of history and session rows from the archive
- ``queue``      messages waiting behind a turn; idempotent client ids
- ``approvals``  the sidebar and stdin ask together; the first answer wins
- ``cellguard``  namespace code waits for the person's running cell
"""

TARGET = "loom"
"""The comm target every sidebar opens."""
