"""Archive upkeep: where a kernel's archive is, and what to do when it moved or broke.

- ``location``    which notebook (and so which archive) a kernel serves
- ``relocate``    the rules when a notebook is renamed or adopted
- ``repair``      checking and rebuilding a damaged archive (``%cowork recover``)
"""
