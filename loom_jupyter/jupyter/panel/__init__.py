"""The live ipywidgets panel (``%cowork status``).

- ``widget``  the panel and its text fallback in a terminal
- ``data``    what it shows, read from the archive
"""
