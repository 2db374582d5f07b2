"""``%delegate`` in the notebook: live task tables and progress for panel and sidebar.

- ``front``  a delegation's progress to the cell, the panel and the sidebar
- ``view``   task tables as HTML and text, and the sidebar's task message
"""
