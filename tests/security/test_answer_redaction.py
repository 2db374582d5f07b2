"""The model's own answer is redacted like tool results, also when a key arrives split over
stream pieces (security review R9).

The streaming redactor on its own, then a real session (ScriptedModel, a real archive and
LocalKernel) whose model reads the key in base64 and writes it back decoded, in pieces of
three characters. A delegation's sub-agent does the same. Last, a real kernel runs a
`%cowork` cell under nbclient against the fake Messages API. Every key below is made up.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import nbformat
import pytest
from nbclient import NotebookClient
from orchestrator.conftest import Router, plan

from loom_jupyter.archive import archive_path_for
from loom_jupyter.engine.events import TextDelta, ThinkingDelta, TurnDone
from loom_jupyter.host.runtime.history import history_item
from loom_jupyter.host.wire.protocol import HistoryItem
from loom_jupyter.messages import TextBlock, ThinkingBlock, block_to_api
from loom_jupyter.models.base import TextChunk, ThinkingChunk
from loom_jupyter.models.scripted import ScriptedModel, reply, text, tool_call
from loom_jupyter.orchestrator import attach
from loom_jupyter.session.conversation import CoworkSession
from loom_jupyter.session.export import export_session
from loom_jupyter.settings import Settings
from loom_jupyter.testing import FakeAnthropic
from loom_jupyter.tools.output import _KEY_SHAPES, REDACTED, redact, redact_secrets, secret_values
from loom_jupyter.tools.registry import default_registry
from loom_jupyter.tools.stream_redact import MAX_HELD, StreamRedactor, redact_blocks

from .test_redaction import PEM, SHAPES

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Sequence
    from pathlib import Path

    from loom_jupyter.archive import Archive
    from loom_jupyter.engine.events import Event
    from loom_jupyter.models.base import ModelEvent, ModelRequest
    from loom_jupyter.tools.local_kernel import LocalKernel

KEY = "sk-ant-api03-ANSWERCANARY-" + "Qx7z" * 8  # the person's key (ANTHROPIC_API_KEY)
PLAIN = "correct-horse-battery-staple"  # a secret with no known shape (DB_PASSWORD)
SENTENCE = "Decoded, your key is {} - keep it safe."
PRINT_BASE64 = (
    "import base64, os\nprint(base64.b64encode(os.environ['ANTHROPIC_API_KEY'].encode()).decode())"
)
KEY_EXAMPLES = {
    **SHAPES,
    "anthropic": KEY,
    "openai": "sk-proj-" + "OpenAICanary0123456789abcdefghijklmn",
    "aws": "AKIAIOSFODNN7CANARY0",
    "github": "ghp_" + "GitHubCanary0123456789abcdef",
    "github fine-grained": "github_pat_" + "GitHubCanary0123456789_abc",
    "slack": "xoxb-1234567890-CanaryCanary",
    "pem": PEM,
}


@pytest.fixture
def secrets(monkeypatch: pytest.MonkeyPatch) -> tuple[str, ...]:
    """The person's secrets: the key in the environment and a shapeless password."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("DB_PASSWORD", PLAIN)
    found = secret_values()
    assert KEY in found
    assert PLAIN in found
    return found


def stream(secrets: Sequence[str], pieces: Sequence[str]) -> list[str]:
    """What a front is given for ``pieces``: each feed's result, then the flush."""
    redactor = StreamRedactor(secrets)
    return [*(redactor.feed(piece) for piece in pieces), redactor.flush()]


def fragments(secret: str, size: int = 6) -> set[str]:
    return {secret[i : i + size] for i in range(len(secret) - size + 1)}


def assert_no_part_of(secret: str, shown: str) -> None:
    leaked = sorted(f for f in fragments(secret) if f in shown)
    assert not leaked, f"pieces of the secret reached a front: {leaked[:3]}"


# -- the streaming redactor ----------------------------------------------------------------


@pytest.mark.parametrize("secret", [KEY, PLAIN], ids=["shaped key", "shapeless value"])
def test_a_secret_split_in_two_anywhere_never_shows(secrets: tuple[str, ...], secret: str) -> None:
    said = SENTENCE.format(secret)
    expected = redact_secrets(said)
    assert expected == SENTENCE.format(REDACTED)
    for cut in range(len(said) + 1):
        pieces = stream(secrets, [said[:cut], said[cut:]])
        assert_no_part_of(secret, "".join(pieces))
        assert "".join(pieces) == expected


