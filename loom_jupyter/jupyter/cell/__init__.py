"""What a turn shows in its cell.

- ``render``          events -> the streamed markdown answer and compact tool cards
- ``output``          text, tables and wrapping shared by every report
- ``plain_markdown``  answers readable in a terminal
- ``approval``        asking before a write tool through ``input()`` (stdin)
"""
