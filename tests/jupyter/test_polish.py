"""What a new user reads: words wrap whole, prompts counted, numbers alike, sparklines."""

from __future__ import annotations

from loom_jupyter.engine.events import StateChanged, TurnStarted
from loom_jupyter.host.services.panel_data import PanelData
from loom_jupyter.jupyter.cell.output import cell_text, plural, shorten, wrap_words
from loom_jupyter.jupyter.panel.render import panel_html, panel_text


def test_long_lines_wrap_between_words_only() -> None:
    words = [f"word{i}" for i in range(40)] + ["an-unbreakable-hyphenated-identifier"]
    wrapped = wrap_words(" ".join(words), width=30)
    lines = wrapped.splitlines()
    assert len(lines) > 5
    assert all(len(line) <= 36 for line in lines)
    assert wrapped.split() == words  # every word whole, in order
    assert wrap_words("a\n\nb") == "a\n\nb"  # blank lines stay


def test_counts_titles_and_numbers_read_alike() -> None:
    assert plural(1, "prompt") == "1 prompt"
    assert plural(14123, "prompt") == "14,123 prompts"
    assert shorten("a  long\ntitle that goes on and on", 13) == "a long title…"
    assert cell_text(14123) == "14,123"  # the cost table and the panel both say 14,123
    assert cell_text(True) == "True"
    assert cell_text("$0.0100") == "$0.0100"


def test_the_panel_counts_prompts_and_keeps_rows_as_a_detail() -> None:
    data = PanelData(title="Sales", prompts=2, turns=9, cache_tokens=14123, points=((10, 0.1),))
    data = data.apply(TurnStarted("s", 10))
    data = data.apply(StateChanged("s", "Sales", 11, 0, 0, 0.0, ""))
    assert (data.prompts, data.turns) == (3, 11)
    assert "Prompts: 3 (11 archive rows)" in panel_text(data)
    html = panel_html(data)
    assert "prompts <b>3</b>" in html
    assert "cache <b>14,123</b>" in html
    assert html.count("display:inline-flex;align-items:center") == 2  # label and line centred