@pytest.mark.parametrize("secret", [KEY, PLAIN], ids=["shaped key", "shapeless value"])
def test_a_secret_split_in_three_anywhere_never_shows(
    secrets: tuple[str, ...], secret: str
) -> None:
    said = SENTENCE.format(secret)
    start = said.index(secret)
    expected = redact_secrets(said)
    for first in range(start, start + len(secret) + 1):
        for second in range(first, start + len(secret) + 1):
            pieces = stream(secrets, [said[:first], said[first:second], said[second:]])
            assert_no_part_of(secret, "".join(pieces))
            assert "".join(pieces) == expected


def test_one_character_at_a_time_gives_what_redact_gives(secrets: tuple[str, ...]) -> None:
    said = (
        f"Key {KEY}, password {PLAIN}; the URL postgres://analyst:s3cr3t-Canary@db:5432/x, "
        f"AWS {KEY_EXAMPLES['aws']} and\n{PEM}\nthen more text with sk- and AKIA but no key."
    )
    pieces = stream(secrets, list(said))
    assert "".join(pieces) == redact_secrets(said)
    assert_no_part_of(KEY, "".join(pieces))
    assert_no_part_of(PLAIN, "".join(pieces))
    assert "s3cr3t" not in "".join(pieces)


def test_text_without_secrets_passes_with_little_holdback(secrets: tuple[str, ...]) -> None:
    prose = (
        "The frame `sales` has 1,204 rows and 6 columns. Revenue peaks in March (see the "
        "plot above): north_region leads, then south. I saved it to out/summary.csv.\n\n"
        "| region | total |\n|---|---|\n| north | 10.5 |\n"
    ) * 3
    redactor = StreamRedactor(secrets)
    shown, held = "", []
    for word in re.findall(r"\S+\s*", prose):
        shown += redactor.feed(word)
        held.append(redactor.held)
        assert redactor.held == 0  # a word that ends in a space is given out whole
    assert shown + redactor.flush() == prose
    one_by_one = StreamRedactor(secrets)
    most = 0
    for char in prose:
        one_by_one.feed(char)
        most = max(most, one_by_one.held)
    assert most <= max(len(word) for word in prose.split())  # at most the word being written


@pytest.mark.parametrize("kind", sorted(KEY_EXAMPLES))
def test_no_prefix_of_a_key_shape_is_given_out(kind: str) -> None:
    example = KEY_EXAMPLES[kind]
    assert redact(f"value: {example} end", ()) == f"value: {REDACTED} end"
    for size in range(1, len(example) + 1):
        redactor = StreamRedactor(())
        assert redactor.feed(f"value: {example[:size]}") == "value: ", (kind, size)
    assert redactor.feed(" end") + redactor.flush() == f"{REDACTED} end"


def test_every_key_shape_has_an_example_here() -> None:
    """A new shape in output._KEY_SHAPES needs its growing form in stream_redact's
    ``_SHAPE_GROWING`` and an example in KEY_EXAMPLES."""
    assert _top_level_alternatives(_KEY_SHAPES.pattern) == 13
    assert {k for k in KEY_EXAMPLES if _KEY_SHAPES.fullmatch(KEY_EXAMPLES[k])} == set(KEY_EXAMPLES)


def _top_level_alternatives(pattern: str) -> int:
    depth, count, index, in_class = 0, 1, 0, False
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            index += 1
        elif in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            index += pattern[index + 1 : index + 2] == "]"
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "|" and depth == 0:
            count += 1
        index += 1
    return count


def test_only_the_password_of_a_url_credential_is_held_and_removed() -> None:
    url = "postgres://analyst:s3cr3t-Canary@db.internal:5432/sales"
    for size in range(1, len(url) + 1):
        redactor = StreamRedactor(())
        shown = redactor.feed(f"connect to {url[:size]}")
        assert "s3cr3t" not in shown
        assert shown + redactor.flush() == redact(f"connect to {url[:size]}", ())
    assert "".join(stream((), list(url))) == f"postgres://analyst:{REDACTED}@db.internal:5432/sales"


