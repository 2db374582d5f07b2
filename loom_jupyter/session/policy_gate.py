"""PolicyGate: every model request a session makes passes the managed policy (DESIGN §16).

The session's model is wrapped once (:class:`~loom_jupyter.session.options.SessionOptions`),
so the agent loop, a delegation's planner, sub-agents and judge — which all ask through the
session's model — are gated alike. Before a request is sent, the policy is read as it is now
(a broken file refuses: fail closed), the request's model must be one it lists, and under a
daily spend limit the day's spend (:class:`~loom_jupyter.spend.SpendLedger`) must be below it
and the model's price known; a refusal is a
:class:`~loom_jupyter.errors.RequestRefusedError` raised before anything is sent. When the
request returns (or stops), its cost is added to the ledger.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from loom_jupyter.errors import ManagedPolicyError, RequestRefusedError
from loom_jupyter.models.base import MessageDone, UsageUpdate
from loom_jupyter.models.pricing import known_cost_usd, price_for
from loom_jupyter.policy import ManagedPolicy, managed_policy
from loom_jupyter.spend import SpendLedger

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from loom_jupyter.messages import Usage
    from loom_jupyter.models.base import Model, ModelEvent, ModelRequest

__all__ = ["PolicyGate", "gated"]


class PolicyGate:
    """A :class:`~loom_jupyter.models.base.Model` that asks the managed policy first and
    counts what each request cost. Other attributes are the wrapped model's."""

    def __init__(
        self, model: Model, *, ledger: SpendLedger | None = None, notebook: str = ""
    ) -> None:
        self.inner = model
        self._ledger = ledger
        self._notebook = notebook

    @property
    def name(self) -> str:
        """The wrapped model's id."""
        return self.inner.name

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def __repr__(self) -> str:
        return f"PolicyGate({self.inner!r})"

    @property
    def ledger(self) -> SpendLedger:
        """The person's spend ledger (opened on first use)."""
        if self._ledger is None:
            self._ledger = SpendLedger()
        return self._ledger

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """The wrapped model's stream, once the policy allows the request."""
        policy = _policy_now()
        self._admit(policy, request.model)
        counting = policy.daily_spend_limit_usd is not None
        usage: Usage | None = None
        try:
            async for event in self.inner.stream(request):
                if isinstance(event, UsageUpdate | MessageDone):
                    usage = event.usage
                yield event
        finally:
            if counting and usage is not None:
                self._count(request.model, usage)

    async def count_tokens(self, request: ModelRequest) -> int:
        """Input tokens ``request`` would use (free: not gated)."""
        return await self.inner.count_tokens(request)

    def _admit(self, policy: ManagedPolicy, model: str) -> None:
        if not policy.allows_model(model):
            raise RequestRefusedError(
                f"Refused before sending: {policy.model_refusal(model)} "
                "Choose one with %cowork model NAME."
            )
        limit = policy.daily_spend_limit_usd
        if limit is None:
            return
        where = policy.file_of("daily_spend_limit_usd")
        if price_for(model) is None:
            raise RequestRefusedError(
                f"Refused before sending: the price of {model} is unknown, so the daily spend "
                f"limit set by your organisation's managed policy ({where}) cannot be kept."
            )
        self.ledger.check(limit, policy_file=where)

    def _count(self, model: str, usage: Usage) -> None:
        cost = known_cost_usd(model, usage)
        if cost:
            self.ledger.add(cost, model=model, notebook=self._notebook)


def gated(model: Model, *, notebook: str = "") -> Model:
    """``model`` behind a :class:`PolicyGate` (once)."""
    if isinstance(model, PolicyGate):
        return model
    return PolicyGate(model, notebook=notebook)


def _policy_now() -> ManagedPolicy:
    try:
        return managed_policy()
    except ManagedPolicyError as exc:
        raise RequestRefusedError(f"Refused before sending: {exc}") from None
