"""Feature services over the runtime: what a front asks the host for besides a turn.

- ``views``       history pages, sessions, search and the panel's data: the fronts'
                  only way to the archive (``panel_data`` is the panel's numbers)
- ``mentions``    ``@name`` summaries of live variables for a prompt
- ``origins``     where a variable came from, for the sidebar's hover
- ``restart``     after a restart: which variables a rebuild could make
- ``options``     model, thinking and effort for every front
- ``trust``       folder trust: every front's door to the decision
- ``keys``        the API key: saved, removed, and told to every front
- ``examples``    the example prompts an empty conversation shows
"""