def test_a_shape_that_never_ends_is_given_out_redacted_past_the_limit() -> None:
    redactor = StreamRedactor(())
    shown = [redactor.feed("-----BEGIN RSA PRIVATE KEY-----\n")]
    for _ in range(MAX_HELD // 64 + 2):
        shown.append(redactor.feed("A" * 63 + "\n"))
        assert redactor.held <= MAX_HELD + 64
    assert REDACTED in "".join(shown)  # given out, as if the block had ended
    assert "-----BEGIN" not in "".join(shown)


def test_a_secret_across_two_text_blocks_is_removed_whole(secrets: tuple[str, ...]) -> None:
    said = SENTENCE.format(KEY)
    cut = said.index(KEY) + 9
    blocks = redact_blocks((TextBlock(said[:cut]), TextBlock(said[cut:])), secrets)
    texts = [b.text for b in blocks if isinstance(b, TextBlock)]
    assert "".join(texts) == SENTENCE.format(REDACTED)
    assert_no_part_of(KEY, "\n".join(texts))
    thinking = ThinkingBlock(f"the key is {KEY}", "signature")
    kept = redact_blocks((thinking, TextBlock(f"ok {PLAIN}")), secrets)
    assert kept == (thinking, TextBlock(f"ok {REDACTED}"))  # signed thinking goes back as it came


# -- a session: every front's events, the partial row, the archived turn, exports ------------


@dataclass
class InPieces:
    """A ScriptedModel whose text and thinking arrive ``size`` characters at a time."""

    model: ScriptedModel
    size: int = 3
    pieces: list[str] = field(default_factory=list)  # the text pieces streamed

    @property
    def name(self) -> str:
        return self.model.name

    async def count_tokens(self, request: ModelRequest) -> int:
        return await self.model.count_tokens(request)

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        async for event in self.model.stream(request):
            if isinstance(event, TextChunk | ThinkingChunk) and len(event.text) > self.size:
                for at in range(0, len(event.text), self.size):
                    piece = event.text[at : at + self.size]
                    self.pieces.append(piece)
                    yield TextChunk(piece) if isinstance(event, TextChunk) else ThinkingChunk(piece)
            else:
                yield event


async def open_session(
    archive: Archive, notebook: Path, kernel: LocalKernel, model: InPieces
) -> CoworkSession:
    return await CoworkSession.open(
        archive,
        notebook_path=notebook,
        settings=Settings(approval="auto", partial_save_seconds=0.0),
        model=model,
        kernel=kernel,
        tools=default_registry(),
    )


def archive_bytes(notebook: Path) -> bytes:
    path = archive_path_for(notebook)
    return b"".join(p.read_bytes() for p in path.parent.glob(path.name + "*"))


@pytest.mark.attack(
    attack=(
        "`run_python` prints the key in base64 (not a secret's shape), then the model writes it "
        "back decoded, split over stream pieces: it is shown and archived in plain text"
    ),
    stopped_by=(
        "The model's answer is redacted as it streams, holding back only what could begin a "
        "secret: no event, partial row, archived turn or export holds the key"
    ),
    ref="R9",
)
async def test_the_key_the_model_writes_back_reaches_no_front_archive_or_export(
    secrets: tuple[str, ...], archive: Archive, notebook: Path, kernel: LocalKernel
) -> None:
    answer = "The printed value is base64. " + SENTENCE.format(KEY)
    model = InPieces(ScriptedModel([tool_call("run_python", {"code": PRINT_BASE64}), answer]))
    session = await open_session(archive, notebook, kernel, model)
    events: list[Event] = []
    partial_rows: list[str] = []
    async for event in session.send("what does the variable hold?"):
        events.append(event)
        if isinstance(event, TextDelta):
            assert session.session_id is not None
            turns = await archive.get_turns(session.session_id)
            partial_rows += [t.content for t in turns if t.status == "partial"]
    sid = session.session_id
    assert sid is not None

    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert sum(1 for piece in model.pieces if piece in KEY) >= len(KEY) // 3 - 1  # in pieces
    assert "".join(deltas) == "The printed value is base64. " + SENTENCE.format(REDACTED)
    for delta in deltas:
        assert KEY not in delta
    assert_no_part_of(KEY, "".join(deltas))
    assert partial_rows
    assert_no_part_of(KEY, "\n".join(partial_rows))
    done = next(e for e in events if isinstance(e, TurnDone))
    assert_no_part_of(KEY, done.text)

    turns = await archive.get_turns(sid)
    tool_turn = next(t for t in turns if t.role == "tool")
    assert "ANSWERCANARY" not in tool_turn.content  # base64 passes, as F9 expects
    assistant = [t for t in turns if t.role == "assistant"]
    assert assistant[-1].status == "complete"
    assert assistant[-1].content == "The printed value is base64. " + SENTENCE.format(REDACTED)
    for turn in assistant:
        assert_no_part_of(KEY, turn.content + json.dumps([block_to_api(b) for b in turn.blocks]))
    info = await archive.get_session(sid)
    for fmt in ("md", "json"):
        exported = export_session(info, turns, fmt)
        assert REDACTED in exported
        assert_no_part_of(KEY, exported)
    await session.close()
    assert KEY.encode() not in archive_bytes(notebook)
    cli = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "loom_jupyter.cli", "export", str(notebook), "--format", "json"),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(cli.communicate(), 120)
    assert cli.returncode == 0, err.decode()
    assert REDACTED in out.decode()
    assert_no_part_of(KEY, out.decode())


