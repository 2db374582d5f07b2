"""The tools the agent can call, and the seams they run through.

Modules by domain (import the one you need; nothing is re-exported here so
``import loom_jupyter.tools`` stays free):

- ``base``: the Tool protocol, ToolOutput, ToolContext, KernelBridge and effects.
- ``registry``: ToolRegistry, ``default_registry()``; ``run`` turns every tool
  problem into an ``is_error`` result, caps output and redacts secrets.
- ``approval``: the per-session ApprovalPolicy (``ask`` / ``auto`` / ``read-only``).
- ``schema``: typed inputs (a frozen dataclass per tool, its JSON schema derived by
  pydantic, the committed snapshot ``input_schemas.json``, the checks' wording);
  ``output`` (caps, redaction); ``stream_redact``: the model's answer redacted as it streams.
- ``recall`` + ``recall_input`` + ``recall_render`` + ``recall_tasks``:
  ``conversation_recall`` over the archive.
- ``files`` + ``edits`` + ``paths``: file tools inside the notebook folder's jail.
- ``shell``: commands in the notebook folder with a timeout.
- ``kernel`` + ``notebook``: ``run_python``, ``inspect_variables``, ``insert_cell``,
  ``read_notebook`` over a KernelBridge.
- ``local_kernel``, ``describe``, ``figures``: the in-process KernelBridge and the
  value-description helpers the Jupyter bridge reuses.
"""
