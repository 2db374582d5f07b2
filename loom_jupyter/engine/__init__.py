"""The engine: the agent loop, the context window, session state and recall hints.

Pure logic and typed events; it reads the archive only through ``loom_jupyter.readers``.
"""
