"""The reliability cases as data: what goes wrong, where it is tried, what the person is told.

Each :class:`Case` is run by the test named in ``test`` (a function in this
package) and that test asserts ``expect`` verbatim in what the person or the
model saw, plus an intact archive. ``report.py`` turns these tables into
``docs/reliability.md``, so the page says exactly what the suite checks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Surface = Literal["IPython", "kernel"]
Group = Literal["file jail", "tool output", "tools", "prompts", "archive", "fronts", "secrets"]


@dataclass(frozen=True)
class Case:
    """One bad input and the clear message it must end in."""

    id: str
    group: Group
    given: str
    expect: str
    surface: Surface
    test: str
    tool: str | None = None
    tool_input: dict[str, Any] = field(default_factory=dict)
    is_error: bool = True


def _jail(
    id: str, tool: str, tool_input: dict[str, Any], given: str, expect: str, *, error: bool = True
) -> Case:
    return Case(
        id, "file jail", given, expect, "IPython", "test_tool_case", tool, tool_input, error
    )


def _tool(
    id: str,
    group: Group,
    tool: str,
    tool_input: dict[str, Any],
    given: str,
    expect: str,
    *,
    error: bool = True,
) -> Case:
    return Case(id, group, given, expect, "IPython", "test_tool_case", tool, tool_input, error)


OUTSIDE = "is outside the notebook folder"
LINKED = "symlink that points outside"
ARCHIVE = "inside the conversation archive folder"

TOOL_CASES: tuple[Case, ...] = (
    _jail("read-dotdot", "read_file", {"path": "../outside/secret.txt"}, "`../` path", OUTSIDE),
    _jail("read-absolute", "read_file", {"path": "/etc/passwd"}, "absolute path", OUTSIDE),
    _jail("read-symlink", "read_file", {"path": "link.txt"}, "symlink to a file outside", LINKED),
    _jail(
        "read-symlinked-dir",
        "read_file",
        {"path": "linkdir/secret.txt"},
        "file under a symlinked folder outside",
        LINKED,
    ),
    _jail("read-nul-path", "read_file", {"path": "a\x00b"}, "NUL byte in a path", "not a usable"),
    _jail("read-binary", "read_file", {"path": "blob.bin"}, "binary file", "binary file"),
    _jail("list-dotdot", "list_files", {"path": ".."}, "`..`", OUTSIDE),
    _jail("list-symlinked-dir", "list_files", {"path": "linkdir"}, "symlinked folder", LINKED),
    _jail(
        "search-dotdot",
        "search_files",
        {"pattern": "CANARY", "path": "../outside"},
        "`../` folder",
        OUTSIDE,
    ),
    _jail(
        "search-skips-links",
        "search_files",
        {"pattern": "CANARY"},
        "search over a folder holding a link outside",
        "linked files skipped",
        error=False,
    ),
    _jail(
        "write-dotdot",
        "write_file",
        {"path": "../outside/new.txt", "content": "x"},
        "`../` path",
        OUTSIDE,
    ),
    _jail(
        "write-symlink",
        "write_file",
        {"path": "link.txt", "content": "overwritten"},
        "symlink to a file outside",
        LINKED,
    ),
    _jail(
        "edit-dotdot",
        "edit_file",
        {"path": "../outside/secret.txt", "old_string": "CANARY", "new_string": "x"},
        "`../` path",
        OUTSIDE,
    ),
    _jail(
        "edit-symlink",
        "edit_file",
        {"path": "link.txt", "old_string": "CANARY", "new_string": "x"},
        "symlink to a file outside",
        LINKED,
    ),
    _jail(
        "write-archive",
        "write_file",
        {"path": ".loom/nb.ipynb.sqlite", "content": "x"},
        "overwrite the conversation archive",
        ARCHIVE,
    ),
    _jail(
        "write-archive-via-link",
        "write_file",
        {"path": "archive-link/nb.ipynb.sqlite", "content": "x"},
        "overwrite the archive through a symlink to `.loom`",
        ARCHIVE,
    ),
    _jail(
        "edit-archive-folder",
        "edit_file",
        {"path": ".loom/.gitignore", "old_string": "*", "new_string": ""},
        "edit a file in `.loom`",
        ARCHIVE,
    ),
    _jail(
        "read-archive",
        "read_file",
        {"path": ".loom/nb.ipynb.sqlite"},
        "read the archive",
        "binary file",
    ),
    _tool(
        "python-50mb",
        "tool output",
        "run_python",
        {"code": "print('x' * 50_000_000)"},
        "run_python prints 50 MB",
        "characters cut",
        error=False,
    ),
    _tool(
        "shell-50mb",
        "tool output",
        "shell",
        {"command": "head -c 50000000 /dev/zero | tr '\\0' y"},
        "shell prints 50 MB",
        "characters cut",
        error=False,
    ),
    _tool(
        "shell-binary",
        "tool output",
        "shell",
        {"command": "head -c 65536 /dev/urandom; printf '\\000\\377'"},
        "shell emits random bytes and NULs",
        "[exit code 0]",
        error=False,
    ),
    _tool(
        "python-binary",
        "tool output",
        "run_python",
        {"code": "import sys; sys.stdout.write(bytes(range(256)).decode('latin-1'))"},
        "run_python writes every byte value",
        "[stdout]",
        error=False,
    ),
    _tool(
        "python-surrogate",
        "tool output",
        "run_python",
        {"code": "print('half a pair: \\ud800')"},
        "run_python prints a lone surrogate (not UTF-8)",
        "half a pair: \ufffd",
        error=False,
    ),
    _tool(
        "python-subprocess-output",
        "tool output",
        "run_python",
        {"code": "import os\nos.system('echo written by a subprocess')"},
        "run_python output written to the process's descriptors (os.system)",
        "written by a subprocess",
        error=False,
    ),
    _tool(
        "python-nested-cowork",
        "tools",
        "run_python",
        {"code": "%cowork nested hello"},
        "run_python code that calls `%cowork` inside the turn",
        "is running; wait for it or stop it",
        error=False,
    ),
    _tool(
        "python-unload-ext",
        "tools",
        "run_python",
        {"code": "%unload_ext loom_jupyter"},
        "run_python code that runs `%unload_ext loom_jupyter` inside the turn",
        "cannot be unloaded while a %cowork turn is running",
    ),
    _tool("unknown-tool", "tools", "no_such_tool", {"x": 1}, "an unknown tool", "Unknown tool"),
    _tool(
        "input-wrong-type",
        "tools",
        "read_file",
        {"path": 5},
        "malformed input (wrong type)",
        "path must be a string",
    ),
    _tool(
        "input-missing-key",
        "tools",
        "write_file",
        {"path": "a.txt"},
        "malformed input (missing key)",
        "missing required key 'content'",
    ),
    _tool(
        "tool-raises",
        "tools",
        "run_python",
        {"code": "1 / 0"},
        "code that raises",
        "ZeroDivisionError",
    ),
    _tool(
        "tool-exits",
        "tools",
        "run_python",
        {"code": "raise SystemExit(3)"},
        "code that raises SystemExit",
        "SystemExit: 3",
    ),
    _tool(
        "corrupt-notebook",
        "tools",
        "read_notebook",
        {},
        "read_notebook on a notebook file that is not JSON",
        "could not be read as a notebook",
    ),
)


def _case(id: str, group: Group, given: str, expect: str, surface: Surface, test: str) -> Case:
    return Case(id, group, given, expect, surface, test)


OTHER_CASES: tuple[Case, ...] = (
    _case(
        "prompt-empty",
        "prompts",
        "`%cowork` alone",
        "Talk to your notebook coworker",
        "IPython",
        "test_empty_prompts",
    ),
    _case(
        "prompt-blank-cell",
        "prompts",
        "`%%cowork` with only whitespace",
        "Talk to your notebook coworker",
        "IPython",
        "test_empty_prompts",
    ),
    _case(
        "prompt-5mb",
        "prompts",
        "a 5 MB `%%cowork` cell",
        "Your message alone is too long",
        "IPython",
        "test_huge_prompts",
    ),
    _case(
        "prompt-5mb-line",
        "prompts",
        "a 5 MB `%cowork` line",
        "Your message alone is too long",
        "IPython",
        "test_huge_prompts",
    ),
    _case(
        "prompt-control-chars",
        "prompts",
        "NUL, escape codes and a lone surrogate in a prompt",
        "(fake Claude) You said",
        "IPython",
        "test_control_characters",
    ),
    _case(
        "model-surrogate",
        "prompts",
        "a model answer (and a search) holding a lone surrogate",
        "model says half \ufffd pair",
        "IPython",
        "test_model_output_surrogate",
    ),
    _case(
        "shell-never-ends",
        "tools",
        "a shell command that never ends (`sleep 600`, shell timeout 1 s)",
        "[timed out after 1 s",
        "IPython",
        "test_shell_that_never_ends",
    ),
    _case(
        "python-never-ends",
        "tools",
        "run_python `while True: pass`, then a kernel interrupt",
        "Interrupted",
        "kernel",
        "test_interrupt_endless_python",
    ),
    _case(
        "prompt-api-key",
        "secrets",
        "an API key pasted into a prompt",
        "replaced by [REDACTED]",
        "IPython",
        "test_pasted_key",
    ),
    _case(
        "export-bad-path",
        "fronts",
        "`%cowork export` into a folder that does not exist",
        "Cannot write the export to",
        "IPython",
        "test_bad_subcommand_arguments",
    ),
    _case(
        "resume-unknown",
        "fronts",
        "`%cowork resume 99` with one session",
        "No session '99'",
        "IPython",
        "test_bad_subcommand_arguments",
    ),
    _case(
        "notebook-odd-name",
        "archive",
        "a notebook named with spaces, unicode and quotes",
        "new session",
        "IPython",
        "test_odd_notebook_name",
    ),
    _case(
        "archive-locked",
        "archive",
        "archive locked by another process during a turn",
        "is locked by another process",
        "IPython",
        "test_locked_archive",
    ),
    _case(
        "archive-locked-at-load",
        "archive",
        "archive locked while `%load_ext` opens it",
        "is locked by another process",
        "IPython",
        "test_locked_at_load",
    ),
    _case(
        "archive-immutable",
        "archive",
        "archive file made unwritable",
        "cannot be written",
        "IPython",
        "test_unwritable_archive",
    ),
    _case(
        "archive-not-sqlite",
        "archive",
        "archive file that is not SQLite",
        "is not a readable SQLite database",
        "IPython",
        "test_corrupt_archive",
    ),
    _case(
        "archive-truncated",
        "archive",
        "archive cut in half",
        "is not a readable SQLite database",
        "IPython",
        "test_corrupt_archive",
    ),
    _case(
        "archive-newer",
        "archive",
        "archive from a newer schema version",
        "written by a newer loom_jupyter",
        "IPython",
        "test_newer_archive",
    ),
    _case(
        "loom-deleted",
        "archive",
        "the `.loom` folder deleted mid-session",
        "was deleted while this kernel was using it",
        "IPython",
        "test_loom_folder_deleted",
    ),
    _case(
        "before-load",
        "fronts",
        "`%cowork` in a fresh kernel before `%load_ext`",
        "Line magic function `%cowork` not found",
        "kernel",
        "test_fresh_kernel_in_read_only_folder",
    ),
    _case(
        "after-unload",
        "fronts",
        "`%cowork` after `%unload_ext`",
        "loom is not loaded: run %load_ext loom_jupyter",
        "IPython",
        "test_cowork_after_unload",
    ),
    _case(
        "load-twice", "fronts", "`%load_ext` twice", "already loaded", "IPython", "test_load_twice"
    ),
    _case(
        "unload-reload",
        "fronts",
        "`%unload_ext` then `%load_ext`",
        "resumed “remember the word OKAPI”",
        "IPython",
        "test_unload_and_reload",
    ),
    _case(
        "read-only-folder",
        "archive",
        "a notebook in a read-only folder",
        "cannot create the archive folder",
        "kernel",
        "test_fresh_kernel_in_read_only_folder",
    ),
    _case(
        "interrupt-approval",
        "fronts",
        "kernel interrupt while an approval waits",
        "Interrupted",
        "kernel",
        "test_interrupt_during_approval",
    ),
    _case(
        "two-kernels",
        "fronts",
        "two kernels on one notebook",
        "another live kernel",
        "kernel",
        "test_two_kernels",
    ),
    _case(
        "renamed-notebook",
        "fronts",
        "the notebook renamed while its kernel runs",
        "Still the same conversation.",
        "kernel",
        "test_renamed_notebook",
    ),
    _case(
        "html-js-output",
        "fronts",
        "model output with `<script>` and `onerror` (sent as Loom's markdown type, which the "
        "labextension renders sanitized, never as trusted markup; cards escaped)",
        "application/vnd.loom.markdown+json",
        "kernel",
        "test_html_in_model_output",
    ),
)

BAD_INPUTS: tuple[Case, ...] = TOOL_CASES + OTHER_CASES


@dataclass(frozen=True)
class SecretCheck:
    """One place the canary secrets must not reach."""

    where: str
    how: str


SECRET_CANARIES: dict[str, str] = {
    "ANTHROPIC_API_KEY": "sk-ant-canary-0123456789abcdefghij",
    "MY_TOKEN": "canary-token-5a1b2c3d4e",
    "DB_PASSWORD": "canary-password-9z8y7x",
    "AWS_SECRET_ACCESS_KEY": "canary-aws-secret-QWERTY123456",
    "SERVICE_API_KEY": "canary-service-key-777888999",
}
"""The secrets kernel's environment (names like *KEY*, *TOKEN*, *SECRET*, *PASSWORD*)."""

PASTED_KEY = "sk-ant-api03-pastedCanaryKey0123456789"
"""A key the person pastes into a prompt (not in the environment)."""

SECRET_CHECKS: tuple[SecretCheck, ...] = (
    SecretCheck("archive file", "bytes of `.sqlite`, `-wal` and `-shm` after the session"),
    SecretCheck("cell outputs", "every iopub message of every cell but the echo of its input"),
    SecretCheck("`%cowork export`", "the Markdown journal the magic writes"),
    SecretCheck("CLI export", "`loom-jupyter export` Markdown and JSON"),
    SecretCheck("kernel log", "the kernel process's stdout and stderr"),
    SecretCheck("model requests", "every request body the fake Messages API received"),
)

SECRET_TOOLS: tuple[str, ...] = (
    "run_python `print(dict(os.environ))`",
    "run_python evaluating `os.environ['DB_PASSWORD']`",
    "shell `env`",
    "run_python `os.system('env')` and `!env` (written to the process's file descriptors)",
    "read_file of a `.env` file holding the values",
    "inspect_variables of a variable holding a token",
    "a prompt with a pasted `sk-ant-` key",
    "a cell where the person assigns that key (the notebook-activity note of the next turn)",
)
