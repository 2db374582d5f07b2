"""The ``loom-jupyter`` command, run as a real subprocess against a real archive."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

import pytest
from clirun import Notebook, run_cli

from loom_jupyter.archive import Archive, archive_path_for
from loom_jupyter.messages import TurnDraft

if TYPE_CHECKING:
    from pathlib import Path


def test_sessions_table(notebook: Notebook) -> None:
    result = run_cli("sessions", str(notebook.path))
    assert result.code == 0, result.err
    header, rule, first, second = result.out.splitlines()
    assert header.split() == [
        "#",
        "ID",
        "STATUS",
        "TURNS",
        "TOKENS",
        "COST",
        "LAST",
        "ACTIVE",
        "(UTC)",
        "TITLE",
    ]
    assert set(rule) == {"-", " "}
    assert first.split()[:4] == ["1", notebook.newer[:8], "active", "1"]
    assert second.split()[:6] == ["2", notebook.older[:8], "active", "4", "1,500", "$0.0125"]
    assert second.endswith("Load sales.csv and plot revenue")
    assert header.index("TITLE") == first.index("Find outliers")  # columns line up


def test_show_latest_by_number_by_prefix_and_range(notebook: Notebook) -> None:
    latest = run_cli("show", str(notebook.path))
    assert latest.code == 0, latest.err
    assert "Find outliers in revenue" in latest.out
    by_number = run_cli("show", str(notebook.path), "2")
    by_prefix = run_cli("show", str(notebook.path), notebook.older[:6])
    assert by_number.out == by_prefix.out
    out = by_number.out
    assert out.index("#1 user") < out.index("#2 assistant") < out.index("#3 tool run_python")
    assert "→ calls run_python" in out
    assert "(error)" in out
    assert "KeyError: 'revenue'" in out
    ranged = run_cli("show", str(notebook.path), "2", "--range", "3:4")
    assert "#3 tool" in ranged.out
    assert "#4 assistant" in ranged.out
    assert "#2 assistant" not in ranged.out


def test_search_one_session_or_all(notebook: Notebook) -> None:
    one = run_cli("search", str(notebook.path), "revenue")
    assert one.code == 0, one.err
    assert notebook.newer[:8] in one.out
    assert notebook.older[:8] not in one.out
    both = run_cli("search", str(notebook.path), "revenue", "--all-sessions", "--limit", "3")
    assert both.out.startswith("3 match(es) for 'revenue' in any session (3 exact word):")
    assert "some words" not in both.out  # a one-word query's every hit holds it (issue 40.6)
    numbered = [line[:3] for line in both.out.splitlines() if re.match(r"\d\. ", line)]
    assert numbered == ["1. ", "2. ", "3. "]
    assert notebook.older[:8] in both.out
    nasty = run_cli("search", str(notebook.path), 'NEAR("x" AND (*', "--all-sessions")
    assert nasty.code == 0, nasty.err
    assert "No turns in any session match" in nasty.out


def test_search_shows_matches_with_their_neighbours_as_context(notebook: Notebook) -> None:
    out = run_cli("search", str(notebook.path), "plot revenue", "--all-sessions").out
    first = out.split("\n\n")[1]
    assert "turn 1 · user" in first
    assert "exact phrase" in first
    assert "after: turn 2 assistant: Loading it." in first  # context, not a hit
    assert "Loading it." not in out.split("\n\n")[2]


def test_search_a_folder_searches_every_notebook_under_it(
    notebook: Notebook, tmp_path: Path
) -> None:
    out = run_cli("search", str(tmp_path), "outliers")
    assert out.code == 0, out.err
    assert "in 1 notebook archive(s) under" in out.out
    assert "1. sales analysis.ipynb · session" in out.out
    empty = run_cli("search", str(tmp_path / ".loom"), "x")
    assert empty.code == 2
    assert "No notebook archives under" in empty.err


def test_export_markdown_and_json(notebook: Notebook, tmp_path: Path) -> None:
    target = tmp_path / "out.md"
    md = run_cli("export", str(notebook.path), "2", "--format", "md", "-o", str(target))
    assert md.code == 0, md.err
    assert f"to {target}" in md.out
    text = target.read_text()
    assert text.startswith("# Load sales.csv and plot revenue\n")
    assert "## 3. Tool `run_python` (error)" in text
    assert "df = pd.read_csv('sales.csv')" in text
    raw = run_cli("export", str(notebook.path), notebook.older, "--format", "json")
    data = json.loads(raw.out)
    assert data["session"]["id"] == notebook.older
    assert [t["turn_number"] for t in data["turns"]] == [1, 2, 3, 4]
    assert data["turns"][1]["blocks"][1] == {
        "type": "tool_use",
        "id": "tu_1",
        "name": "run_python",
        "input": {"code": "df = pd.read_csv('sales.csv')"},
    }
    assert data["turns"][2]["is_error"] is True


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["show", "{dir}/missing.ipynb"], "Notebook not found"),
        (["sessions", "{dir}/fresh.ipynb"], "No archive for"),
        (["show", "{nb}", "ffffffff"], "No session 'ffffffff'"),
        (["show", "{nb}", "9"], "No session '9'"),
        (["show", "{nb}", "--range", "x:y"], "Bad --range"),
    ],
)
def test_clear_errors_exit_2(notebook: Notebook, args: list[str], message: str) -> None:
    (notebook.path.parent / "fresh.ipynb").write_text("{}")
    filled = [a.format(dir=notebook.path.parent, nb=notebook.path) for a in args]
    result = run_cli(*filled)
    assert result.code == 2
    assert message in result.err
    assert result.out == ""
    assert not archive_path_for(notebook.path.parent / "fresh.ipynb", create=False).exists()


def test_corrupt_archive_exits_1(tmp_path: Path) -> None:
    notebook = tmp_path / "nb.ipynb"
    notebook.write_text("{}")
    archive_path_for(notebook).write_bytes(b"not sqlite at all" * 10)
    result = run_cli("sessions", str(notebook))
    assert result.code == 1
    assert "is not a readable SQLite database" in result.err


@pytest.mark.parametrize("command", ["sessions", "show", "search", "export"])
def test_help_has_examples(command: str) -> None:
    result = run_cli(command, "--help")
    assert result.code == 0
    assert "examples:" in result.out
    assert f"loom-jupyter {command} analysis.ipynb" in result.out


async def test_sub_agent_sessions_are_listed_only_when_asked(notebook: Notebook) -> None:
    async with Archive.open(archive_path_for(notebook.path)) as archive:
        task = await archive.create_task(notebook.newer, goal="split the work")
        subtask = await archive.create_subtask(task, subtask_key="a", description="part a")
        child = await archive.create_session(
            notebook_path=str(notebook.path),
            model="claude-sonnet",
            title="[delegated a] part a",
            parent_session_id=notebook.newer,
        )
        await archive.update_subtask(subtask, child_session_id=child)
        await archive.append_turn(child, TurnDraft(role="user", content="Do part a"))

    listed = run_cli("sessions", str(notebook.path))
    assert listed.code == 0, listed.err
    assert "[delegated a]" not in listed.out
    assert len(listed.out.splitlines()) == 4  # header, rule, the person's two sessions
    everything = run_cli("sessions", str(notebook.path), "--delegated")
    assert "[delegated a] part a" in everything.out
    shown = run_cli("show", str(notebook.path), child[:8])  # an id still opens it
    assert shown.code == 0, shown.err
    assert "Do part a" in shown.out
    assert "Find outliers" in run_cli("show", str(notebook.path), "1").out


async def test_provenance_from_the_archived_executions(notebook: Notebook) -> None:
    from loom_jupyter.lineage import execution_record

    cells = ["import json", "rows = [1, 2]", "noise = 0", "total = sum(rows)"]
    async with Archive.open(archive_path_for(notebook.path)) as archive:
        for n, code in enumerate(cells, 1):
            made = execution_record(
                code, source="cell", changed=(), namespace={}, duration_s=0.5, execution_count=n
            )
            await archive.record_execution(made)
    one = run_cli("provenance", str(notebook.path), "total")
    assert one.code == 0, one.err
    assert "Provenance of total: last set by cell [4]" in one.out
    assert "    total = sum(rows)" in one.out
    assert "depends on 1 earlier execution(s): cell [2] `rows = [1, 2]`." in one.out
    every = run_cli("provenance", str(notebook.path))
    assert every.code == 0, every.err
    names = [line.split()[0] for line in every.out.splitlines()[2:]]
    assert names == ["json", "noise", "rows", "total"]
    assert (
        "no archived execution sets it" in run_cli("provenance", str(notebook.path), "nowhere").out
    )
    assert "provenance" in run_cli("--help").out
