"""SessionOptions: what a session asks the model with — the model, thinking, effort, the
approval mode and the models the API lists. The model sits behind the managed policy's
gate (:mod:`loom_jupyter.session.policy_gate`): a model or an approval mode the policy does
not allow is refused here too.

A change applies from the next turn (a turn in progress keeps the thinking and effort it
started with: a tool loop must not change them). The window's budget follows the current
model's context window unless loom.yaml sets one (:meth:`SessionOptions.follow_model`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from loom_jupyter.engine.context import WindowConfig
from loom_jupyter.models.catalog import ModelInfo, ModelList, list_models, model_info
from loom_jupyter.policy import managed_policy
from loom_jupyter.session.policy_gate import gated

if TYPE_CHECKING:
    from loom_jupyter.engine.context import ContextWindow
    from loom_jupyter.models.base import Model
    from loom_jupyter.settings import ApprovalMode, EffortLevel, Settings, ThinkingMode
    from loom_jupyter.tools.approval import ApprovalPolicy

__all__ = ["SessionOptions", "default_model"]


class SessionOptions:
    """One session's model, settings and approval policy, and the window that follows them."""

    def __init__(
        self,
        settings: Settings,
        model: Model,
        policy: ApprovalPolicy,
        window: ContextWindow,
        *,
        notebook: str = "",
    ) -> None:
        self.settings = settings
        self._notebook = notebook  # the spend ledger's rows name it
        self.model = gated(model, notebook=notebook)  # every request passes the managed policy
        self.policy = policy
        self.window = window

    def set_model(self, model: Model | str) -> None:
        """Use another model from the next request on (a name builds the default adapter).
        A model the organisation's managed policy does not list is refused
        (:class:`~loom_jupyter.errors.PolicyRefusedError`)."""
        managed_policy().check_model(model if isinstance(model, str) else model.name)
        if isinstance(model, str):
            model = default_model(self.settings.replace(model=model))
        self.model = gated(model, notebook=self._notebook)

    def set_thinking(self, mode: ThinkingMode | bool) -> None:
        """Adaptive thinking on (``"adaptive"``/``True``) or ``"off"``, from the next turn on
        (a turn in progress keeps what it started with: a tool loop must not change it)."""
        self.settings = self.settings.replace(thinking=mode)

    def set_effort(self, level: EffortLevel | None) -> None:
        """The effort level from the next turn on (``None``: the API's default)."""
        self.settings = self.settings.replace(effort=level)

    def request_options(self) -> tuple[bool, EffortLevel | None]:
        """What the next turn's requests carry: (adaptive thinking?, effort) — each only when
        the current model takes it (:mod:`loom_jupyter.models.thinking`)."""
        from loom_jupyter.models.thinking import request_options

        return request_options(self.model.name, self.settings.thinking, self.settings.effort)

    async def list_models(self, *, refresh: bool = False) -> ModelList:
        """The models the Models API lists (cached for a day beside the user config; the
        shipped table when it cannot be asked): :func:`loom_jupyter.models.catalog.list_models`."""
        fetch = getattr(self.model, "list_models", None)
        listed = await list_models(fetch if callable(fetch) else None, refresh=refresh)
        self.follow_model()  # the limits of the current model may be known now
        return listed

    def set_approval(self, mode: ApprovalMode) -> None:
        """Switch the approval mode (``ask``, ``auto``, ``read-only``): the person's word."""
        self.policy.mode = mode
        self.policy.source = "magic"

    def follow_model(self) -> ModelInfo | None:
        """The current model's limits (Models API cache or shipped table); the window's
        budget follows its context window unless loom.yaml sets one."""
        info = model_info(self.model.name)
        config = self.window.config
        budget = WindowConfig.from_settings(self.settings, info).budget_tokens
        if budget != config.budget_tokens:
            self.window.config = replace(config, budget_tokens=budget)
        return info


def default_model(settings: Settings) -> Model:
    """The Anthropic adapter built from ``settings`` (imported on first use)."""
    from loom_jupyter.models.anthropic import AnthropicModel

    return AnthropicModel(settings)
