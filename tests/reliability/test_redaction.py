"""The redaction rules themselves (the secrets suite checks them end to end in a kernel)."""

from __future__ import annotations

import pytest

from loom_jupyter.tools.base import ToolOutput
from loom_jupyter.tools.output import REDACTED, redact, redact_output, secret_values


@pytest.mark.parametrize(
    "name",
    ["ANTHROPIC_API_KEY", "MY_TOKEN", "DB_PASSWORD", "AWS_SECRET_ACCESS_KEY", "github_token",
     "SSH_KEY", "DB_PASSWD", "GOOGLE_CREDENTIALS"],
)  # fmt: skip
def test_secret_looking_names_are_redacted(name: str) -> None:
    values = secret_values({name: "hunter2-value", "HOME": "/root", "PATH": "/usr/bin:/bin"})
    assert values == ("hunter2-value",)
    assert redact("it is hunter2-value.", values) == f"it is {REDACTED}."


def test_short_values_and_ordinary_names_stay() -> None:
    assert secret_values({"MY_TOKEN": "1", "KEYTIMEOUT": "5", "EDITOR": "vim-is-long"}) == ()


@pytest.mark.parametrize(
    "key",
    [
        "sk-ant-api03-AbCdEf0123456789_-xyz",
        "sk-proj-" + "a" * 40,
        "AKIAABCDEFGHIJKLMNOP",
        "ghp_" + "b" * 36,
        "xoxb-1234567890-abcdef",
    ],
)
def test_key_shaped_strings_are_redacted_without_any_environment(key: str) -> None:
    assert redact(f"pasted {key} here", ()) == f"pasted {REDACTED} here"


def test_longest_secret_first_and_surrogates_scrubbed() -> None:
    values = secret_values({"A_TOKEN": "abcdef", "B_TOKEN": "abcdefgh"})
    assert redact("abcdefgh abcdef", values) == f"{REDACTED} {REDACTED}"
    assert redact("half \ud800 pair", ()) == "half \ufffd pair"


def test_tool_output_text_and_summary_are_redacted() -> None:
    output = ToolOutput.text("key sk-ant-api03-0123456789abc", summary="sk-ant-api03-0123456789abc")
    clean = redact_output(output, ())
    assert REDACTED in clean.content[0].text  # type: ignore[union-attr]
    assert clean.summary == REDACTED
