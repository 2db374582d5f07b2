"""The models an account can use, and each one's limits: the Models API, cached for a day.

``GET /v1/models`` lists every model with its id, display name, context window
(``max_input_tokens``), largest ``max_tokens`` and capabilities. :func:`list_models` asks
it (through a fetch function the Anthropic adapter gives, so this module never imports
``anthropic``), keeps the answer for a day in ``models.json`` beside the user config
(``~/.config/loom/models.json``, with the time it was fetched) and falls back to that
file, then to the shipped table :data:`SHIPPED`, when the API cannot be reached.

:func:`model_info` is the synchronous lookup the session sizes its requests with: the
cached answer (of any age: the limits of a model do not change from day to day), else
the shipped table, else ``None``. :func:`context_budget` and :func:`max_output_tokens`
turn it into the window's token budget and a request's ``max_tokens``; a value set in
loom.yaml, a ``LOOM_*`` variable or a keyword argument wins over the model's limits.

:func:`model_capabilities` is the one door to the capabilities the Models API reports
(``thinking``, ``effort``, ``server_tools``...); models fetched or read from the cache are
also told to :func:`loom_jupyter.models.thinking.learn`, so the thinking and effort
predicates follow the API.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import re
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from loom_jupyter.settings import Settings, user_config_path

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence

__all__ = [
    "CACHE_FILE_NAME",
    "CACHE_SECONDS",
    "SHIPPED",
    "ModelInfo",
    "ModelList",
    "cache_path",
    "context_budget",
    "list_models",
    "max_output_tokens",
    "model_capabilities",
    "model_info",
    "model_rows",
]

CACHE_FILE_NAME = "models.json"
CACHE_SECONDS = 24 * 3600.0
"""How long a fetched list is used before the Models API is asked again."""


@dataclass(frozen=True)
class ModelInfo:
    """One model as the Models API describes it (``None``: not reported)."""

    id: str
    display_name: str
    context_window: int | None = None
    max_output: int | None = None
    capabilities: Mapping[str, Any] | None = field(default=None, compare=False)

    @classmethod
    def from_api(cls, data: Mapping[str, Any]) -> ModelInfo:
        """From one ``GET /v1/models`` item (unknown fields are ignored)."""
        capabilities = data.get("capabilities")
        return cls(
            id=str(data["id"]),
            display_name=str(data.get("display_name") or data["id"]),
            context_window=_positive(data.get("max_input_tokens")),
            max_output=_positive(data.get("max_tokens")),
            capabilities=dict(capabilities) if isinstance(capabilities, dict) else None,
        )

    def to_json(self) -> dict[str, Any]:
        """The cache file's form (the Models API's field names)."""
        return {
            "id": self.id,
            "display_name": self.display_name,
            "max_input_tokens": self.context_window,
            "max_tokens": self.max_output,
            "capabilities": self.capabilities,
        }


# Shipped for offline use: the context window and max output each model's public page
# gives (https://platform.claude.com/docs/en/about-claude/models/overview and the model
# pages it links: "Context window: 1M tokens · Max output: 128K tokens" and the comparison
# tables there). Models whose limits were not found are left out (the settings apply).
_K = 1000
SHIPPED: tuple[ModelInfo, ...] = (
    ModelInfo("claude-sonnet-5-5", "Claude Sonnet 5.5", 1_000_000, 128 * _K),
    ModelInfo("claude-opus-5-5", "Claude Opus 5.5", 1_000_000, 128 * _K),
    ModelInfo("claude-haiku-5-5", "Claude Haiku 5.5", 1_000_000, None),
    ModelInfo("claude-fable-5-1", "Claude Fable 5.1", 1_000_000, 128 * _K),
    ModelInfo("claude-sonnet-5", "Claude Sonnet 5", 1_000_000, 128 * _K),
    ModelInfo("claude-opus-5", "Claude Opus 5", 1_000_000, 128 * _K),
    ModelInfo("claude-opus-4-7", "Claude Opus 4.7", 1_000_000, 128 * _K),
    ModelInfo("claude-sonnet-4-6", "Claude Sonnet 4.6", 1_000_000, 64 * _K),
    ModelInfo("claude-haiku-4-5", "Claude Haiku 4.5", 200 * _K, 64 * _K),
)

Source = Literal["api", "cache", "shipped"]


@dataclass(frozen=True)
class ModelList:
    """What :func:`list_models` found: the models, where from, when fetched, and why the
    API was not used (``note``; empty when it answered)."""

    models: tuple[ModelInfo, ...]
    source: Source
    fetched_at: float | None = None
    note: str = ""

    @property
    def answered(self) -> bool:
        """The Models API's own answer (just fetched, or cached under a day), naming at least
        one model: a model it does not list is unknown to the API. Otherwise (offline, no
        Models API, an endpoint that lists nothing) it could not say."""
        fresh = self.source == "api" or (self.source == "cache" and not self.note)
        return fresh and bool(self.models)

    def find(self, model_id: str) -> ModelInfo | None:
        """``model_id`` in the list: the exact id, else the same model without a date,
        ``-latest`` or ``[1m]`` (``claude-sonnet-5-5-latest`` is ``claude-sonnet-5-5``)."""
        return _find(self.models, model_id)

    def describe(self) -> str:
        """One line: where the list comes from."""
        if self.source == "api":
            return "From the Models API (GET /v1/models), just fetched."
        if self.source == "cache":
            stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(self.fetched_at or 0))
            return f"From the Models API as fetched at {stamp} (cached for a day)."
        why = f" ({self.note})" if self.note else ""
        return f"The Models API could not be asked{why}: the table shipped with loom_jupyter."


def cache_path() -> Path:
    """``models.json`` beside the user config (``~/.config/loom/models.json``)."""
    return user_config_path().parent / CACHE_FILE_NAME


async def list_models(
    fetch: Callable[[], Awaitable[Sequence[Mapping[str, Any]]]] | None,
    *,
    refresh: bool = False,
    now: float | None = None,
    path: Path | None = None,
) -> ModelList:
    """The models the Models API lists: the cached answer when under a day old (unless
    ``refresh``), else ``fetch()`` (then cached), else the cache of any age, else
    :data:`SHIPPED`. Never raises for an API or file failure."""
    now = time.time() if now is None else now
    path = path or cache_path()
    cached = _read_cache(path)
    if cached is not None and not refresh and 0 <= now - cached.fetched_at < CACHE_SECONDS:
        return ModelList(cached.models, "cache", cached.fetched_at)
    note = "no Models API for this provider"
    if fetch is not None:
        try:
            items = await fetch()
            models = tuple(ModelInfo.from_api(item) for item in items)
        except Exception as exc:  # offline, a bad key, a provider without the endpoint...
            note = _short(exc)
        else:
            _write_cache(path, models, now)
            _learn(models)
            return ModelList(models, "api", now)
    if cached is not None:
        return ModelList(cached.models, "cache", cached.fetched_at, note)
    return ModelList(SHIPPED, "shipped", None, note)


def model_info(model_id: str, *, path: Path | None = None) -> ModelInfo | None:
    """The limits of ``model_id``: from the cached Models API answer, else the shipped
    table (exact id first, then without a date, ``-latest`` or ``[1m]``), else ``None``."""
    cached = _read_cache(path or cache_path())
    for models in (cached.models if cached else (), SHIPPED):
        found = _find(models, model_id)
        if found is not None:
            return found
    return None


def model_capabilities(model_id: str, *, path: Path | None = None) -> Mapping[str, Any] | None:
    """What the Models API reported ``model_id`` can do (its ``capabilities`` object), or
    ``None`` when it was never fetched (the shipped table has no capabilities)."""
    info = model_info(model_id, path=path)
    return info.capabilities if info is not None else None


def context_budget(settings: Settings, info: ModelInfo | None) -> int:
    """The window's token budget: ``context_budget_tokens`` when set, else the model's
    context window (when known), minus ``output_reserve_tokens``."""
    total = settings.context_budget_tokens
    window = info.context_window if info is not None else None
    if window and not _explicit(settings, "context_budget_tokens"):
        total = window
    return max(total - settings.output_reserve_tokens, 1)


def max_output_tokens(settings: Settings, info: ModelInfo | None) -> int:
    """A request's ``max_tokens``: ``max_output_tokens`` when set, else the model's
    largest (when known), else the default."""
    if info is not None and info.max_output and not _explicit(settings, "max_output_tokens"):
        return info.max_output
    return settings.max_output_tokens


def model_rows(listed: ModelList, current: str) -> list[tuple[str, str, str, str, str]]:
    """Table rows for ``%cowork model``: mark, id, display name, context window, max output."""
    rows = []
    base = _base_id(current)
    for m in listed.models:
        mark = "*" if m.id == current or _base_id(m.id) == base else ""
        rows.append((mark, m.id, m.display_name, _tokens(m.context_window), _tokens(m.max_output)))
    return rows


# -- helpers ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Cached:
    models: tuple[ModelInfo, ...]
    fetched_at: float


def _read_cache(path: Path) -> _Cached | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    key = (str(path), stat.st_mtime_ns, stat.st_size)
    hit = _memo.get(key)
    if hit is not None:
        return hit
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        models = tuple(ModelInfo.from_api(item) for item in data["models"])
        cached = _Cached(models, float(data["fetched_at"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None  # an unreadable cache is no cache: the API or the table answers
    _memo.clear()
    _memo[key] = cached
    _learn(models)
    return cached


_memo: dict[tuple[str, int, int], _Cached] = {}


def _write_cache(path: Path, models: Iterable[ModelInfo], now: float) -> None:
    payload = {"fetched_at": now, "models": [m.to_json() for m in models]}
    with contextlib.suppress(OSError):  # a read-only home must not break the listing
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".models-", suffix=".json")
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            json.dump(payload, file, indent=1)
        Path(tmp).replace(path)


def _learn(models: Iterable[ModelInfo]) -> None:
    """Tell the thinking/effort predicates what the Models API says of each model."""
    try:  # the predicates' module, looked up by name: it may come later than this one
        thinking = importlib.import_module("loom_jupyter.models.thinking")
    except ImportError:
        return
    for m in models:
        caps = m.capabilities or {}
        think, effort = caps.get("thinking"), caps.get("effort")
        if not isinstance(think, dict) or not isinstance(effort, dict):
            continue
        types = think.get("types") if isinstance(think.get("types"), dict) else {}
        adaptive = types.get("adaptive") if isinstance(types, dict) else None
        takes = bool(think.get("supported")) and _supported(adaptive)
        levels = [
            level
            for level in thinking.EFFORT_LEVELS
            if effort.get("supported") and _supported(effort.get(level))
        ]
        thinking.learn(m.id, thinking=takes, efforts=tuple(levels))


def _supported(value: Any) -> bool:
    return isinstance(value, dict) and bool(value.get("supported"))


def _explicit(settings: Settings, name: str) -> bool:
    """Whether ``name`` was set (loom.yaml, ``LOOM_*``, a keyword) rather than defaulted."""
    return name in settings.explicit or getattr(settings, name) != getattr(Settings(), name)


_DATE = re.compile(r"-\d{8}$")


def _base_id(model: str) -> str:
    name = model.strip().lower().removesuffix("[1m]").removesuffix("-latest")
    return _DATE.sub("", name)


def _find(models: Iterable[ModelInfo], model_id: str) -> ModelInfo | None:
    models = tuple(models)
    for m in models:
        if m.id == model_id:
            return m
    base = _base_id(model_id)
    return next((m for m in models if _base_id(m.id) == base), None)


def _positive(value: Any) -> int | None:
    try:
        number = int(value)
    except (TypeError, ValueError):
        return None
    return number if number > 0 else None


def _tokens(value: int | None) -> str:
    if value is None:
        return "?"
    if value >= 1_000_000 and value % 1_000_000 == 0:
        return f"{value // 1_000_000}M"
    if value >= 1000 and value % 1000 == 0:
        return f"{value // 1000}K"
    return f"{value:,}"


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 160 else text[:159] + "…"
