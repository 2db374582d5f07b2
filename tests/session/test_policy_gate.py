"""Every model request of a session passes the managed policy's gate (DESIGN §16): the real
SDK against the fake Messages API, the policy in ``{sys.prefix}/etc/loom/managed.yaml``, the
spend ledger in the test's own ``XDG_STATE_HOME``."""

from __future__ import annotations

import asyncio
import sys
from typing import TYPE_CHECKING

import pytest

from loom_jupyter.errors import PolicyRefusedError
from loom_jupyter.messages import Usage
from loom_jupyter.models.pricing import known_cost_usd
from loom_jupyter.spend import SpendLedger

from .conftest import FakeApi, OpenSession, collect, kinds

if TYPE_CHECKING:
    from pathlib import Path

USAGE = {"input_tokens": 1000, "output_tokens": 1000}
ONE = known_cost_usd("claude-sonnet-5-5", Usage(input_tokens=1000, output_tokens=1000)) or 0.0


@pytest.fixture
def policy_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "env"
    (root / "etc" / "loom").mkdir(parents=True)
    monkeypatch.setattr(sys, "prefix", str(root))
    return root / "etc" / "loom" / "managed.yaml"


async def test_a_request_over_the_daily_limit_is_refused_before_it_is_sent(
    fake_api: FakeApi, open_session: OpenSession, policy_file: Path
) -> None:
    limit = round(ONE * 1.5, 4)  # the first request is under it, the second reaches past it
    await asyncio.to_thread(policy_file.write_text, f"daily_spend_limit_usd: {limit}\n")
    answer = {"content": ["fine"], "usage": USAGE}
    model, server = fake_api.model([answer, answer, answer], model="claude-sonnet-5-5")
    session = await open_session(model)
    for _ in range(2):
        events = await collect(session, "go on")
        assert kinds(events)[-1] == "turn_done"
    assert SpendLedger().spent_today() == pytest.approx(2 * ONE)
    events = await collect(session, "once more")
    assert kinds(events)[-1] == "turn_error"
    message = events[-1].message  # type: ignore[attr-defined]
    assert f"today ${2 * ONE:.2f} of ${limit:.2f} spent; resets at 00:00 UTC" in message
    assert str(policy_file) in message
    assert len(server.message_requests) == 2  # nothing was sent
    assert SpendLedger().spent_today() == pytest.approx(2 * ONE)


async def test_a_model_the_policy_does_not_list_is_refused_at_the_request_and_the_switch(
    fake_api: FakeApi, open_session: OpenSession, policy_file: Path
) -> None:
    model, server = fake_api.model(["never"], model="claude-opus-5-5")
    session = await open_session(model)
    await asyncio.to_thread(
        policy_file.write_text, "models: [claude-sonnet-5-5]\n"
    )  # the operator's edit, mid-session
    events = await collect(session, "hello")
    assert kinds(events)[-1] == "turn_error"
    assert "claude-opus-5-5 is not allowed" in events[-1].message  # type: ignore[attr-defined]
    assert server.message_requests == []
    with pytest.raises(PolicyRefusedError, match=str(policy_file)):
        session.environment.options.set_model("claude-haiku-5-5")
    assert session.model.name == "claude-opus-5-5"


async def test_a_broken_policy_refuses_every_request(
    fake_api: FakeApi, open_session: OpenSession, policy_file: Path
) -> None:
    model, server = fake_api.model(["never"])
    session = await open_session(model)
    await asyncio.to_thread(policy_file.write_text, "approval: sometimes\n")
    events = await collect(session, "hello")
    assert kinds(events)[-1] == "turn_error"
    assert "the managed policy cannot be used" in events[-1].message  # type: ignore[attr-defined]
    assert server.message_requests == []
