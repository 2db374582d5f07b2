"""Regular-expression search in a child process, so a pathological pattern cannot stall
the kernel.

Python's ``re`` holds the interpreter lock for a whole match and has no timeout: a
pattern such as ``(a+)+$`` over a line of thirty ``a``s runs for minutes and freezes
every thread of the kernel (the person's cells, the sidebar's comm). ``search_files``
with ``regex=true`` therefore matches here, in a child Python, which the tool kills
after :data:`REGEX_SECONDS`. Literal searches stay in-process (escaped patterns match
in linear time).

The child loads Loom from where it is installed, never from the notebook's folder
(DESIGN §12): it runs isolated (``python -I``: no current folder or script folder on
``sys.path``, no user site-packages, ``PYTHON*`` variables ignored) in the folder that
holds the kernel's own ``loom_jupyter``, which is added to the end of its ``sys.path``
(a ``PYTHONPATH``-only install is found too). The job carries absolute paths only.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

from loom_jupyter.errors import ToolError
from loom_jupyter.tools.paths import read_searchable

__all__ = ["REGEX_SECONDS", "RegexJob", "child_command", "match_files", "search_in_child"]

REGEX_SECONDS = 10.0
"""A regex search that takes longer is stopped and reported."""


@dataclass(frozen=True)
class RegexJob:
    """What the child searches: ``files`` as (absolute path, shown name) pairs (the child
    runs in another folder)."""

    pattern: str
    ignore_case: bool
    files: list[tuple[str, str]]
    limit: int
    max_bytes: int
    max_line: int


def match_files(job: RegexJob) -> tuple[list[str], int]:
    """``path:line: text`` for every matching line (at most ``limit + 1``), and files skipped."""
    matcher = re.compile(job.pattern, re.IGNORECASE if job.ignore_case else 0)
    hits: list[str] = []
    skipped = 0
    for path, shown in job.files:
        text = read_searchable(Path(path), job.max_bytes)
        if text is None:
            skipped += 1
            continue
        for number, line in enumerate(text.splitlines(), 1):
            if matcher.search(line):
                hits.append(f"{shown}:{number}: {line.strip()[: job.max_line]}")
                if len(hits) > job.limit:
                    return hits, skipped
    return hits, skipped


_INSTALLED = str(Path(__file__).absolute().parents[2])
"""The folder holding the running ``loom_jupyter`` package."""

_BOOT = (
    "import sys; sys.path.append(sys.argv[1]); "
    "from loom_jupyter.tools.regex_worker import _main; _main()"
)


def child_command() -> list[str]:
    """The worker's command line: isolated, Loom from where this one is installed."""
    return [sys.executable, "-I", "-c", _BOOT, _INSTALLED]


async def search_in_child(job: RegexJob, seconds: float = REGEX_SECONDS) -> tuple[list[str], int]:
    """:func:`match_files` in a child process, killed after ``seconds``."""
    payload = json.dumps(asdict(job)).encode()
    child = await asyncio.create_subprocess_exec(
        *child_command(),
        cwd=_INSTALLED,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(child.communicate(payload), seconds)
    except asyncio.TimeoutError:  # not the builtin before Python 3.11
        child.kill()
        await child.wait()
        raise ToolError(
            f"the regular expression {job.pattern[:80]!r} ran longer than {seconds:g} s and was "
            "stopped (nested repeats such as (a+)+ can take forever): simplify it, or search "
            "for a plain substring with regex=false."
        ) from None
    except BaseException:
        child.kill()
        await child.wait()
        raise
    if child.returncode != 0:
        raise ToolError(f"the regex search failed: {err.decode(errors='replace')[-300:]}")
    found = json.loads(out)
    return list(found["hits"]), int(found["skipped"])


def _main() -> None:
    raw = json.loads(sys.stdin.read())
    job = RegexJob(**{**raw, "files": [tuple(pair) for pair in raw["files"]]})
    hits, skipped = match_files(job)
    json.dump({"hits": hits, "skipped": skipped}, sys.stdout)


if __name__ == "__main__":
    _main()
