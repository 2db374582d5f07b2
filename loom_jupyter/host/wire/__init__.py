"""The wire: the typed messages of the host's stream and of the sidebar's comm, written once.

- ``protocol``    frozen dataclasses, their encoding, and parsing a front's message (pydantic)

It imports nothing else of the host; :mod:`loom_jupyter.buildtools.contract` derives
the front's JSON Schema and the protocol page's tables from it.
"""
