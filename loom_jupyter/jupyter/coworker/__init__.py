"""One coworker per kernel.

- ``runtime``   ``KernelCowork``: the archive, the session, the engine thread, turns
                started in a cell or the sidebar, the fronts attached to it
- ``registry``  the shell's coworker: opened on demand, found, moved along with a
                renamed notebook
- ``moves``     ``%cowork adopt``: a conversation left by a notebook renamed while no
                kernel listened
- ``placing``   the sidebar's door while no coworker is open: a hello places a notebook
                the kernel could not name, or hears why nothing opened
"""
