"""File tools on real files: the jail, binary and oversized refusals, edits."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import re
import threading
from typing import TYPE_CHECKING

import pytest

from loom_jupyter.tools.base import FileEffect

if TYPE_CHECKING:
    from pathlib import Path

    from .conftest import Caller


async def test_read_file_numbers_lines_and_reports_the_read(
    notebook_dir: Path, call: Caller
) -> None:
    (notebook_dir / "notes.txt").write_text("alpha\nbeta\ngamma\n")
    out = await call("read_file", path="notes.txt")
    assert not out.is_error
    assert "notes.txt (lines 1-3 of 3)" in out.text_content
    assert "     2\tbeta" in out.text_content
    assert out.effects == (FileEffect("notes.txt", "read"),)


async def test_read_file_line_range(notebook_dir: Path, call: Caller) -> None:
    (notebook_dir / "n.txt").write_text("".join(f"line {i}\n" for i in range(1, 101)))
    out = await call("read_file", path="n.txt", start_line=40, end_line=42)
    assert out.text_content.splitlines()[1:] == [
        "    40\tline 40",
        "    41\tline 41",
        "    42\tline 42",
    ]
    past = await call("read_file", path="n.txt", start_line=500)
    assert past.is_error
    assert "fewer than 500 lines" in past.text_content


async def test_dotdot_escape_is_refused_naming_the_folder(
    tmp_path: Path, real_dir: str, call: Caller
) -> None:
    (tmp_path / "secret.txt").write_text("top secret")
    out = await call("read_file", path="../secret.txt")
    assert out.is_error
    assert "outside the notebook folder" in out.text_content
    assert real_dir in out.text_content
    assert "top secret" not in out.text_content


async def test_absolute_path_outside_is_refused(tmp_path: Path, call: Caller) -> None:
    outside = tmp_path / "elsewhere.txt"
    outside.write_text("nope")
    out = await call("read_file", path=str(outside))
    assert out.is_error
    assert "outside the notebook folder" in out.text_content


async def test_absolute_path_inside_is_allowed(notebook_dir: Path, call: Caller) -> None:
    (notebook_dir / "in.txt").write_text("fine")
    out = await call("read_file", path=str(notebook_dir / "in.txt"))
    assert not out.is_error
    assert "fine" in out.text_content


async def test_symlink_to_outside_is_refused_for_read_and_write(
    notebook_dir: Path, tmp_path: Path, call: Caller
) -> None:
    target = tmp_path / "outside.txt"
    target.write_text("outside data")
    (notebook_dir / "link.txt").symlink_to(target)
    (notebook_dir / "linkdir").symlink_to(tmp_path)
    read = await call("read_file", path="link.txt")
    assert read.is_error
    assert "symlink" in read.text_content
    assert "outside data" not in read.text_content
    write = await call("write_file", path="linkdir/new.txt", content="x")
    assert write.is_error
    assert not (tmp_path / "new.txt").exists()
    edit = await call("edit_file", path="link.txt", old_string="outside", new_string="inside")
    assert edit.is_error
    assert target.read_text() == "outside data"


async def test_symlink_inside_the_folder_is_fine(notebook_dir: Path, call: Caller) -> None:
    (notebook_dir / "data").mkdir()
    (notebook_dir / "data" / "real.csv").write_text("a,b\n1,2\n")
    (notebook_dir / "alias.csv").symlink_to(notebook_dir / "data" / "real.csv")
    out = await call("read_file", path="alias.csv")
    assert not out.is_error
    assert "1,2" in out.text_content
    assert out.effects == (FileEffect("data/real.csv", "read"),)


async def test_binary_files_are_refused(notebook_dir: Path, call: Caller) -> None:
    (notebook_dir / "blob.bin").write_bytes(b"PK\x03\x04\x00\x00binary")
    (notebook_dir / "latin.txt").write_bytes("caf\xe9".encode("latin-1"))
    nul = await call("read_file", path="blob.bin")
    assert nul.is_error
    assert "binary file" in nul.text_content
    undecodable = await call("read_file", path="latin.txt")
    assert undecodable.is_error
    assert "not UTF-8" in undecodable.text_content


async def test_oversized_file_is_refused_with_size_and_a_line_range_works(
    notebook_dir: Path, call: Caller
) -> None:
    call.ctx = dataclasses.replace(
        call.ctx, settings=call.ctx.settings.replace(max_file_bytes=1000)
    )
    (notebook_dir / "big.log").write_text("".join(f"event {i}\n" for i in range(500)))
    out = await call("read_file", path="big.log")
    assert out.is_error
    assert "over the 1,000-byte limit" in out.text_content
    assert "start_line" in out.text_content
    part = await call("read_file", path="big.log", start_line=100, end_line=101)
    assert not part.is_error
    assert "event 99" in part.text_content
    assert "event 100" in part.text_content


async def test_read_file_stops_at_the_output_budget_and_says_where_to_continue(
    notebook_dir: Path, call: Caller
) -> None:
    call.ctx = dataclasses.replace(
        call.ctx, settings=call.ctx.settings.replace(tool_output_max_chars=2000)
    )
    (notebook_dir / "long.txt").write_text(
        "".join(f"row {i:04d} " + "x" * 40 + "\n" for i in range(200))
    )
    out = await call("read_file", path="long.txt")
    assert not out.is_error
    text = out.text_content
    last = int(re.search(r"\(lines 1-(\d+) of 200\)", text).group(1))  # type: ignore[union-attr]
    assert last < 200
    assert f"output stops at line {last} " in text
    assert f"continue with start_line={last + 1}]" in text
    assert f"row {last - 1:04d}" in text
    assert f"row {last:04d}" not in text
    assert len(text) <= 2000


async def test_missing_file_and_folder_messages(notebook_dir: Path, call: Caller) -> None:
    missing = await call("read_file", path="nope.txt")
    assert missing.is_error
    assert "does not exist" in missing.text_content
    (notebook_dir / "sub").mkdir()
    folder = await call("read_file", path="sub")
    assert folder.is_error
    assert "is a folder" in folder.text_content


async def test_write_file_creates_parents_and_reports(notebook_dir: Path, call: Caller) -> None:
    out = await call("write_file", path="out/report.md", content="# Report\nok\n")
    assert not out.is_error
    assert "Created out/report.md (2 lines" in out.text_content
    assert (notebook_dir / "out" / "report.md").read_text() == "# Report\nok\n"
    assert out.effects == (FileEffect("out/report.md", "write"),)
    again = await call("write_file", path="out/report.md", content="new")
    assert "Overwrote" in again.text_content


async def test_write_into_the_archive_folder_is_refused(notebook_dir: Path, call: Caller) -> None:
    out = await call("write_file", path=".loom/x.sqlite", content="boom")
    assert out.is_error
    assert "archive folder" in out.text_content
    assert not (notebook_dir / ".loom").exists()


async def test_edit_file_replaces_a_unique_string(notebook_dir: Path, call: Caller) -> None:
    path = notebook_dir / "script.py"
    path.write_text("a = 1\nb = 2\nc = 3\n")
    out = await call("edit_file", path="script.py", old_string="b = 2", new_string="b = 20")
    assert not out.is_error
    assert "at line 2" in out.text_content
    assert path.read_text() == "a = 1\nb = 20\nc = 3\n"
    assert out.effects == (FileEffect("script.py", "edit"),)


async def test_edit_file_with_no_match_or_two_matches_explains(
    notebook_dir: Path, call: Caller
) -> None:
    path = notebook_dir / "dup.py"
    path.write_text("x = 1\nprint(x)\nx = 1\n")
    none = await call("edit_file", path="dup.py", old_string="y = 1", new_string="y = 2")
    assert none.is_error
    assert "not found" in none.text_content
    assert "whitespace" in none.text_content
    two = await call("edit_file", path="dup.py", old_string="x = 1", new_string="x = 2")
    assert two.is_error
    assert "occurs 2 times" in two.text_content
    assert "lines 1, 3" in two.text_content
    assert path.read_text() == "x = 1\nprint(x)\nx = 1\n"
    every = await call(
        "edit_file", path="dup.py", old_string="x = 1", new_string="x = 2", replace_all=True
    )
    assert not every.is_error
    assert path.read_text() == "x = 2\nprint(x)\nx = 2\n"


async def test_list_files_skips_hidden_and_archive_folders(
    notebook_dir: Path, call: Caller
) -> None:
    (notebook_dir / ".loom").mkdir()
    (notebook_dir / ".loom" / "a.sqlite").write_text("")
    (notebook_dir / ".git").mkdir()
    (notebook_dir / "data").mkdir()
    (notebook_dir / "data" / "sales.csv").write_text("a\n" * 600)
    (notebook_dir / "analysis.ipynb").write_text("{}")
    (notebook_dir / ".env").write_text("SECRET=1")
    top = await call("list_files")
    lines = top.text_content.splitlines()
    assert lines[0] == ".:"
    assert "analysis.ipynb  2 B" in lines
    assert "data/" in lines
    assert not any(".loom" in line or ".git" in line or ".env" in line for line in lines)
    everything = await call("list_files", include_hidden=True)
    assert ".loom/" in everything.text_content.splitlines()


async def test_list_files_pattern_searches_recursively(notebook_dir: Path, call: Caller) -> None:
    (notebook_dir / "data" / "raw").mkdir(parents=True)
    (notebook_dir / "data" / "raw" / "a.csv").write_text("1")
    (notebook_dir / "data" / "b.csv").write_text("2")
    (notebook_dir / "c.txt").write_text("3")
    by_name = await call("list_files", pattern="*.csv")
    assert "data/raw/a.csv" in by_name.text_content
    assert "data/b.csv" in by_name.text_content
    assert "c.txt" not in by_name.text_content
    by_path = await call("list_files", pattern="data/*.csv")
    assert "data/b.csv" in by_path.text_content
    limited = await call("list_files", recursive=True, limit=2)
    assert "more entries not shown" in limited.text_content


async def test_search_files_substring_regex_and_skips(notebook_dir: Path, call: Caller) -> None:
    (notebook_dir / "a.py").write_text("import pandas as pd\ndf = pd.read_csv('x')\n")
    (notebook_dir / "b.md").write_text("We use PANDAS here\n")
    (notebook_dir / "c.bin").write_bytes(b"pandas\x00\x01")
    (notebook_dir / ".hidden").mkdir()
    (notebook_dir / ".hidden" / "d.py").write_text("pandas\n")
    out = await call("search_files", pattern="pandas")
    assert "a.py:1: import pandas as pd" in out.text_content
    assert "b.md" not in out.text_content
    assert ".hidden" not in out.text_content
    assert "1 binary, oversized or linked files skipped" in out.text_content
    folded = await call("search_files", pattern="pandas", ignore_case=True, glob="*.md")
    assert "b.md:1: We use PANDAS here" in folded.text_content
    assert "a.py" not in folded.text_content
    regex = await call("search_files", pattern=r"read_\w+\(", regex=True)
    assert "a.py:2:" in regex.text_content
    bad = await call("search_files", pattern="(", regex=True)
    assert bad.is_error
    assert "invalid regular expression" in bad.text_content


async def test_search_files_caps_matches(notebook_dir: Path, call: Caller) -> None:
    (notebook_dir / "many.txt").write_text("hit\n" * 50)
    out = await call("search_files", pattern="hit", limit=5)
    assert out.text_content.count("many.txt:") == 5
    assert "first 5" in out.text_content


async def test_pipes_and_unusable_paths_are_refused(notebook_dir: Path, call: Caller) -> None:
    os.mkfifo(notebook_dir / "pipe")
    (notebook_dir / "loop").symlink_to(notebook_dir / "loop")
    (notebook_dir / "ok.txt").write_text("findme\n")
    pipe = await call("read_file", path="pipe")
    assert pipe.is_error
    assert "not a regular file" in pipe.text_content
    search = await call("search_files", pattern="findme")  # walks past the pipe, never blocks
    assert "ok.txt:1: findme" in search.text_content
    loop = await call("read_file", path="loop")
    assert loop.is_error
    # Python < 3.13 reports the loop while resolving; later versions find no file behind it.
    assert "not a usable path" in loop.text_content or "does not exist" in loop.text_content
    nul = await call("read_file", path="a\x00b")
    assert nul.is_error
    assert "not a usable path" in nul.text_content


async def test_a_catastrophic_regex_is_stopped_without_stalling_the_kernel(
    notebook_dir: Path,
) -> None:
    """``(a+)+$`` over a line of 40 ``a``s and a ``b`` would run for hours inside ``re``
    (holding the GIL); in the child process it is killed and the loop stays free."""
    from loom_jupyter.errors import ToolError
    from loom_jupyter.tools.regex_worker import RegexJob, search_in_child

    target = notebook_dir / "trap.txt"
    target.write_text("a" * 40 + "b\n")
    job = RegexJob("(a+)+$", False, [(str(target), "trap.txt")], 10, 1_000_000, 300)
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    beat = asyncio.ensure_future(ticker())
    try:
        with pytest.raises(ToolError, match=r"ran longer than 2 s and was stopped"):
            await search_in_child(job, seconds=2)
    finally:
        beat.cancel()
    assert ticks > 0  # the loop ran while the child matched


async def test_regex_search_finds_lines_through_the_child(call: Caller, notebook_dir: Path) -> None:
    (notebook_dir / "a.py").write_text("alpha = 1\nbeta = 22\ngamma = 333\n")
    out = await call("search_files", pattern=r"^\w+ = \d{2,}$", regex=True)
    assert not out.is_error
    assert "a.py:2: beta = 22" in out.text_content
    assert "a.py:3: gamma = 333" in out.text_content
    assert "alpha" not in out.text_content
    huge = await call("search_files", pattern="x" * 5000, regex=True)
    assert huge.is_error
    assert "at most 2,000 characters" in huge.text_content


class _CountingReads:
    """Stands in for ``files._open_binary``: counts the bytes read, notes the threads."""

    def __init__(self) -> None:
        self.bytes_read = 0
        self.threads: set[str] = set()

    def open(self, real: Path) -> _CountingReads:
        self.threads.add(threading.current_thread().name)
        self._handle = real.open("rb")
        return self

    def __enter__(self) -> _CountingReads:
        return self

    def __exit__(self, *exc: object) -> None:
        self._handle.close()

    def read(self, size: int = -1) -> bytes:
        data = self._handle.read(size)
        self.bytes_read += len(data)
        return data


@pytest.mark.attack(
    attack=(
        "`read_file` with start_line/end_line on a huge file with no newline (a 381 MiB "
        "one-line file: 29.6 s and 1.2 GB on the engine loop) stalls the kernel"
    ),
    stopped_by=(
        "A line range scans at most 16 MiB in 1 MiB chunks, on a worker thread, keeping only "
        "the start of each long line; the result says the line was cut (its number, its length "
        "so far, the characters shown) and that the scan stopped before the range ended"
    ),
    ref="R10",
)
async def test_a_range_of_a_huge_file_without_newlines_reads_a_bounded_part(
    notebook_dir: Path, call: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    from loom_jupyter.tools import files

    huge = notebook_dir / "one-line.txt"
    with huge.open("wb") as handle:  # 1 MiB of text, then a hole: 64 MiB, sparse
        handle.write(b"x" * 1024 * 1024)
        handle.truncate(64 * 1024 * 1024)
    reads = _CountingReads()
    monkeypatch.setattr(files, "_open_binary", reads.open)

    out = await call("read_file", path="one-line.txt", start_line=1, end_line=1)
    assert not out.is_error, out.text_content
    text = out.text_content
    assert reads.bytes_read <= files.SCAN_BYTES
    assert len(text) <= call.ctx.settings.tool_output_max_chars
    assert "     1\t" + "x" * files.LONG_LINE_CHARS + "\n" in text
    assert "x" * (files.LONG_LINE_CHARS + 1) not in text
    assert (
        f"[line 1 is over {files.SCAN_BYTES:,} bytes long; only its first "
        f"{files.LONG_LINE_CHARS:,} characters are shown]"
    ) in text
    assert f"the scan stopped after reading {files.SCAN_BYTES:,} bytes, inside line 1" in text
    assert reads.threads
    assert "MainThread" not in reads.threads  # a worker's, not the event loop's thread


async def test_long_lines_are_cut_saying_which_how_long_and_how_much_is_shown(
    notebook_dir: Path, call: Caller
) -> None:
    from loom_jupyter.tools.files import LONG_LINE_CHARS

    minified = "é" * 12_000  # 24,000 bytes of UTF-8
    (notebook_dir / "app.min.js").write_text(f"// header\n{minified}\nshort\n")
    note = f"[line 2 is 24,000 bytes long; only its first {LONG_LINE_CHARS:,} characters are shown]"
    for args in ({}, {"start_line": 2, "end_line": 3}):
        out = await call("read_file", path="app.min.js", **args)
        assert not out.is_error, out.text_content
        text = out.text_content
        assert "     2\t" + "é" * LONG_LINE_CHARS + "\n" in text
        assert "     3\tshort" in text
        assert note in text
        assert "line 3 is" not in text


async def test_a_range_past_the_scan_budget_says_where_the_scan_stopped(notebook_dir: Path) -> None:
    from loom_jupyter.errors import ToolError
    from loom_jupyter.tools.files import scan_lines

    numbered = notebook_dir / "rows.txt"
    numbered.write_text("".join(f"row {i}\n" for i in range(1, 2001)))  # 7-9 bytes a row
    real = numbered.resolve()
    whole = scan_lines(real, "rows.txt", 10, 12, keep_chars=10_000, long_line=100)
    assert whole.lines == [(10, "row 10"), (11, "row 11"), (12, "row 12")]
    assert whole.stopped is None
    # Rows 1-9 take 54 bytes, row 10 ends at byte 61: a 64-byte scan stops inside row 11.
    cut = scan_lines(real, "rows.txt", 10, 12, keep_chars=10_000, long_line=100, scan_bytes=64)
    assert cut.lines == [(10, "row 10"), (11, "row")]
    assert cut.scanned == 64
    assert [line.note() for line in cut.cut] == [
        "[line 11 is over 3 bytes long; only its first 3 characters are shown]"
    ]
    assert cut.stopped is not None
    assert "the scan stopped after reading 64 bytes, inside line 11" in cut.stopped

    short = scan_lines(
        real, "rows.txt", 1500, 1501, keep_chars=10_000, long_line=100, scan_bytes=1000
    )
    assert short.lines == []
    assert short.scanned == 1000
    assert short.stopped is not None
    assert "the scan stopped after reading 1,000 bytes" in short.stopped
    assert "run_python" in short.stopped
    partway = scan_lines(
        real, "rows.txt", 5, None, keep_chars=10_000, long_line=100, scan_bytes=100
    )
    assert partway.lines[0] == (5, "row 5")
    assert partway.scanned == 100
    assert partway.stopped is not None
    with pytest.raises(ToolError, match="fewer than 3000 lines"):
        scan_lines(real, "rows.txt", 3000, None, keep_chars=10_000, long_line=100)


async def test_a_range_stops_at_the_output_limit_however_many_lines_it_names(
    notebook_dir: Path, call: Caller
) -> None:
    (notebook_dir / "blank.txt").write_text("\n" * 200_000)
    out = await call("read_file", path="blank.txt", start_line=1, end_line=200_000)
    assert not out.is_error
    text = out.text_content
    assert len(text) <= call.ctx.settings.tool_output_max_chars
    last = int(re.search(r"\(lines 1-(\d+)\)", text).group(1))  # type: ignore[union-attr]
    assert f"continue with start_line={last + 1}]" in text


async def test_a_secret_at_a_line_cut_is_redacted_not_cut_in_half(
    notebook_dir: Path, call: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    from loom_jupyter.tools.files import LONG_LINE_CHARS

    secret = "CanarySecretValue-0123456789abcdefghijklmnopqrstuvwxyz"
    monkeypatch.setenv("SERVICE_TOKEN", secret)
    line = "x" * (LONG_LINE_CHARS - 20) + secret + "y" * 2000
    (notebook_dir / "dump.txt").write_text(f"{line}\nend\n")
    for args in ({}, {"start_line": 1, "end_line": 2}):
        out = await call("read_file", path="dump.txt", **args)
        text = out.text_content
        assert "line 1 is" in text
        assert secret[:12] not in text
        assert "[REDACTED]" in text
