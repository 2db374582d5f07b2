"""Honest prices: every model the SDK names is priced from the public list or shown as unknown."""

from __future__ import annotations

import json
import typing
from pathlib import Path
from typing import Any

import pytest

from loom_jupyter.messages import Usage
from loom_jupyter.models.pricing import (
    PRICE_UNKNOWN,
    PRICES,
    UNPRICED,
    cost_text,
    cost_usd,
    known_cost_usd,
    price_for,
)
from loom_jupyter.models.sdk_events import usage_from_sdk
from loom_jupyter.records import ModelCallRecord

MILLION = 1_000_000


def _literal_ids(annotation: Any) -> set[str]:
    """Every string of the Literals inside ``annotation`` (a Union of Literal and ``str``)."""
    found: set[str] = set()
    for arg in typing.get_args(annotation):
        if isinstance(arg, str):
            found.add(arg)
        elif arg is not str:
            found |= _literal_ids(arg)
    return found


def _sdk_model_ids() -> set[str]:
    from anthropic.types import Model

    return _literal_ids(Model)


def test_the_sdk_model_list_is_enumerated() -> None:
    ids = _sdk_model_ids()
    assert "claude-opus-4-8" in ids
    assert all(i.startswith("claude-") for i in ids)


def test_every_model_of_the_installed_sdk_is_priced_or_known_to_be_unpriced() -> None:
    """A new SDK release with a model this table does not know fails here, loudly."""
    missing = sorted(i for i in _sdk_model_ids() if price_for(i) is None and i not in UNPRICED)
    assert not missing, f"look up the public price of {missing} and add it to PRICES or UNPRICED"
    for model in UNPRICED:
        assert price_for(model) is None
        assert known_cost_usd(model, Usage(1, 1)) is None


def test_unpriced_ids_are_still_in_the_sdk() -> None:
    """UNPRICED only names ids the installed SDK has (stale entries are removed)."""
    assert set(UNPRICED) <= _sdk_model_ids()


@pytest.mark.parametrize("model", ["claude-opus-4-8", "claude-opus-4-7", "claude-opus-4-6"])
def test_the_current_opus_generation_is_not_priced_as_opus_4_1(model: str) -> None:
    price = price_for(model)
    assert price is not None
    assert (price.input, price.output) == (5, 25)
    assert price == price_for("claude-opus-4-5")
    assert price_for("claude-opus-4-1") != price


@pytest.mark.parametrize(
    ("model", "rates"),
    [
        ("claude-fable-5-2", (8, 40)),
        ("claude-fable-5-1", (10, 50)),
        ("claude-mythos-5-1", (10, 50)),
        ("claude-fable-5", (10, 50)),
        ("claude-mythos-5", (10, 50)),
        ("claude-opus-5-5", (4, 20)),
        ("claude-opus-5", (5, 25)),
        ("claude-sonnet-5-5", (2, 10)),
        ("claude-sonnet-5", (2, 10)),
        ("claude-sonnet-4-6", (3, 15)),
        ("claude-haiku-4-5-20251001", (1, 5)),
        ("claude-opus-4-5-20251101", (5, 25)),
        ("claude-sonnet-4-5-20250929", (3, 15)),
    ],
)
def test_input_and_output_rates(model: str, rates: tuple[float, float]) -> None:
    price = price_for(model)
    assert price is not None
    assert (price.input, price.output) == rates


@pytest.mark.parametrize(
    "model",
    [
        "claude-opus-4-5",
        "claude-opus-4-5-20251101",
        "claude-opus-4-5-latest",
        "claude-opus-4-5@20251101",
        "anthropic.claude-opus-4-5-20251101-v1:0",
        "us.anthropic.claude-opus-4-5-20251101-v1:0",
        "claude-opus-4-5[1m]",
        "Claude-Opus-4-5",
    ],
)
def test_dated_and_platform_ids_find_their_model(model: str) -> None:
    assert price_for(model) == PRICES["claude-opus-4-5"]


