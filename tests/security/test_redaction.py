"""Secrets redacted before any cap, and in more shapes (security review F9).

Real tool runs through the registry (a real shell, a real file) and the plain functions;
every canary below is made up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from loom_jupyter.messages import ToolUseBlock
from loom_jupyter.settings import Settings
from loom_jupyter.tools.base import ToolContext
from loom_jupyter.tools.local_kernel import LocalKernel
from loom_jupyter.tools.output import REDACTED, HeadTail, redact, secret_values
from loom_jupyter.tools.registry import default_registry

if TYPE_CHECKING:
    from pathlib import Path

PEM = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "QyNTUxOQAAACDcanaryPEMbodycanaryPEMbodycanaryPEMbody0000000000000000000\n"
    "-----END OPENSSH PRIVATE KEY-----"
)
SHAPES = {
    "google api key": "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
    "google oauth": "ya29.a0AfH6SMBcanaryCanaryCanary0123456789",
    "stripe secret": "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
    "stripe restricted": "rk_test_51Hcanarycanarycanary00",
    "stripe webhook": "whsec_canarycanarycanarycanary0123",
    "slack webhook": "https://hooks.slack.com/services/T00000000/B00000000/XXXXcanaryXXXXcanary",
    "hugging face": "hf_canaryCANARYcanaryCANARYcanary0123",
    "gitlab": "glpat-canaryCanary0123456789",
}


@pytest.mark.attack(
    attack=(
        "A tool prints a key in a shape the filter did not know (Google, Stripe, Slack "
        "webhook, Hugging Face, GitLab) or a PEM private key"
    ),
    stopped_by="Those shapes and PEM blocks are redacted wherever they appear",
    ref="F9",
)
@pytest.mark.parametrize("kind", sorted(SHAPES))
def test_known_token_shapes_are_redacted(kind: str) -> None:
    secret = SHAPES[kind]
    assert redact(f"value: {secret} end", ()) == f"value: {REDACTED} end"


def test_a_pem_private_key_is_redacted_whole() -> None:
    cleaned = redact(f"id_ed25519:\n{PEM}\nafter", ())
    assert "canaryPEMbody" not in cleaned
    assert cleaned == f"id_ed25519:\n{REDACTED}\nafter"
    assert "canaryPEMbody" not in redact(PEM[:150], ())  # a key cut short still goes


@pytest.mark.attack(
    attack="A database URL printed by code (`postgres://user:password@host`) shows its password",
    stopped_by="The password of a credential in a URL is redacted; the rest stays readable",
    ref="F9",
)
def test_a_credential_in_a_url_loses_its_password() -> None:
    text = "DATABASE_URL=postgres://analyst:s3cr3t-Canary@db.internal:5432/sales"
    assert redact(text, ()) == f"DATABASE_URL=postgres://analyst:{REDACTED}@db.internal:5432/sales"
    assert redact("see https://example.com/a@b and mailto:x@y.z", ()) == (
        "see https://example.com/a@b and mailto:x@y.z"
    )


@pytest.mark.attack(
    attack="Secrets in variables named `DATABASE_URL`, `DB_PWD` or `*CREDENTIAL*` are printed",
    stopped_by="Their values are redacted like `*KEY*` / `*TOKEN*` ones (not `PWD`, the folder)",
    ref="F9",
)
def test_secret_names_cover_urls_and_pwd_but_not_the_folder() -> None:
    env = {
        "DATABASE_URL": "postgres://u:p@h/db-canary",
        "DB_PWD": "canary-pwd-value",
        "GCP_CREDENTIALS_JSON": "canary-credential-json",
        "PWD": "/home/someone/project",
        "OLDPWD": "/home/someone",
        "HOME": "/home/someone",
    }
    found = secret_values(env)
    assert set(found) == {
        "postgres://u:p@h/db-canary",
        "canary-pwd-value",
        "canary-credential-json",
    }


@pytest.mark.attack(
    attack="Output longer than the cap is cut before redaction, so half a secret survives",
    stopped_by="Redaction runs before the cap (the registry) and over a margin around the cut "
    "(the shell's head and tail)",
    ref="F9",
)
async def test_a_secret_at_the_cap_is_redacted_not_cut_in_half(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "CanarySecretValue-0123456789abcdefghijklmnopqrstuvwxyz"
    monkeypatch.setenv("SERVICE_TOKEN", secret)
    cap = 2_000
    head = 2 * (cap - 200) // 3  # where cap_text cuts its head
    (tmp_path / "data.txt").write_text("x" * (head - 20) + secret + "y" * 10_000)
    ctx = ToolContext(
        notebook_dir=tmp_path,
        settings=Settings(tool_output_max_chars=cap),
        kernel=LocalKernel(),
    )
    call = ToolUseBlock("t1", "read_file", {"path": "data.txt"})

    output = await default_registry().run(call, ctx)

    text = "".join(getattr(b, "text", "") for b in output.content)
    assert "characters cut" in text
    assert secret[:12] not in text
    assert secret[-12:] not in text


def test_the_shell_buffer_redacts_across_its_cut() -> None:
    secret = "sk-ant-api03-" + "C" * 60
    buffer = HeadTail(200, clean=lambda text: redact(text, ()))
    buffer.add("a" * 90)
    buffer.add(secret[:20])  # the key arrives in pieces, across the head's end
    buffer.add(secret[20:] + "b" * 5_000)
    text = buffer.text()
    assert "characters cut" in text
    assert "CCCCCCCC" not in text
    assert "sk-ant-api03" not in text
