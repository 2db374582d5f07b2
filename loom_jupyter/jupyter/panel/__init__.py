"""The live panel (``%cowork status``): a display updated in place, readable when saved.

- ``widget``  the panel: one display per kernel, updated as events come; text in a terminal
- ``render``  its HTML and plain-text twin
"""
