"""Shaping tool text for the model: secret redaction, then head+tail caps.

Redaction is best effort (a string filter: an encoded, reversed or split secret passes),
and it runs before any cap, so a cap never leaves half a secret behind. Replaced by
``[REDACTED]``: the values of environment variables whose names look secret
(``*KEY*``, ``*TOKEN*``, ``*SECRET*``, ``*PASSWORD*``, ``*PWD*``, ``*CREDENTIAL*``,
``DATABASE_URL``...; values of 6+ characters); anything shaped like a well-known key
(Anthropic, OpenAI, AWS, GitHub, Slack, Google, Stripe, Hugging Face, GitLab, a Slack
webhook), wherever it came from; PEM private keys; the password of a credential in a
URL (``postgres://user:[REDACTED]@host``); and the API key ``%cowork login`` stored.
Lone surrogates, which UTF-8 (and so the archive) cannot hold, become U+FFFD on the way.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from loom_jupyter.apikey import known_key
from loom_jupyter.messages import ImageBlock, TextBlock
from loom_jupyter.tools.base import ToolOutput

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

__all__ = [
    "REDACTED",
    "HeadTail",
    "cap_output",
    "cap_text",
    "redact",
    "redact_output",
    "redact_secrets",
    "secret_values",
]

REDACTED = "[REDACTED]"

# Environment variables whose values must never reach the model or the archive.
_SECRET_NAME = re.compile(
    r"KEY|SECRET|TOKEN|PASSWORD|PASSWD|PWD|CREDENTIAL|DATABASE_URL|_DSN$|AUTH", re.IGNORECASE
)
_NOT_SECRET_NAMES = frozenset({"PWD", "OLDPWD"})  # the shell's folders, not passwords
_MIN_SECRET_LEN = 6  # shorter values are too likely to be ordinary words
# Key formats worth catching even when no environment variable holds them (a pasted key).
# A new shape needs its growing form in stream_redact._SHAPE_GROWING too (answers, R9).
_KEY_SHAPES = re.compile(
    r"sk-ant-[A-Za-z0-9_-]{8,}"  # Anthropic
    r"|sk-(?:proj-)?[A-Za-z0-9_-]{32,}"  # OpenAI
    r"|\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"  # AWS access key ids
    r"|\b(?:ghp|gho|ghs|ghu|github_pat)_[A-Za-z0-9_]{20,}"  # GitHub tokens
    r"|\bxox[abpors]-[A-Za-z0-9-]{10,}"  # Slack tokens
    r"|https://hooks\.slack\.com/services/[A-Za-z0-9/_-]{20,}"  # Slack webhooks
    r"|\bAIza[0-9A-Za-z_-]{35}"  # Google API keys
    r"|\bya29\.[0-9A-Za-z_-]{20,}"  # Google OAuth access tokens
    r"|\b(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}"  # Stripe secret and restricted keys
    r"|\bwhsec_[0-9A-Za-z]{20,}"  # Stripe webhook secrets
    r"|\bhf_[A-Za-z0-9]{30,}"  # Hugging Face tokens
    r"|\bglpat-[A-Za-z0-9_-]{20,}"  # GitLab personal access tokens
    r"|-----BEGIN[A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END[A-Z ]*PRIVATE KEY-----|\Z)"  # PEM
)
# user:password@ in a URL: the password goes, the rest stays readable.
_URL_CREDENTIAL = re.compile(r"\b([a-z][a-z0-9+.-]*://[^\s/:@]+:)([^\s/@]+)(@)", re.IGNORECASE)
_LONE_SURROGATES = re.compile("[\ud800-\udfff]")  # not encodable as UTF-8: SQLite would refuse


def cap_text(text: str, max_chars: int, *, hint: str = "") -> str:
    """``text`` if short enough, else its head and tail with a line saying what was cut."""
    if len(text) <= max_chars:
        return text
    keep = max(max_chars - 200, 2)
    head, tail = text[: keep * 2 // 3], text[len(text) - keep // 3 :]
    cut = len(text) - len(head) - len(tail)
    note = f"\n[... {cut:,} of {len(text):,} characters cut{'; ' + hint if hint else ''} ...]\n"
    return head + note + tail


def cap_output(output: ToolOutput, max_chars: int) -> ToolOutput:
    """Cap every text block of ``output`` to ``max_chars``."""
    if all(len(b.text) <= max_chars for b in output.content if isinstance(b, TextBlock)):
        return output
    content = tuple(_cap_block(b, max_chars) for b in output.content)
    return ToolOutput(
        content, is_error=output.is_error, summary=output.summary, effects=output.effects
    )


def _cap_block(block: TextBlock | ImageBlock, max_chars: int) -> TextBlock | ImageBlock:
    return TextBlock(cap_text(block.text, max_chars)) if isinstance(block, TextBlock) else block


def secret_values(env: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """Values of secret-looking environment variables (``ANTHROPIC_API_KEY`` and kin);
    for this process's environment (no ``env``) also the key ``%cowork login`` stored,
    as this process last read it (:func:`loom_jupyter.apikey.known_key`)."""
    source = os.environ if env is None else env
    found = {
        v
        for k, v in source.items()
        if _SECRET_NAME.search(k) and k not in _NOT_SECRET_NAMES and len(v) >= _MIN_SECRET_LEN
    }
    stored = known_key() if env is None else None
    if stored:
        found.add(stored)
    return tuple(sorted(found, key=len, reverse=True))


def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every secret value and every key-shaped string replaced by ``[REDACTED]``."""
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, REDACTED)
    text = _URL_CREDENTIAL.sub(rf"\1{REDACTED}\3", _KEY_SHAPES.sub(REDACTED, text))
    return _LONE_SURROGATES.sub("\ufffd", text)


