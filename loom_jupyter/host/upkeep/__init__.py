"""Archive upkeep: where a kernel's archive is, and what to do when it moved or broke.

- ``location``    which notebook (and so which archive) a kernel serves
- ``relocate``    the rules when a notebook is renamed or adopted
- ``renames``     the host's part that hears a new name until it is followed
- ``repair``      checking and rebuilding a damaged archive (``%cowork recover``)
"""
