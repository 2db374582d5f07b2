"""The kernel side of the sidebar chat and of outside agents' links: comm targets ``loom``
(pages, see docs/sidebar-protocol.md) and ``loom-agent`` (``loom-jupyter mcp``, DESIGN §14).

Nothing is imported here (only the targets' names are defined); the sidebar's messages,
their numbering, the queue and the approvals are the host's (:mod:`loom_jupyter.host`).

Map:

- ``bridge``     the comm: validate, hand to the engine loop, reply on the front's subshell
- ``hub``        every open sidebar, on the host's stream; their messages -> host commands
- ``presence``   which pages are still there (``ping``/``pong``) and which shows the notebook
- ``agents``     outside agents' links: ``hello`` and ``outside_call`` only, never a page
- ``cellguard``  namespace code waits for the person's running cell
"""

TARGET = "loom"
"""The comm target every sidebar opens."""
AGENT_TARGET = "loom-agent"
"""The comm target an outside agent's link opens (``loom-jupyter mcp``, DESIGN §14)."""
