"""Settings, resolved in one place.

Precedence, highest first: explicit keyword arguments, ``LOOM_*`` environment
variables, ``loom.yaml`` beside the notebook, ``~/.config/loom/loom.yaml``,
then the defaults below. A bad file or value raises :class:`LoomConfigError`
naming the file (or variable) and the key.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args

from loom_jupyter.errors import LoomConfigError

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["DEFAULT_MODEL", "ApprovalMode", "Provider", "Settings", "user_config_path"]

ApprovalMode = Literal["ask", "auto", "read-only"]
Provider = Literal["anthropic", "bedrock", "vertex"]

DEFAULT_MODEL = "claude-sonnet-5-5"
MODEL_ALIASES = {
    "sonnet": "claude-sonnet-5-5",
    "opus": "claude-opus-5-5",
    "haiku": "claude-haiku-5-5",
}
CONFIG_FILE_NAME = "loom.yaml"


@dataclass(frozen=True, kw_only=True)
class Settings:
    """Every tunable of loom_jupyter. Build with :meth:`Settings.load`."""

    model: str = DEFAULT_MODEL
    provider: Provider = "anthropic"
    approval: ApprovalMode = "ask"
    max_output_tokens: int = 8192
    context_budget_tokens: int = 120_000
    output_reserve_tokens: int = 8192
    max_iterations: int = 25
    tool_output_max_chars: int = 30_000
    recall_output_tokens: int = 8_000
    shell_timeout_seconds: float = 60.0
    max_file_bytes: int = 1_000_000
    delegate_max_subtasks: int = 8
    delegate_max_parallel: int = 4
    delegate_max_retries: int = 2  # runs after the first, per subtask, when verification fails
    delegate_max_runs: int = 24  # sub-agent runs per delegation, retries included
    delegate_judge_model: str = "claude-haiku-5-5"
    delegate_budget_usd: float = 5.0
    delegate_budget_tokens: int = 2_000_000
    delegate_subtask_seconds: float = 900.0
    delegate_subtask_iterations: int = 20
    delegate_stagger: bool = True  # first subtask's first token before the others (cache reads)
    request_timeout_seconds: float = 600.0
    stream_idle_timeout_seconds: float = 120.0
    max_retries: int = 2
    retry_after_cap_seconds: float = 30.0
    lease_stale_seconds: float = 30.0
    partial_save_seconds: float = 1.0
    busy_timeout_seconds: float = 5.0
    notebook_activity: bool = True  # tell the model which cells the person ran between turns
    instructions_max_chars: int = 20_000  # AGENTS.md, CLAUDE.md... in the system prompt, at most

    def __post_init__(self) -> None:
        _check_literal("approval", self.approval, ApprovalMode, "settings")
        _check_literal("provider", self.provider, Provider, "settings")
        object.__setattr__(self, "model", MODEL_ALIASES.get(self.model, self.model))

    @classmethod
    def load(
        cls,
        notebook_dir: str | os.PathLike[str] | None = None,
        *,
        env: Mapping[str, str] | None = None,
        user_config: Path | None = None,
        **overrides: Any,
    ) -> Settings:
        """Resolve settings for a notebook folder (see the module docstring)."""
        values: dict[str, Any] = {}
        for path in _config_files(notebook_dir, user_config):
            values.update(_read_yaml(path))
        values.update(_read_env(os.environ if env is None else env))
        values.update({k: v for k, v in overrides.items() if v is not None})
        unknown = sorted(set(overrides) - _field_names())
        if unknown:
            raise LoomConfigError(f"unknown setting(s): {', '.join(unknown)}")
        return cls(**values)

    def replace(self, **changes: Any) -> Settings:
        """A copy with some fields changed (validated like a fresh load)."""
        return dataclasses.replace(self, **changes)


def user_config_path() -> Path:
    """``~/.config/loom/loom.yaml`` (honours ``XDG_CONFIG_HOME``)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "loom" / CONFIG_FILE_NAME


def _field_names() -> set[str]:
    return {f.name for f in fields(Settings)}


def _config_files(notebook_dir: str | os.PathLike[str] | None, user: Path | None) -> list[Path]:
    files = [user or user_config_path()]
    if notebook_dir is not None:
        files.append(Path(notebook_dir) / CONFIG_FILE_NAME)
    return [p for p in files if p.is_file()]


def _read_yaml(path: Path) -> dict[str, Any]:
    import yaml  # lazily: keeps `import loom_jupyter` light

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise LoomConfigError(f"{path}: not valid YAML ({exc})") from exc
    except OSError as exc:
        raise LoomConfigError(f"{path}: cannot be read ({exc.strerror})") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise LoomConfigError(f"{path}: expected a mapping of setting: value at the top level")
    return {key: _coerce(key, value, str(path)) for key, value in data.items()}


def _read_env(env: Mapping[str, str]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for name in _field_names():
        var = f"LOOM_{name.upper()}"
        if env.get(var):
            values[name] = _coerce(name, env[var], var)
    return values


def _coerce(key: Any, value: Any, source: str) -> Any:
    """Check ``key`` exists and convert ``value`` to the field's type."""
    if not isinstance(key, str) or key not in _field_names():
        known = ", ".join(sorted(_field_names()))
        raise LoomConfigError(f"{source}: unknown setting {key!r} (known: {known})")
    default = getattr(Settings(), key)
    try:
        if isinstance(default, bool):
            return _to_bool(value)
        number: float
        if isinstance(default, int):
            number = int(value)
        elif isinstance(default, float):
            number = float(value)
        else:
            return _check_literal(key, str(value), _literal_of(key), source)
    except (TypeError, ValueError) as exc:
        kind = type(default).__name__
        raise LoomConfigError(f"{source}: {key} must be a {kind}, got {value!r}") from exc
    if number <= 0:
        raise LoomConfigError(f"{source}: {key} must be positive, got {value!r}")
    return number


def _to_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in {"1", "true", "yes", "on"}:
        return True
    if text in {"0", "false", "no", "off"}:
        return False
    raise ValueError(value)


def _literal_of(key: str) -> Any:
    return {"approval": ApprovalMode, "provider": Provider}.get(key)


def _check_literal(key: str, value: str, literal: Any, source: str) -> str:
    if literal is None:
        return value
    allowed = get_args(literal)
    if value not in allowed:
        raise LoomConfigError(f"{source}: {key} must be one of {', '.join(allowed)}; got {value!r}")
    return value
