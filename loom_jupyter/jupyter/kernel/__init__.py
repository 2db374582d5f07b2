"""The kernel-side machinery every front relies on.

- ``loop_thread``  the asyncio loop in a daemon thread that runs the engine
- ``mainthread``   marshalling work to the kernel's main thread (the pump)
- ``bridge``, ``execute``, ``fdcapture``  the KernelBridge over the live namespace
- ``activity``     the person's cells between turns (code, errors, variables set)
- ``front``        which front asked for the running cell (a notebook page, a console)
"""
