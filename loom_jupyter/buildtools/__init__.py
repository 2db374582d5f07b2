"""Build tools: code that writes the project's generated files, run by hand or by a test.

- ``contract``    the sidebar protocol's JSON Schema, the slash-command table and the
                  protocol page's tables, derived from :mod:`loom_jupyter.host.wire.protocol`
- ``compat``      the breaking-change check of that schema against the frozen schema of
                  each released protocol version (``labextension/schema-history/``)

Nothing in the package imports this unit: it sits above every layer.
"""
