"""The model's own answer, redacted while it streams (security review R9).

Tool results, prompts and error texts go through :func:`~loom_jupyter.tools.output.redact`
whole. An answer arrives in pieces, and a key the model writes can be split over two or
more of them. A :class:`StreamRedactor` holds back only what could still be the start of
a secret: a tail that begins one of the person's secret values (at most the longest value's
length minus one characters), or a key shape or URL credential that is still growing. It
gives out the rest already redacted. Joined, the pieces it gives are exactly
``redact(joined input, secrets)`` (while nothing grows past :data:`MAX_HELD`). Each piece
costs only the text held back, never the whole answer so far.

The agent loop (``engine/agent.py``) runs one per model call for the answer and one for the
thinking, and :func:`redact_blocks` cleans the finished message's text the same way. So the
cell, the sidebar, the panel, the ``partial`` row, the archived turn and what exports read
all carry the same redacted text.

It runs ``redact``'s passes in order, each as its own stage: the exact secret values, then
the key shapes, then URL credentials, then lone surrogates. A stage gives out text only up
to a point where no match of its pattern can straddle, now or after more text arrives. It
remembers the character before that point for the patterns' ``\\b``. So every stage, and
the chain of them, gives what one pass over the whole text would.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING, TypeAlias

from loom_jupyter.messages import (
    RedactedThinkingBlock,
    ServerBlock,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
)
from loom_jupyter.tools.output import (
    _KEY_SHAPES,
    _LONE_SURROGATES,
    _URL_CREDENTIAL,
    REDACTED,
    redact,
    secret_values,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from loom_jupyter.settings import Settings

__all__ = ["MAX_HELD", "AnswerBlock", "StreamRedactor", "answer_secrets", "redact_blocks"]

AnswerBlock: TypeAlias = (
    "TextBlock | ToolUseBlock | ThinkingBlock | RedactedThinkingBlock | ServerBlock"
)
"""A block of a finished assistant message (``MessageDone.content``)."""

MAX_HELD = 8192
"""The most characters a pattern stage holds for a shape that keeps growing (a PEM block
without its END line, a run of letters that could still be a URL's scheme). Past it the
held text is given out as if the block had ended (redacted). A longer PEM key would then
show its tail."""


def _grow(literal: str, tail: str = "") -> str:
    """A pattern for any non-empty prefix of ``literal``, or all of it followed by ``tail``."""
    body = f"(?:{tail})?" if tail else ""
    for char in reversed(literal[1:]):
        body = f"(?:{re.escape(char)}{body})?"
    return re.escape(literal[0]) + body


def _any(*patterns: str) -> str:
    return "(?:" + "|".join(patterns) + ")"


# What each alternative of output._KEY_SHAPES looks like before it is complete, or while a
# complete match could still grow. Keep in step with _KEY_SHAPES: a new shape needs its
# growing form here too (tests/security/test_answer_redaction.py checks every prefix of
# every shape's example).
_SHAPE_GROWING = re.compile(
    _any(
        _grow("sk-", "[A-Za-z0-9_-]*"),  # Anthropic (sk-ant-...) and OpenAI (sk-, sk-proj-)
        r"\b" + _any(*(_grow(p, "[0-9A-Z]{0,16}") for p in ("AKIA", "ASIA"))),
        r"\b" + _any(*(_grow(p + "_", "[A-Za-z0-9_]*") for p in ("ghp", "gho", "ghs", "ghu"))),
        r"\b" + _grow("github_pat_", "[A-Za-z0-9_]*"),
        r"\b" + _grow("xox", "[abpors](?:-[A-Za-z0-9-]*)?"),
        _grow("https://hooks.slack.com/services/", "[A-Za-z0-9/_-]*"),
        r"\b" + _grow("AIza", "[0-9A-Za-z_-]{0,35}"),
        r"\b" + _grow("ya29.", "[0-9A-Za-z_-]*"),
        r"\b" + _any(*(_grow(p, "[0-9A-Za-z]*") for p in ("sk_live_", "sk_test_"))),
        r"\b" + _any(*(_grow(p, "[0-9A-Za-z]*") for p in ("rk_live_", "rk_test_"))),
        r"\b" + _grow("whsec_", "[0-9A-Za-z]*"),
        r"\b" + _grow("hf_", "[A-Za-z0-9]*"),
        r"\b" + _grow("glpat-", "[A-Za-z0-9_-]*"),
        _grow("-----BEGIN", "[A-Z ]*-{0,4}"),  # a complete header is a (growing) match itself
    )
    + r"\Z"
)
# output._URL_CREDENTIAL (scheme://user:password@) before its "@".
_URL_GROWING = re.compile(
    r"(?i:\b[a-z][a-z0-9+.-]*(?::(?:/(?:/(?:[^\s/:@]+(?::[^\s/@]*)?)?)?)?)?)\Z"
)


def answer_secrets(settings: Settings) -> tuple[str, ...]:
    """The values redacted from tool results (the registry's): the person's secrets from
    :func:`~loom_jupyter.tools.output.secret_values` and the MCP servers' ``env`` and
    ``headers`` values, longest first."""
    mcp = (s for server in settings.mcp_servers for s in server.secrets())
    return tuple(sorted({*secret_values(), *mcp}, key=len, reverse=True))


class _PatternStage:
    """One regex pass of ``redact`` over a stream: its matches are replaced; the tail where
    a match may still start or grow is held."""

    def __init__(
        self,
        pattern: re.Pattern[str],
        growing: re.Pattern[str],
        replacement: Callable[[re.Match[str]], str],
    ) -> None:
        self._pattern, self._growing, self._replacement = pattern, growing, replacement
        self._held = ""
        self._before = ""  # the last character given out (``\b`` looks at it)

    @property
    def held(self) -> int:
        return len(self._held)

    def feed(self, text: str, *, end: bool) -> str:
        """The redacted text that is safe to show now (all of it when ``end``)."""
        if not text and not (end and self._held):
            if end:
                self._before = ""
            return ""
        whole = self._before + self._held + text
        start = len(self._before)
        found = list(self._pattern.finditer(whole, start))
        cut = len(whole) if end else self._cut(whole, start, found)
        forced = len(whole) - cut > MAX_HELD
        if forced:
            cut = len(whole)
        pieces: list[str] = []
        at = start
        for match in found:
            if match.start() >= cut:
                break
            pieces += (whole[at : match.start()], self._replacement(match))
            at = match.end()
        pieces.append(whole[at:cut])
        self._held = whole[cut:]
        if end:
            self._before = ""  # the next block starts afresh
        elif cut > start:
            self._before = whole[cut - 1]
        return "".join(pieces)

    def _cut(self, whole: str, start: int, found: list[re.Match[str]]) -> int:
        """Where to stop: before a match may still start or grow, never inside a match."""
        cut = len(whole)
        growing = self._growing.search(whole, start)
        if growing is not None:
            cut = growing.start()
        for match in reversed(found):  # matches never overlap: one pass from the end
            if match.start() < cut and (match.end() > cut or match.end() == len(whole)):
                cut = match.start()
        return cut


def _secret_cut(text: str, secrets: Sequence[str]) -> int:
    """Where ``text`` may be cut: before a tail that may begin a secret value, never inside
    a value."""
    cut = len(text)
    for secret in secrets:
        at = text.find(secret[0], max(0, len(text) - len(secret)))
        while at != -1 and at < cut:
            if secret.startswith(text[at:]):
                cut = at
                break
            at = text.find(secret[0], at + 1)
    moved = True
    while moved:  # a cut placed by one value must not split another (values may overlap)
        moved = False
        for secret in secrets:
            at = text.find(secret, max(0, cut - len(secret) + 1))
            if at != -1 and at < cut:
                cut, moved = at, True
    return cut


def _url_password(match: re.Match[str]) -> str:
    return match.group(1) + REDACTED + match.group(3)


class StreamRedactor:
    """Redacts one block of streamed text: :meth:`feed` each piece, :meth:`flush` at the
    block's end. Joined, what they return is ``redact(joined pieces, secrets)``; no piece
    holds any part of a secret that ``redact`` would remove.

    ``secrets`` are exact values, applied in the order given (``redact``'s order: longest
    first, as :func:`answer_secrets` and ``secret_values`` give them)."""

    def __init__(self, secrets: Iterable[str]) -> None:
        self._secrets = tuple(s for s in secrets if s)
        self._held = ""
        self._shapes = _PatternStage(_KEY_SHAPES, _SHAPE_GROWING, lambda _: REDACTED)
        self._urls = _PatternStage(_URL_CREDENTIAL, _URL_GROWING, _url_password)

    @property
    def held(self) -> int:
        """How many characters are held back now."""
        return len(self._held) + self._shapes.held + self._urls.held

    def feed(self, text: str) -> str:
        """The next piece of the stream; returns what may be shown now (maybe ``""``)."""
        return self._run(text, end=False)

    def flush(self) -> str:
        """The block ended: everything still held, redacted."""
        return self._run("", end=True)

    def _run(self, text: str, *, end: bool) -> str:
        text = self._held + text
        cut = len(text) if end else _secret_cut(text, self._secrets)
        released, self._held = text[:cut], text[cut:]
        for secret in self._secrets:
            if secret in released:
                released = released.replace(secret, REDACTED)
        shaped = self._urls.feed(self._shapes.feed(released, end=end), end=end)
        return _LONE_SURROGATES.sub("\ufffd", shaped)


def redact_blocks(blocks: Sequence[AnswerBlock], secrets: Sequence[str]) -> tuple[AnswerBlock, ...]:
    """``blocks`` with their text blocks redacted, other blocks unchanged (thinking keeps its
    signed text: it goes back to the API as it came).

    Text blocks with only server-tool blocks between them streamed as one text (those
    stream nothing), so they are redacted as one: each alone when that gives the same text,
    else as the stream did, a secret across two blocks removed whole."""
    out = list(blocks)
    run: list[int] = []
    for index, block in enumerate([*blocks, None]):
        if isinstance(block, TextBlock):
            run.append(index)
        elif not isinstance(block, ServerBlock):
            _redact_run(out, run, secrets)
            run = []
    return tuple(out)


def _redact_run(out: list[AnswerBlock], run: list[int], secrets: Sequence[str]) -> None:
    blocks = [block for block in (out[i] for i in run) if isinstance(block, TextBlock)]
    texts = [block.text for block in blocks]
    cleaned = [redact(text, secrets) for text in texts]
    if len(texts) > 1 and "".join(cleaned) != redact("".join(texts), secrets):
        redactor = StreamRedactor(secrets)
        cleaned = [redactor.feed(text) for text in texts]
        cleaned[-1] += redactor.flush()
    for index, block, clean in zip(run, blocks, cleaned, strict=True):
        if clean != block.text:
            out[index] = replace(block, text=clean)