async def test_thinking_is_shown_redacted_and_kept_signed(
    secrets: tuple[str, ...], archive: Archive, notebook: Path, kernel: LocalKernel
) -> None:
    thought = ThinkingBlock(f"The base64 decodes to {KEY}; I should not repeat it.", "sig-1")
    model = InPieces(ScriptedModel([reply(thought, text("I will not repeat the key."))]))
    session = await open_session(archive, notebook, kernel, model)
    events = [event async for event in session.send("decode it")]
    sid = session.session_id
    assert sid is not None
    thinking = "".join(e.text for e in events if isinstance(e, ThinkingDelta))
    assert thinking == f"The base64 decodes to {REDACTED}; I should not repeat it."
    turns = await archive.get_turns(sid)
    answer = next(t for t in turns if t.role == "assistant")
    assert thought in answer.blocks  # verbatim: its signature covers the exact text
    item = history_item(answer)  # the sidebar's history
    assert isinstance(item, HistoryItem)
    assert item.thinking == f"The base64 decodes to {REDACTED}; I should not repeat it."
    exported = export_session(await archive.get_session(sid), turns, "json")
    assert REDACTED in exported
    assert_no_part_of(KEY, exported)
    await session.close()


async def test_a_sub_agents_answer_and_the_digest_hold_no_key(
    secrets: tuple[str, ...], archive: Archive, notebook: Path, kernel: LocalKernel
) -> None:
    router = Router(
        [plan({"id": "decode", "description": "decode the token"})],
        steps={"decode the token": [text(f"Decoded: {KEY} (from the base64 in cell 3).")]},
    )
    session = await open_session(archive, notebook, kernel, InPieces(ScriptedModel(router)))
    outcome = await attach(session).start("Find out what the base64 token is")
    assert outcome.status == "passed"
    assert f"decode: passed (1 attempt) — Decoded: {REDACTED}" in outcome.digest
    assert_no_part_of(KEY, outcome.digest)
    (subtask,) = await archive.list_subtasks(outcome.task_id)
    assert subtask.child_session_id is not None
    child_turns = await archive.get_turns(subtask.child_session_id)
    child_answer = next(t for t in child_turns if t.role == "assistant")
    assert child_answer.content == f"Decoded: {REDACTED} (from the base64 in cell 3)."
    await session.close()
    assert KEY.encode() not in archive_bytes(notebook)


# -- a real kernel: the `%cowork` cell's output and the saved notebook ----------------------


@pytest.mark.kernel
@pytest.mark.attack(
    attack=(
        "In a `%cowork` cell the model writes back a key it read in base64, split over stream "
        "pieces and two text blocks: the cell's output, saved in the .ipynb, holds the key"
    ),
    stopped_by=(
        "The answer is redacted before any front sees it: the cell and the saved notebook "
        "show [REDACTED]"
    ),
    ref="R9",
)
def test_a_cowork_cell_and_its_saved_notebook_hold_no_key(tmp_path: Path) -> None:
    said = SENTENCE.format(KEY)
    cut = said.index(KEY) + 17
    script = [
        {"content": [{"type": "tool_use", "name": "run_python", "input": {"code": PRINT_BASE64}}]},
        {"content": [{"type": "text", "text": said[:cut]}, {"type": "text", "text": said[cut:]}]},
    ]
    path = tmp_path / "decode.ipynb"
    cells = ["%load_ext loom_jupyter", "%cowork what is the base64 in `token`?"]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    with FakeAnthropic(script=script) as fake:
        env = {
            k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "LOOM_", "JPY_"))
        }
        env.update(
            JPY_SESSION_NAME=str(path),
            ANTHROPIC_BASE_URL=fake.base_url,
            ANTHROPIC_API_KEY=KEY,
            LOOM_APPROVAL="auto",
            XDG_CONFIG_HOME=str(tmp_path / "config"),
        )
        client = NotebookClient(
            notebook,
            timeout=120,
            kernel_name="python3",
            resources={"metadata": {"path": str(tmp_path)}},
        )
        client.execute(env=env)
        assert len(fake.message_requests) == 2
    nbformat.write(notebook, path)
    saved = path.read_text(encoding="utf-8")
    answer = json.dumps(list(notebook.cells[1].outputs))
    assert REDACTED in answer  # the answer was shown, redacted
    assert "keep it safe" in answer
    assert_no_part_of(KEY, saved)
    assert KEY.encode() not in archive_bytes(path)