def redact_secrets(text: str) -> str:
    """``text`` without the secrets of this process's environment or anything key-shaped."""
    return redact(text, secret_values())


def redact_output(output: ToolOutput, secrets: Iterable[str]) -> ToolOutput:
    """``output`` with secrets removed from its text blocks and summary."""
    values = tuple(secrets)
    content = tuple(
        TextBlock(redact(b.text, values)) if isinstance(b, TextBlock) else b for b in output.content
    )
    summary = redact(output.summary, values)
    return ToolOutput(content, is_error=output.is_error, summary=summary, effects=output.effects)


class HeadTail:
    """Collects a stream of text keeping only its head and tail (bounded memory).

    ``clean`` (a redactor) runs over the kept text before it is cut to size, with
    :data:`MARGIN` characters to spare on each side, so a secret at a cut is removed
    whole rather than cut in half."""

    MARGIN = 512

    def __init__(self, max_chars: int, clean: Callable[[str], str] | None = None) -> None:
        self.max_chars = max_chars
        self._clean = clean or (lambda text: text)
        self._keep = max_chars // 2 + self.MARGIN
        self._head: list[str] = []
        self._head_len = 0
        self._tail = ""
        self.total = 0

    def add(self, chunk: str) -> None:
        """Append ``chunk``."""
        self.total += len(chunk)
        room = self._keep - self._head_len
        if room > 0:
            self._head.append(chunk[:room])
            self._head_len += min(room, len(chunk))
            chunk = chunk[room:]
        if chunk:
            self._tail = (self._tail + chunk)[-self._keep :]

    def text(self) -> str:
        """The collected text, cleaned, with a line saying how much was cut if any."""
        head = "".join(self._head)
        if self.total <= self.max_chars:
            return self._clean((head + self._tail)[: self.total])
        half = self.max_chars // 2
        cut = self.total - 2 * half
        kept_head = self._clean(head)[:half]
        kept_tail = self._clean(self._tail)[-half:] if half else ""
        return f"{kept_head}\n[... {cut:,} of {self.total:,} characters cut ...]\n{kept_tail}"
