"""Thinking and effort, as every front sees and changes them.

``%cowork thinking``, ``%cowork effort`` and the sidebar's ``set_options`` change the
session's settings through :func:`apply_options` (engine loop), which tells every
sidebar the new :class:`~loom_jupyter.host.wire.protocol.ModelOptions`. A turn in progress
keeps the options it started with (a tool loop must not switch thinking half way).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, Protocol

from loom_jupyter.host.wire.protocol import ModelOptions, OptionsMsg

if TYPE_CHECKING:
    from loom_jupyter.host.runtime.floor import TurnFloor
    from loom_jupyter.session.conversation import CoworkSession

__all__ = ["OptionsHost", "apply_options", "model_options", "options_line"]


class OptionsHost(Protocol):
    """What :func:`apply_options` needs of the :class:`~loom_jupyter.host.host.Host`."""

    @property
    def floor(self) -> TurnFloor:
        """Where every front's messages are broadcast."""
        ...

    async def session_async(self) -> CoworkSession:
        """The conversation."""
        ...


def model_options(session: CoworkSession) -> ModelOptions:
    """The session's thinking and effort, and what its current model takes."""
    from loom_jupyter.models.thinking import effort_levels, supports_thinking

    model, settings = session.model.name, session.settings
    return ModelOptions(
        model=model,
        thinking=settings.thinking,
        effort=settings.effort or "default",
        thinking_supported=supports_thinking(model),
        effort_levels=effort_levels(model),
    )


async def apply_options(
    host: OptionsHost,
    *,
    thinking: Literal["off", "adaptive"] | None = None,
    effort: str | None = None,
) -> ModelOptions:
    """Change thinking and/or effort (``None``: unchanged; effort ``"default"`` unsets it)
    from the next turn on, and tell every sidebar."""
    session = await host.session_async()
    if thinking is not None:
        session.environment.options.set_thinking(thinking)
    if effort is not None:
        session.environment.options.set_effort(None if effort == "default" else effort)  # type: ignore[arg-type]
    options = model_options(session)
    host.floor.broadcast(OptionsMsg(options))
    return options


def options_line(options: ModelOptions) -> str:
    """One line for a person: what is set, and what the model does with it."""
    thinking = "on (adaptive)" if options.thinking == "adaptive" else "off"
    if options.thinking == "adaptive" and not options.thinking_supported:
        thinking += f" — {options.model} does not take adaptive thinking, so it is not sent"
    effort: str = options.effort
    if effort == "default":
        effort = "default (none sent: the API's own)"
    elif effort not in options.effort_levels:
        effort += f" — {options.model} does not take it, so it is not sent"
    return f"Thinking: {thinking}. Effort: {effort}. (From the next turn.)"
