"""Feature services over the runtime: what a front asks the host for besides a turn.

- ``views``       history pages, sessions, search and the panel's data: the fronts'
                  only way to the archive (``panel_data`` is the panel's numbers)
- ``mentions``    ``@name`` summaries of live variables for a prompt
- ``origins``     where a variable came from, for the sidebar's hover
- ``opening``     what the archive says at open: the session to resume, the banner's words
- ``restart``     after a restart: which variables a rebuild could make (``Restarts``)
- ``executions``  every execution archived, and provenance from them (``ExecutionLog``)
- ``switches``    resume, new, fork, and every front told (``Switches``)
- ``welcome``     a front's first view
- ``revert``      undoing a turn's notebook changes
- ``options``     model, thinking and effort for every front
- ``trust``       folder trust and the approval mode: every front's door (``TrustKeeper``)
- ``keys``        the API key: saved, removed, and told to every front (``KeyNotices``)
- ``examples``    the example prompts an empty conversation shows
"""