@pytest.mark.parametrize(
    "model", ["claude-opus-9", "claude-sonnet-9", "claude-sonnet", "scripted", "gpt-4o", ""]
)
def test_no_price_is_guessed_from_a_family_name(model: str) -> None:
    assert price_for(model) is None
    assert known_cost_usd(model, Usage(10, 10)) is None
    assert cost_usd(model, Usage(10, 10)) == 0.0  # a number to add up, never shown as a price


def test_one_hour_cache_writes_cost_twice_input_five_minute_ones_a_quarter_more() -> None:
    one_hour = Usage(cache_creation_input_tokens=MILLION, cache_creation_1h_input_tokens=MILLION)
    five_minutes = Usage(cache_creation_input_tokens=MILLION)
    for model in ("claude-opus-4-8", "claude-sonnet-4-6", "claude-haiku-4-5"):
        price = price_for(model)
        assert price is not None
        assert known_cost_usd(model, one_hour) == pytest.approx(2 * price.input)
        assert known_cost_usd(model, five_minutes) == pytest.approx(1.25 * price.input)
    mixed = Usage(cache_creation_input_tokens=3 * MILLION, cache_creation_1h_input_tokens=MILLION)
    assert known_cost_usd("claude-opus-4-8", mixed) == pytest.approx(10 + 2 * 6.25)


def test_the_sdk_usage_carries_the_one_hour_share_of_cache_writes() -> None:
    from anthropic.types import CacheCreation
    from anthropic.types import Usage as SdkUsage

    sdk = SdkUsage(
        input_tokens=10,
        output_tokens=20,
        cache_creation_input_tokens=1_000,
        cache_read_input_tokens=5,
        cache_creation=CacheCreation(ephemeral_1h_input_tokens=700, ephemeral_5m_input_tokens=300),
    )
    usage = usage_from_sdk(sdk)
    assert usage == Usage(10, 20, 1_000, 5, 700)
    assert (usage + usage).cache_creation_1h_input_tokens == 1_400
    without = usage_from_sdk(SdkUsage(input_tokens=1, output_tokens=1, cache_creation=None))
    assert without.cache_creation_1h_input_tokens == 0


def test_a_million_of_each_kind_on_opus_4_8() -> None:
    usage = Usage(MILLION, MILLION, 2 * MILLION, MILLION, MILLION)
    assert cost_usd("claude-opus-4-8", usage) == pytest.approx(5 + 25 + 6.25 + 10 + 0.5)


def test_haiku_5_5_prompts_over_100k_tokens_pay_the_higher_row() -> None:
    short = Usage(input_tokens=100_000, output_tokens=1_000)
    assert known_cost_usd("claude-haiku-5-5", short) == pytest.approx(0.01 + 0.0005)
    long = Usage(input_tokens=50_000, output_tokens=1_000, cache_read_input_tokens=60_000)
    assert known_cost_usd("claude-haiku-5-5", long) == pytest.approx(0.025 + 0.0025 + 0.003)


def test_cost_text_never_shows_zero_dollars_for_an_unknown_price() -> None:
    assert cost_text(None) == PRICE_UNKNOWN
    assert cost_text(0.0, unknown=True) == PRICE_UNKNOWN
    assert cost_text(0.0123, unknown=True) == f"$0.0123 + {PRICE_UNKNOWN}"
    assert cost_text(0.0123) == "$0.0123"
    assert cost_text(1234.5) == "$1,234.50"


COST_CASES = json.loads(
    (Path(__file__).parents[2] / "labextension" / "test" / "cost-cases.json").read_text()
)["cases"]


@pytest.mark.parametrize("case", COST_CASES, ids=lambda c: f"{c['usd']}-{c['unknown']}")
def test_cost_text_follows_the_table_the_sidebar_shares(case: dict[str, Any]) -> None:
    """One cost format: labextension/test/cost.spec.ts checks dom.ts costText on this table."""
    assert cost_text(case["usd"], unknown=case["unknown"]) == case["text"]


def test_a_session_costs_the_same_text_in_the_cell_and_the_sidebar() -> None:
    """The review's case: `%cowork cost` said $0.5000 where the sidebar said $0.50."""
    assert cost_text(0.5) == "$0.50"
    assert {"usd": 0.5, "unknown": False, "text": "$0.50"} in COST_CASES


