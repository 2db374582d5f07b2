"""The sidebar's @-mentions and slash commands, kernel side: completing variables of a
real IPython shell's namespace (through the LocalKernel bridge over it), cells of the
saved notebook and files in its folder (jailed like the file tools), and what a sent
mention adds to the prompt."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from loom_jupyter.host.commands.slash import SLASH_COMMANDS, run_command
from loom_jupyter.host.services.mentions import (
    MAX_OBJECT_CHARS,
    MENTIONS_HEADER,
    MentionSources,
    complete,
    expand_mentions,
    find_mentions,
)
from loom_jupyter.settings import Settings
from loom_jupyter.tools.local_kernel import LocalKernel

if TYPE_CHECKING:
    from pathlib import Path

    from IPython.core.interactiveshell import InteractiveShell


@pytest.fixture
def sources(shell: InteractiveShell, tmp_path: Path) -> MentionSources:
    """A notebook folder with cells, files, a hidden folder and the archive; a namespace."""
    folder = tmp_path / "project"
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "sales.csv").write_text(
        "region,amount\n" + "".join(f"r{i},{i}\n" for i in range(100))
    )
    (folder / "notes.md").write_text("# Notes\nchurn is up\n")
    (folder / "blob.bin").write_bytes(b"\x00\x01\x02" * 10)
    (folder / ".loom").mkdir()
    (folder / ".loom" / "nb.ipynb.sqlite").write_text("x")
    (folder / ".hidden").mkdir()
    (folder / ".hidden" / "key.txt").write_text("secret")
    (tmp_path / "outside.txt").write_text("TOP SECRET OUTSIDE")
    notebook = folder / "nb.ipynb"
    cells = [
        {"id": "load-1", "cell_type": "code", "source": ["import pandas\n", "sales = 1"]},
        {"id": "plot-2", "cell_type": "markdown", "source": "## Plot the churn by region"},
    ]
    notebook.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4}))
    shell.run_cell("sales = {'north': [1, 2, 3], 'south': [4]}\nsample_size = 42\nname = 'x'")
    return MentionSources(
        kernel=LocalKernel(shell.user_ns),
        folder=folder,
        notebook=notebook,
        settings=Settings(),
    )


async def test_variables_of_the_live_namespace_complete_by_prefix(
    sources: MentionSources,
) -> None:
    items = await complete(sources, "sa", "variable")
    assert [(i.kind, i.label) for i in items] == [
        ("variable", "sales"),
        ("variable", "sample_size"),
    ]
    assert items[0].detail.startswith("dict")
    everything = await complete(sources, "", "variable")
    assert {i.label for i in everything} >= {"sales", "sample_size", "name"}
    assert not any(i.label.startswith("_") or i.label in ("In", "Out") for i in everything)


async def test_cells_complete_by_id_and_by_words_of_their_first_line(
    sources: MentionSources,
) -> None:
    by_id = await complete(sources, "cell:pl", "all")
    assert [(i.kind, i.label, i.detail) for i in by_id] == [
        ("cell", "cell:plot-2", "## Plot the churn by region")
    ]
    by_words = await complete(sources, "churn", "cell")
    assert [i.label for i in by_words] == ["cell:plot-2"]
    assert [i.label for i in await complete(sources, "", "cell")] == ["cell:load-1", "cell:plot-2"]


async def test_files_complete_inside_the_notebook_folder_only(sources: MentionSources) -> None:
    items = await complete(sources, "", "file")
    labels = [i.label for i in items]
    assert labels[:4] == ["blob.bin", "data/", "nb.ipynb", "notes.md"]  # shallow first
    assert "data/sales.csv" in labels
    assert not any(".loom" in label or ".hidden" in label for label in labels)
    assert [i.label for i in await complete(sources, "data/s", "file")] == ["data/sales.csv"]
    assert [i.label for i in await complete(sources, "sales", "file")] == ["data/sales.csv"]
    mixed = await complete(sources, "sa", "all")
    assert [i.kind for i in mixed] == ["variable", "variable", "file"]


def test_mentions_are_found_without_emails_or_trailing_punctuation() -> None:
    text = "compare @sales, @cell:plot-2 and @data/sales.csv. Mail a@b.com (@sales again)"
    assert find_mentions(text) == ["sales", "cell:plot-2", "data/sales.csv"]
    assert find_mentions("no mentions here, just me@example.org") == []


async def test_a_mentioned_variable_cell_and_file_add_their_summaries_marked(
    sources: MentionSources,
) -> None:
    text = "why does @sales differ from @cell:load-1 and @data/sales.csv?"
    expanded = await expand_mentions(sources, text)
    person, added = expanded.split(f"\n\n{MENTIONS_HEADER}\n\n")
    assert person == text  # the person's words, unchanged, come first
    assert "@sales (variable):" in added
    assert "north" in added
    assert "dict" in added
    assert "@cell:load-1 (cell 1 of the notebook, id load-1):" in added
    assert "import pandas\nsales = 1" in added
    assert "@data/sales.csv (file data/sales.csv," in added
    assert "region,amount\nr0,0" in added
    assert "r38,38" in added
    assert "r39,39" not in added
    assert "first 40 lines of" in added


async def test_mentions_that_name_nothing_or_leave_the_folder_add_nothing(
    sources: MentionSources,
) -> None:
    for text in (
        "ask @someone about it",
        "read @../outside.txt please",
        "read @.hidden/key.txt",
        "see @cell:nope",
        "no mention at all",
    ):
        assert await expand_mentions(sources, text) == text
    assert "TOP SECRET" not in await expand_mentions(sources, "@../outside.txt")


async def test_binary_files_and_big_files_are_capped(sources: MentionSources) -> None:
    (sources.folder / "long.txt").write_text("y" * 50_000)
    expanded = await expand_mentions(sources, "@blob.bin and @long.txt")
    assert "(binary: not shown)" in expanded
    assert len(expanded) < 2 * MAX_OBJECT_CHARS + 1000
    assert f"cut at {MAX_OBJECT_CHARS:,} characters" in expanded


async def test_help_lists_every_command_and_unknown_ones_say_so() -> None:
    result = await run_command(None, "help", "")  # type: ignore[arg-type]  # help needs no host
    assert result.ok
    for command in SLASH_COMMANDS:
        assert f"- `{command.usage}` — {command.description}\n" in result.text
    assert "@" in result.text
    unknown = await run_command(None, "frobnicate", "")  # type: ignore[arg-type]
    assert not unknown.ok
    assert "/mcp" in unknown.text


async def test_a_mentioned_value_whose_repr_hangs_says_so_in_time(
    sources: MentionSources,
) -> None:
    import threading

    from loom_jupyter.tools.namespace_reader import DescribeLimits

    release = threading.Event()

    class Stuck:
        def __repr__(self) -> str:
            release.wait(30)
            return "Stuck()"

    assert isinstance(sources.kernel, LocalKernel)
    kernel = LocalKernel(sources.kernel.namespace, limits=DescribeLimits(seconds=0.5))
    sources = MentionSources(kernel, sources.folder, sources.notebook, settings=Settings())
    kernel.namespace["stuck"] = Stuck()
    try:
        expanded = await expand_mentions(sources, "what is @stuck?")
    finally:
        release.set()
    assert "@stuck (variable):" in expanded
    assert "describing `stuck` took longer than 0.5 s: its repr did not finish" in expanded
