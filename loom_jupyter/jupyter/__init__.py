"""The Jupyter front: ``%cowork`` magics, the engine thread, the live panel.

The only part of loom_jupyter that imports IPython, ipykernel and ipywidgets.
Nothing is imported here; ``%load_ext loom_jupyter`` imports
:mod:`loom_jupyter.jupyter.extension`, which pulls in the rest on demand.

Map:

- ``extension``      load/unload, one :class:`~.runtime.KernelCowork` per shell
- ``runtime``        the kernel's coworker: engine thread, archive, session, turns
- ``engine``         the asyncio loop in a daemon thread
- ``mainthread``     marshalling work to the kernel's main thread (the pump)
- ``bridge``/``execute``  the KernelBridge over the live user namespace
- ``notebook_path``  which notebook (and so which archive) this kernel has
- ``magics``/``commands``/``reports``  ``%cowork`` parsing and subcommands
- ``render``/``output``/``cost``  what the person sees
- ``panel``/``panel_data``  the ipywidgets panel and its text fallback
- ``approval``       asking before write tools, through ``input()``
- ``sidebar``        the sidebar's comm target ``loom`` (docs/sidebar-protocol.md)
"""
