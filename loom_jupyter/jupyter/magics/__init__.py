"""``%cowork`` and ``%delegate``.

- ``cowork``    the ``%cowork`` / ``%%cowork`` magics and line parsing
- ``commands``  the subcommand table (``%cowork --help``)
- ``reports``   sessions, search, export, status, adopt...
- ``cost``      ``%cowork cost``: a table and a small plot
- ``recover``   ``%cowork recover``: salvage a damaged archive
- ``delegate``  ``%delegate`` / ``%%delegate``
"""
