"""Thinking in the cell and the magics: the collapsed block, ``%cowork thinking`` and
``%cowork effort`` on a real in-process IPython shell against the fake Messages API."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from loom_jupyter.engine.events import TextDelta, ThinkingDelta, TurnDone
from loom_jupyter.jupyter.cell.render import (
    ANSWER_MIME,
    NotebookRenderer,
    TextRenderer,
    thinking_bundle,
)
from loom_jupyter.messages import Usage

if TYPE_CHECKING:
    from collections.abc import Callable

    import pytest

    from loom_jupyter.testing import FakeAnthropic

pytest_plugins = ["loom_jupyter.testing.pytest_plugin"]


def test_the_cell_shows_thinking_collapsed_then_the_answer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import IPython.display

    shown: list[tuple[str, dict[str, str], str | None]] = []

    def display(bundle: dict[str, str], raw: bool = False, display_id: str | None = None) -> None:
        shown.append(("display", bundle, display_id))

    def update(bundle: dict[str, str], raw: bool = False, display_id: str | None = None) -> None:
        shown.append(("update", bundle, display_id))

    monkeypatch.setattr(IPython.display, "display", display)
    monkeypatch.setattr(IPython.display, "update_display", update)
    renderer = NotebookRenderer()
    renderer.on_event(ThinkingDelta("First, "))
    renderer.on_event(ThinkingDelta("", redacted=True))
    renderer.on_event(TextDelta("The answer."))
    renderer.on_event(TurnDone("end_turn", 1, 2, "The answer.", Usage(), 0.0))

    thinking = [bundle for _, bundle, _ in shown if "data-loom" in bundle.get("text/html", "")]
    assert thinking[0]["text/html"].startswith('<details data-loom="thinking"')
    assert "<summary>thinking…</summary>" in thinking[0]["text/html"]  # while it streams
    assert " open" not in thinking[0]["text/html"].split(">")[0]  # collapsed
    final = thinking[-1]["text/html"]
    assert "<summary>thinking</summary>" in final
    assert "First," in final
    assert "encrypted" in final
    answer = [b for _, b, _ in shown if b.get(ANSWER_MIME) == {"markdown": "The answer."}]
    assert answer, shown
    ids = {display_id for _, bundle, display_id in shown if bundle in thinking}
    assert len(ids) == 1  # one block, updated in place


def test_thinking_bundle_escapes_text() -> None:
    bundle = thinking_bundle("<script>x</script>", done=True)
    assert "<script>" not in bundle["text/html"]
    assert bundle["text/plain"] == "[thinking]"


def test_a_terminal_prints_thinking_as_plain_text(capsys: pytest.CaptureFixture[str]) -> None:
    renderer = TextRenderer()
    renderer.on_event(ThinkingDelta("weighing options"))
    renderer.on_event(TextDelta("Done."))
    renderer.on_event(TurnDone("end_turn", 1, 2, "Done.", Usage(), 0.0))
    out = capsys.readouterr().out
    assert out.index("thinking…") < out.index("weighing options") < out.index("Done.")


def _body(fake: FakeAnthropic) -> dict[str, Any]:
    body = fake.message_requests[-1].body
    assert body is not None
    return body


def test_the_thinking_and_effort_magics(
    cowork: Callable[[str], str], fake_anthropic: FakeAnthropic
) -> None:
    assert "%cowork thinking" in cowork("thinking --help")
    assert "xhigh" in cowork("effort --help")
    assert "Thinking: off" in cowork("thinking")

    assert "Thinking: on (adaptive)" in cowork("thinking on")
    assert "Effort: max" in cowork("effort max")
    cowork("hello there")
    assert _body(fake_anthropic)["thinking"] == {"type": "adaptive"}
    assert _body(fake_anthropic)["output_config"] == {"effort": "max"}

    cowork("thinking off")
    assert "default" in cowork("effort default")
    cowork("hello again")
    assert "thinking" not in _body(fake_anthropic)
    assert "output_config" not in _body(fake_anthropic)
