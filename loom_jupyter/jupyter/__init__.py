"""The Jupyter front: the only part of loom_jupyter that imports IPython, ipykernel,
ipywidgets or comm.

Nothing is imported here; ``%load_ext loom_jupyter`` imports :mod:`.extension`, which
pulls in the rest on demand. Sub-packages by job, lowest first (a package imports only
the ones above it in this list, ``tests/core/test_layering.py`` checks it):

- ``autoload``    the code the sidebar's auto-load sends: Loom from where it is installed
                  (imports nothing; generated into the labextension)
- ``server``      Loom's Jupyter Server extension: kernel websockets with TCP_NODELAY
                  (loaded by Jupyter Server, never by the kernel)
- ``cell``        what a turn shows in its cell: markdown rendering, output helpers,
                  the stdin approval question
- ``notebook``    which notebook (and so which archive) this kernel serves; the rules
                  for following a rename
- ``kernel``      the machinery: the engine loop's thread, marshalling to the main
                  thread, the KernelBridge over the live namespace, the person's cells,
                  which front asked for a cell
- ``panel``       the live panel (``%cowork status``): a display updated in place
- ``sidebar``     the sidebar's comm target ``loom`` (docs/sidebar-protocol.md)
- ``delegation``  %delegate's live task tables and progress to panel and sidebar
- ``coworker``    one coworker per kernel (``KernelCowork``): the archive, the session,
                  turns for every front; opened, found and moved with its notebook
- ``magics``      ``%cowork`` and ``%delegate``: parsing, subcommands, reports
- ``extension``   ``%load_ext`` / ``%unload_ext``
"""
