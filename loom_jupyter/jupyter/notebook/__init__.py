"""Which notebook this kernel serves, and the rules when it is renamed.

- ``location``  the notebook's path (``JPY_SESSION_NAME``, ``--notebook``, a terminal)
- ``relocate``  a rename or an adoption: which archive path, what is removed or kept,
                what is refused
"""
