"""One coworker per kernel.

- ``runtime``   ``KernelCowork``: the archive, the session, the engine thread, turns
                started in a cell or the sidebar, the fronts attached to it
- ``registry``  the shell's coworker: opened on demand, found, moved along with a
                renamed notebook
- ``moves``     ``%cowork adopt``: a conversation left by a notebook renamed while no
                kernel listened
"""
