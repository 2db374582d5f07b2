"""The commands every front offers, declared once (issue 31.2).

- ``fields``    :func:`arg`, a field of an argument dataclass with its help; the fronts'
                names (:func:`spelled`) and :class:`UsageProblem`
- ``spec``      how a command is declared: :class:`Spec` (generic in its argument
                dataclass, which types its handler), and the parsers that dataclass
                makes (the magic's, the sidebar's tokenizer, the CLI's)
- ``arguments`` every command's argument dataclass (imported on first use)
- ``report``    what a command answers: :class:`Report` (title, notes, tables, blocks)
                and the sidebar's one report-to-markdown
- ``context``   what a handler runs against: the kernel's host, or an archive alone
- ``registry``  :data:`COMMANDS`, the one table (each command's argument class and
                handler, imported on first use), and :func:`execute`
- ``slash``     the sidebar's slash commands, from the table
- handlers, by subject: ``sessions``, ``archive``, ``usage``, ``variables``, ``folder``

The magic's subcommands (``jupyter/magics/commands.py``) and the terminal's argparse
(``cli/``) are generated from the same table. Nothing is imported here.
"""
