"""The kernel side of the sidebar chat: comm target ``loom`` (see docs/sidebar-protocol.md).

Nothing is imported here (only :data:`TARGET` is defined); the sidebar's messages,
their numbering, the queue and the approvals are the host's (:mod:`loom_jupyter.host`).

Map:

- ``bridge``     the comm: validate, hand to the engine loop, reply on the front's subshell
- ``hub``        every open sidebar, on the host's stream; their messages -> host commands
- ``cellguard``  namespace code waits for the person's running cell
"""

TARGET = "loom"
"""The comm target every sidebar opens."""