def _call(n: int, model: str, cost: float) -> ModelCallRecord:
    return ModelCallRecord(
        id=n,
        session_id="s",
        turn_number=n,
        model=model,
        input_tokens=1_000,
        output_tokens=100,
        cache_creation_tokens=0,
        cache_read_tokens=0,
        cost_usd=cost,
        stop_reason="end_turn",
        latency_ms=5.0,
        error=None,
        created_at="",
    )


def test_a_call_is_unpriced_when_any_of_its_tokens_ran_on_a_model_without_a_price() -> None:
    """The one "price unknown" rule for a ledger row (the magic and the slash command use it)."""
    from dataclasses import replace

    from loom_jupyter.models.pricing import unpriced_call

    assert unpriced_call(_call(1, "claude-mythos-preview", 0.0))
    assert not unpriced_call(_call(1, "claude-opus-4-8", 0.0075))
    idle = replace(_call(1, "claude-mythos-preview", 0.0), input_tokens=0, output_tokens=0)
    assert not unpriced_call(idle)  # no tokens used: nothing to price
    assert unpriced_call(replace(idle, cache_read_tokens=5))  # cache reads count too


def _cost_rows(monkeypatch: pytest.MonkeyPatch, calls: list[ModelCallRecord]) -> list[str]:
    from loom_jupyter.jupyter.magics import cost

    shown: list[str] = []

    def table(headers: Any, rows: Any, **_: Any) -> None:
        shown.extend(" | ".join(str(cell) for cell in row) for row in rows)

    monkeypatch.setattr(cost, "show_table", table)
    cost.show_cost(calls, rich=False)
    return shown


def test_cowork_cost_shows_price_unknown_for_an_unpriced_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first, second, total = _cost_rows(
        monkeypatch,
        [_call(1, "claude-mythos-preview", 0.0), _call(2, "claude-opus-4-8", 0.0075)],
    )
    assert PRICE_UNKNOWN in first
    assert "$0.0000" not in first
    assert "$0.0075" in second
    assert total.startswith("total")
    assert f"$0.0075 + {PRICE_UNKNOWN}" in total


def test_cowork_cost_of_only_unpriced_calls_is_unknown_not_zero(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rows = _cost_rows(monkeypatch, [_call(1, "some-new-model", 0.0)])
    assert all(PRICE_UNKNOWN in row for row in rows)
    assert not any("$0.0" in row for row in rows)


def test_the_panel_says_price_unknown_after_an_unpriced_call() -> None:
    from loom_jupyter.engine.events import UsageEvent
    from loom_jupyter.host.services.panel_data import PanelData
    from loom_jupyter.jupyter.panel.render import panel_html, panel_text

    priced_only = PanelData().apply(UsageEvent(Usage(1_000, 100), 0.0075, "claude-opus-4-8"))
    assert "Cost: $0.0075" in panel_text(priced_only)
    data = priced_only.apply(UsageEvent(Usage(1_000, 100), 0.0, "claude-mythos-preview"))
    assert f"Cost: $0.0075 + {PRICE_UNKNOWN}" in panel_text(data)
    assert PRICE_UNKNOWN in panel_html(data)
    built = PanelData.build(None, [_call(1, "claude-mythos-preview", 0.0)], [], "")
    assert f"Cost: {PRICE_UNKNOWN}" in panel_text(built)


def test_the_cli_says_price_unknown_for_a_session_on_an_unpriced_model() -> None:
    from loom_jupyter.models.pricing import session_cost
    from loom_jupyter.records import SessionInfo

    def info(model: str, tokens: int, cost: float) -> SessionInfo:
        fields = dict.fromkeys(SessionInfo.__dataclass_fields__)
        fields.update(model=model, input_tokens=tokens, output_tokens=0, cost_usd=cost)
        fields.update(cache_creation_tokens=0, cache_read_tokens=0)
        return SessionInfo(**fields)  # type: ignore[arg-type]

    assert session_cost(info("claude-mythos-preview", 1_000, 0.0)) == PRICE_UNKNOWN
    assert session_cost(info("claude-opus-4-8", 1_000, 0.005)) == "$0.005"
    assert session_cost(info("claude-mythos-preview", 0, 0.0)) == "$0.00"  # nothing used
