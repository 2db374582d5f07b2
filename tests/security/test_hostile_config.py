"""A hostile ``loom.yaml`` or instruction file costs a bounded read, then a clear refusal.

A cloned folder's ``loom.yaml`` is read before the person decides to trust it (security
review R7): a 385-byte YAML alias bomb once froze the kernel for about 100 s and took
5.7 GB, and 600 nested brackets made ``%load_ext`` fail with a bare ``RecursionError``.
Here each such file is refused by :func:`loom_jupyter.settings.read_config_file` /
:func:`~loom_jupyter.settings.parse_config` with one :class:`LoomConfigError` that names
the file, and an oversized instruction file is skipped by its ``stat``.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
import threading
from typing import TYPE_CHECKING, Any

import pytest

from loom_jupyter import settings as settings_module
from loom_jupyter.errors import LoomConfigError
from loom_jupyter.folders import CONFIG_MAX_BYTES, INSTRUCTION_MAX_BYTES
from loom_jupyter.session.instructions import ProjectInstructions
from loom_jupyter.settings import Settings, parse_config, read_config_file

if TYPE_CHECKING:
    from pathlib import Path

EIGHT_GB = 8 * 1024**3
ALIASES = "YAML anchors and aliases (&name / *name) are not allowed in loom.yaml"


def alias_bomb(levels: int = 9, items: int = 9) -> bytes:
    """``model:`` holding ``levels`` anchored lists, each of ``items`` aliases of the one
    before: expanded, the last is ``items ** levels`` (387 million) strings."""
    lists = ["&a0 [" + ",".join(["lol"] * items) + "]"]
    for level in range(1, levels):
        lists.append(f"&a{level} [" + ",".join([f"*a{level - 1}"] * items) + "]")
    return ("model: [" + ", ".join(lists) + "]\n").encode()


def nested(depth: int) -> bytes:
    return b"model: " + b"[" * depth + b"]" * depth + b"\n"


def refusal(data: bytes, where: str = "/project/loom.yaml") -> str:
    with pytest.raises(LoomConfigError) as caught:
        parse_config(data, where)
    return str(caught.value)


# -- aliases and nesting ---------------------------------------------------------------------


def test_the_alias_bomb_is_refused_under_a_one_gigabyte_address_space() -> None:
    bomb = alias_bomb()
    assert len(bomb) < 400  # the review's bomb: 385 bytes, 9 levels
    script = textwrap.dedent(
        """
        import resource, sys
        cap = 1024 ** 3
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        from loom_jupyter.errors import LoomConfigError
        from loom_jupyter.settings import parse_config
        try:
            parse_config(sys.stdin.buffer.read(), "/cloned/loom.yaml")
        except LoomConfigError as error:
            print(error)
        else:
            print("ACCEPTED")
        """
    )
    # the timeout only guards the test run: a refusal takes a fraction of a second
    done = subprocess.run(
        [sys.executable, "-c", script], input=bomb, capture_output=True, timeout=240, check=False
    )
    out = done.stdout.decode()
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert out.startswith("/cloned/loom.yaml: ")
    assert ALIASES in out
    assert "(line 1)" in out


def test_the_alias_bomb_in_a_folder_is_refused_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / "loom.yaml").write_bytes(alias_bomb())
    with pytest.raises(LoomConfigError, match=r"loom\.yaml: YAML anchors and aliases") as caught:
        Settings.load(tmp_path, env={}, user_config=tmp_path / "none.yaml")
    assert str(tmp_path / "loom.yaml") in str(caught.value)


@pytest.mark.parametrize(
    "text",
    [
        "model: &name claude-sonnet-5-5\n",  # an anchor alone
        "base: &b {approval: auto}\nmcp_servers: {a: {<<: *b, command: x}}\n",  # a merge
        "model: *nowhere\n",  # an alias to nothing
        "--- &doc\nmodel: x\n",  # an anchored document
    ],
)
def test_anchors_and_aliases_are_refused_plainly(text: str) -> None:
    message = refusal(text.encode())
    assert message.startswith("/project/loom.yaml: ")
    assert ALIASES in message


def test_six_hundred_nested_brackets_are_refused_naming_the_file() -> None:
    message = refusal(nested(600), "/cloned/loom.yaml")
    assert message.startswith("/cloned/loom.yaml: ")
    assert "nest more than 32 levels deep" in message


@pytest.mark.parametrize(
    "data",
    [
        nested(100_000 // 2),  # 100 KB of brackets: refused by size first
        b"model:\n" + b"".join(b"  " * i + b"- \n" for i in range(1, 200)),  # block lists
        b"model: " + b"{a: " * 500 + b"1" + b"}" * 500 + b"\n",  # flow mappings
    ],
)
def test_deep_nesting_of_any_kind_is_a_config_error(data: bytes) -> None:
    assert refusal(data).startswith("/project/loom.yaml: ")


def test_nesting_within_the_limit_reads() -> None:
    assert "model must be a string, got a list" in refusal(nested(31))  # read, then typed
    servers = parse_config(
        b"mcp_servers:\n  db:\n    command: run\n    args: [a, b]\n    env: {TOKEN: x}\n", "x"
    )["mcp_servers"]
    assert servers[0].args == ("a", "b")


@pytest.mark.parametrize("error", [RecursionError, MemoryError, ZeroDivisionError])
def test_any_failure_while_checking_is_one_config_error_naming_the_file(
    monkeypatch: pytest.MonkeyPatch, error: type[BaseException]
) -> None:
    def explode(*_args: Any) -> Any:
        raise error

    monkeypatch.setattr(settings_module, "_coerce", explode)
    message = refusal(b"model: haiku\n", "/cloned/loom.yaml")
    assert message.startswith("/cloned/loom.yaml: ")


# -- values of the wrong type ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("model: [a, b]\n", "model must be a string, got a list"),
        ("model: {a: b}\n", "model must be a string, got a mapping"),
        ("model:\n", "model must be a string, got nothing (null)"),
        ("model: 2026-01-01\n", "model must be a string, got a date"),
        ("model: !!binary aGVsbG8=\n", "model must be a string, got binary data"),
        ("approval: [auto]\n", "approval must be one of ask, auto, read-only; got a list"),
        ("max_iterations: [1]\n", "max_iterations must be a int, got a list"),
        ("max_iterations: true\n", "max_iterations must be a int, got a boolean"),
        ("shell_timeout_seconds: .nan\n", "shell_timeout_seconds must be positive"),
        ("shell_timeout_seconds: .inf\n", "shell_timeout_seconds must be positive"),
        ("web_search: [yes]\n", "web_search must be a bool, got a list"),
        ("thinking: {a: 1}\n", "thinking must be one of off, adaptive; got a mapping"),
        ("effort: [high]\n", "effort must be one of low, medium, high, xhigh, max; got a list"),
        ("mcp_servers: [a]\n", "mcp_servers must be a mapping of NAME: options, got a list"),
        ("mcp_servers: {a: [x]}\n", "expected a mapping (command/args/env or url/headers)"),
        ("mcp_servers: {a: {command: x, approval: [a]}}\n", "approval must be one of"),
        ("mcp_servers: {a: {command: x, timeout: [1]}}\n", "timeout must be a number"),
        ("mcp_servers: {a: {command: x, timeout: .nan}}\n", "timeout must be positive"),
        ("mcp_servers: {a: {command: x, args: [[1]]}}\n", "args must be a list of strings"),
        ("- a list\n", "expected a mapping of setting: value at the top level, got a list"),
    ],
)
def test_a_wrong_type_is_refused_by_its_type_name(text: str, expected: str) -> None:
    message = refusal(text.encode())
    assert message.startswith("/project/loom.yaml: ")
    assert expected in message


def test_a_huge_value_never_reaches_a_message() -> None:
    """A value is named by its type, a scalar quoted at most 60 characters."""
    huge_list = list(range(1_000_000))
    for key in ("model", "approval", "max_iterations", "web_search", "thinking", "effort"):
        with pytest.raises(LoomConfigError) as caught:
            settings_module._coerce(key, huge_list, "loom.yaml")
        assert len(str(caught.value)) < 200, str(caught.value)[:300]
    long_list = b"model: [" + b"1," * 30_000 + b"1]\n"  # 60 KB, under the size limit
    assert len(refusal(long_list)) < 200
    long_word = b"approval: " + b"a" * 60_000 + b"\n"
    message = refusal(long_word)
    assert len(message) < 200
    assert "'" + "a" * 60 + "…'" in message
    for key in (b"x" * 60_000, b"mcp_servers: {" + b"y" * 60_000):
        text = key + (b": 1\n" if key.startswith(b"x") else b": {command: c}}\n")
        assert len(refusal(text)) < 700


def test_a_quoted_value_shows_its_control_characters() -> None:
    message = refusal(b'approval: "\\e]52;c;aGk=\\a"\n')
    assert "\x1b" not in message
    assert "\x07" not in message
    assert "approval must be one of" in message


def test_an_environment_value_is_refused_as_safely(tmp_path: Path) -> None:
    env = {"LOOM_MAX_ITERATIONS": "9" * 1_000_000}
    with pytest.raises(LoomConfigError) as caught:
        Settings.load(tmp_path, env=env, user_config=tmp_path / "none.yaml")
    assert str(caught.value).startswith("LOOM_MAX_ITERATIONS: max_iterations must be a int")
    assert len(str(caught.value)) < 200
    bomb = alias_bomb().decode().replace("model: ", "servers: ", 1)
    with pytest.raises(LoomConfigError) as caught:
        Settings.load(tmp_path, env={"LOOM_MCP_SERVERS": bomb}, user_config=tmp_path / "x")
    assert "YAML anchors and aliases (&name / *name) are not allowed in LOOM_MCP_SERVERS" in str(
        caught.value
    )


def test_good_values_still_read() -> None:
    values = parse_config(
        b"model: opus\nmax_iterations: '7'\nshell_timeout_seconds: 3\nweb_search: off\n"
        b"thinking: on\neffort: default\narchive_dir:\napproval: read-only\n",
        "x",
    )
    assert values == {
        "model": "opus",
        "max_iterations": 7,
        "shell_timeout_seconds": 3.0,
        "web_search": False,
        "thinking": "adaptive",
        "effort": None,
        "archive_dir": None,
        "approval": "read-only",
    }


# -- files: size, kind -----------------------------------------------------------------------


def test_a_sparse_eight_gigabyte_loom_yaml_is_refused_by_its_size(tmp_path: Path) -> None:
    path = tmp_path / "loom.yaml"
    subprocess.run(["truncate", "-s", str(EIGHT_GB), str(path)], check=True)
    opened: list[Any] = []
    real_open = os.open

    def watch(file: Any, *args: Any, **kwargs: Any) -> int:
        opened.append(file)
        return real_open(file, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "open", watch)
        with pytest.raises(LoomConfigError) as caught:
            read_config_file(path)
    assert not opened  # refused by stat, before the file was opened
    message = str(caught.value)
    assert message.startswith(f"{path}: 8,589,934,592 bytes")
    assert "64 KiB (65,536 bytes)" in message


def test_a_loom_yaml_just_over_the_limit_is_refused_and_at_it_read(tmp_path: Path) -> None:
    path = tmp_path / "loom.yaml"
    line = b"# " + b"x" * 97 + b"\n"  # 100 bytes a line
    body = b"model: haiku\n" + line * ((CONFIG_MAX_BYTES - 13) // 100)
    path.write_bytes(body + b"#" * (CONFIG_MAX_BYTES - len(body) - 1) + b"\n")
    assert path.stat().st_size == CONFIG_MAX_BYTES
    assert read_config_file(path) == {"model": "haiku"}
    with path.open("ab") as handle:
        handle.write(b"\n")
    with pytest.raises(LoomConfigError, match=r"65,537 bytes, larger than the 64 KiB"):
        read_config_file(path)
    with pytest.raises(LoomConfigError, match=r"65,537 bytes"):
        parse_config(path.read_bytes(), str(path))


def test_a_fifo_loom_yaml_does_not_block(tmp_path: Path) -> None:
    path = tmp_path / "loom.yaml"
    os.mkfifo(path)
    result: list[str] = []

    def read() -> None:
        try:
            read_config_file(path)
        except LoomConfigError as error:
            result.append(str(error))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=60)
    if reader.is_alive():  # unblock it before failing: open a writer
        with path.open("wb"):
            pass
        pytest.fail("reading a FIFO loom.yaml blocked")
    assert result == [f"{path}: not a regular file, not read"]


def test_a_loom_yaml_pointing_at_a_device_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "loom.yaml"
    path.symlink_to("/dev/zero")
    with pytest.raises(LoomConfigError, match="not a regular file"):
        read_config_file(path)


def test_the_persons_own_loom_yaml_is_read_the_same_way(tmp_path: Path) -> None:
    user = tmp_path / "config" / "loom.yaml"
    user.parent.mkdir()
    user.write_bytes(nested(600))
    with pytest.raises(LoomConfigError) as caught:
        Settings.load(tmp_path, env={}, user_config=user)
    assert str(caught.value).startswith(f"{user}: ")


# -- instruction files -----------------------------------------------------------------------


def _instructions(folder: Path) -> Any:
    (folder / ".git").mkdir(exist_ok=True)
    return ProjectInstructions(folder / "nb.ipynb", max_chars=20_000).current()


@pytest.mark.attack(
    attack="A sparse 8 GB instruction file costs 22 s of hashing on every trust check",
    stopped_by="Instruction files over 256 KiB are skipped by their size, read from the open "
    "file before any byte",
    ref="R7",
)
def test_a_sparse_eight_gigabyte_agents_md_is_skipped_with_its_size(tmp_path: Path) -> None:
    subprocess.run(["truncate", "-s", str(EIGHT_GB), str(tmp_path / "AGENTS.md")], check=True)
    (tmp_path / "CLAUDE.md").write_text("Use pandas.\n")
    loaded = _instructions(tmp_path)
    agents, claude = loaded.files
    assert (agents.name, agents.status) == ("AGENTS.md", "skipped")
    assert agents.reason == "larger than 256 KiB (8,589,934,592 bytes): not read"
    assert claude.status == "included"
    assert "Use pandas." in loaded.text
    assert any("8,589,934,592 bytes" in notice for notice in loaded.notices())


def test_instruction_files_at_and_over_the_limit(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_bytes(b"a" * INSTRUCTION_MAX_BYTES)
    (tmp_path / "CLAUDE.md").write_bytes(b"b" * (INSTRUCTION_MAX_BYTES + 1))
    agents, claude = _instructions(tmp_path).files
    assert agents.status == "cut"  # read, then cut to instructions_max_chars as before
    assert claude.status == "skipped"
    assert claude.reason == "larger than 256 KiB (262,145 bytes): not read"


def test_a_fifo_instruction_file_does_not_block(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "AGENTS.md")
    result: list[Any] = []
    reader = threading.Thread(target=lambda: result.append(_instructions(tmp_path)), daemon=True)
    reader.start()
    reader.join(timeout=60)
    if reader.is_alive():
        with (tmp_path / "AGENTS.md").open("wb"):
            pass
        pytest.fail("reading a FIFO AGENTS.md blocked")
    (agents,) = result[0].files
    assert (agents.status, agents.reason) == ("skipped", "not a regular file")


@pytest.mark.parametrize("data", [alias_bomb(), nested(600)], ids=["alias bomb", "deep nesting"])
def test_the_cli_works_on_a_hostile_folder(
    tmp_path: Path, data: bytes, capsys: pytest.CaptureFixture[str]
) -> None:
    """`loom-jupyter sessions`, `trust` and `trust --revoke` answer; the report names the file."""
    from loom_jupyter.cli import main

    (tmp_path / ".git").mkdir()
    (tmp_path / "loom.yaml").write_bytes(data)
    notebook = tmp_path / "nb.ipynb"
    notebook.write_text("{}")
    asyncio.run(_make_archive(notebook))

    codes = [main(["sessions", str(notebook)]), main(["trust", str(tmp_path)])]
    codes.append(main(["trust", str(tmp_path), "--revoke"]))

    out = capsys.readouterr()
    assert codes == [0, 0, 0]
    assert "loom.yaml cannot be used" in out.out
    assert "Traceback" not in out.out + out.err
    assert "RecursionError" not in out.out + out.err


async def _make_archive(notebook: Path) -> None:
    from loom_jupyter.archive import Archive, archive_path_for

    archive = await Archive.open(archive_path_for(notebook))
    await archive.close()
