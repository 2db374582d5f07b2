"""Settings, resolved in one place.

The person's own values win: explicit keyword arguments (what they typed), then
``LOOM_*`` environment variables, then ``~/.config/loom/loom.yaml``. The project's
``loom.yaml`` beside the notebook fills in only what the person has not set, and its
security keys (``approval``, ``web_search``, ``web_fetch``) loosen nothing unless the
folder is trusted (DESIGN §12, :mod:`loom_jupyter.trust`): a project may always make
them stricter. Its ``mcp_servers`` join the person's (their names win) and start only
in a trusted folder. Then the defaults below. Each value remembers where it came from
(:meth:`Settings.source_of`). A bad file or value raises :class:`LoomConfigError`
naming the file (or variable) and the key.
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import math
import os
import re
import stat
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar, get_args

from loom_jupyter.controls import visible
from loom_jupyter.errors import LoomConfigError
from loom_jupyter.folders import CONFIG_FILE_NAME, CONFIG_MAX_BYTES, project_config

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

__all__ = [
    "CONFIG_MAX_BYTES",
    "CONFIG_MAX_DEPTH",
    "DEFAULT_MODEL",
    "ApprovalMode",
    "EffortLevel",
    "JournalMode",
    "McpServerConfig",
    "Provider",
    "SettingSource",
    "Settings",
    "TelemetrySettings",
    "ThinkingMode",
    "parse_config",
    "parse_yaml",
    "read_config_file",
    "stricter_approval",
    "user_config_path",
]

ApprovalMode = Literal["ask", "auto", "read-only"]
SettingSource = Literal["default", "user", "env", "project", "magic"]
"""Where a value in force came from: the default, the person's ``~/.config/loom/loom.yaml``,
a ``LOOM_*`` variable, the project's ``loom.yaml``, or what the person typed (a magic,
a keyword argument)."""
McpOrigin = Literal["user", "project"]
Provider = Literal["anthropic", "bedrock", "vertex"]
ThinkingMode = Literal["off", "adaptive"]
"""loom.yaml ``thinking``: ``adaptive`` asks for ``"thinking": {"type": "adaptive"}`` (on
models that take it; ``on``/``true`` mean ``adaptive``, ``false`` means ``off``)."""
JournalMode = Literal["auto", "wal", "delete"]
"""loom.yaml ``journal_mode`` (DESIGN §13): ``auto`` uses WAL on local disks and the
rollback journal on network and virtual filesystems (``archive/journal.py``)."""
EffortLevel = Literal["low", "medium", "high", "xhigh", "max"]
"""loom.yaml ``effort``: sent as ``"output_config": {"effort": LEVEL}`` (on models that
take that level); unset leaves the API's default."""

DEFAULT_MODEL = "claude-sonnet-5-5"
MODEL_ALIASES = {
    "sonnet": "claude-sonnet-5-5",
    "opus": "claude-opus-5-5",
    "haiku": "claude-haiku-5-5",
}
TIGHTEN_ONLY = ("approval", "web_search", "web_fetch")
"""Keys an untrusted project may only make stricter (DESIGN §12)."""
TRUSTED_ONLY = ("journal_mode",)
"""Keys a project sets only when trusted: how the archive is written (a cloned folder must
not force WAL onto a network mount)."""
PERSON_ONLY = ("archive_dir", "telemetry")
"""Keys a project never sets: where archives live is the person's (archive/paths.py reads
it from the environment and the person's own loom.yaml), and where usage is sent (a
cloned folder must not send a trace of the person's work to its own collector)."""
_APPROVAL_RANK: dict[str, int] = {"auto": 0, "ask": 1, "read-only": 2}


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
    journal_mode: JournalMode = "auto"  # the archive's journal (DESIGN §13)
    archive_dir: str | None = None  # archives under this folder (DESIGN §13, archive/paths.py)
    notebook_activity: bool = True  # tell the model which cells the person ran between turns
    mcp_servers: tuple[McpServerConfig, ...] = ()  # loom.yaml `mcp_servers` (DESIGN §10)
    instructions_max_chars: int = 20_000  # AGENTS.md, CLAUDE.md... in the system prompt, at most
    web_search: bool = False  # the API's web_search tool (web_search_20250305), results cited
    web_search_max_uses: int = 5  # searches per request at most
    web_fetch: bool = False  # the API's web_fetch tool (web_fetch_20250910), citations on
    web_fetch_max_uses: int = 5  # fetches per request at most
    telemetry: TelemetrySettings | None = None  # OpenTelemetry export (DESIGN §16, telemetry/)
    explicit: frozenset[str] = field(default=frozenset(), compare=False, repr=False)
    """The settings given by loom.yaml, a ``LOOM_*`` variable or a keyword (not defaults):
    those win over a model's own limits (``models/catalog.py``)."""
    thinking: ThinkingMode = "off"  # adaptive thinking (DESIGN §10), where the model takes it
    effort: EffortLevel | None = None  # output_config.effort; None: the API's default
    sources: tuple[tuple[str, SettingSource], ...] = field(default=(), compare=False, repr=False)
    """Where each value that is not a default came from (see :meth:`source_of`)."""

    def __post_init__(self) -> None:
        _check_literal("approval", self.approval, ApprovalMode, "settings")
        _check_literal("provider", self.provider, Provider, "settings")
        _check_literal("journal_mode", self.journal_mode, JournalMode, "settings")
        object.__setattr__(self, "thinking", _thinking(self.thinking, "settings"))
        object.__setattr__(self, "effort", _effort(self.effort, "settings"))
        object.__setattr__(self, "model", MODEL_ALIASES.get(self.model, self.model))
        object.__setattr__(self, "mcp_servers", _mcp_servers(self.mcp_servers, "settings"))
        object.__setattr__(self, "telemetry", _telemetry(self.telemetry, "settings"))

    @classmethod
    def load(
        cls,
        notebook_dir: str | os.PathLike[str] | None = None,
        *,
        trusted: bool = False,
        loosen: bool = False,
        project: Mapping[str, Any] | None = None,
        env: Mapping[str, str] | None = None,
        user_config: Path | None = None,
        **overrides: Any,
    ) -> Settings:
        """Resolve settings for a notebook folder (see the module docstring). ``trusted``:
        whether the person trusts the folder (:func:`loom_jupyter.trust.load_settings`
        decides it from the trust store); untrusted is the safe default. ``loosen``: the
        person also let it loosen approvals (its ``approval`` and its servers' looser than
        theirs); without it their mode stays. ``project``: the folder's settings as trust
        read them (else its ``loom.yaml`` is read here)."""
        unknown = sorted(set(overrides) - _field_names())
        if unknown:
            raise LoomConfigError(f"unknown setting(s): {', '.join(unknown)}")
        person: dict[str, tuple[Any, SettingSource]] = {}
        user = user_config or user_config_path()
        if user.is_file():
            person.update({k: (v, "user") for k, v in _read_yaml(user).items()})
        env_values = _read_env(os.environ if env is None else env)
        person.update({k: (v, "env") for k, v in env_values.items()})
        person.update({k: (v, "magic") for k, v in overrides.items() if v is not None})
        if project is None:
            project_file = project_config(notebook_dir) if notebook_dir is not None else None
            found = project_file is not None and project_file.is_file()
            project = read_config_file(project_file) if found and project_file else {}
        values, sources = _merge(person, project, trusted=trusted, loosen=loosen)
        return cls(
            **values,
            explicit=frozenset(values),
            sources=tuple(sorted(sources.items())),
        )

    def source_of(self, key: str) -> SettingSource:
        """Where the value of ``key`` in force came from."""
        return dict(self.sources).get(key, "default")

    def replace(self, **changes: Any) -> Settings:
        """A copy with some fields changed (validated like a fresh load)."""
        return dataclasses.replace(self, **changes)


def user_config_path() -> Path:
    """``~/.config/loom/loom.yaml`` (honours ``XDG_CONFIG_HOME``)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "loom" / CONFIG_FILE_NAME


def _field_names() -> set[str]:
    return {f.name for f in fields(Settings)} - {"explicit"}


def person_approval(
    env: Mapping[str, str] | None = None, user_config: Path | None = None
) -> ApprovalMode:
    """The person's own approval mode: their ``loom.yaml`` and ``LOOM_APPROVAL``, no folder."""
    return Settings.load(None, env=env, user_config=user_config).approval


def _merge(
    person: dict[str, tuple[Any, SettingSource]],
    project: Mapping[str, Any],
    *,
    trusted: bool,
    loosen: bool,
) -> tuple[dict[str, Any], dict[str, SettingSource]]:
    """The person's values, with the project's filling in what they leave unset; security
    keys loosen only in a trusted folder, and approval only with ``loosen``; project
    servers join the person's, their approval no looser than the person's mode unless
    ``loosen``."""
    values = {key: value for key, (value, _) in person.items()}
    sources = {key: source for key, (_, source) in person.items()}
    for key, value in project.items():
        if key == "mcp_servers":
            continue
        unset = key not in person
        if key in TIGHTEN_ONLY:
            current = values.get(key, getattr(Settings(), key))
            may_loosen = trusted and unset and (loosen or key != "approval")
            applies = _stricter(key, value, current) or may_loosen
        elif key in TRUSTED_ONLY:
            applies = trusted and unset
        elif key in PERSON_ONLY:
            applies = False
        else:
            applies = unset
        if applies:
            values[key], sources[key] = value, "project"
    floor = None if loosen else values.get("approval", Settings().approval)
    servers = _joined_servers(
        values.get("mcp_servers", ()), project.get("mcp_servers", ()), floor=floor
    )
    if servers:
        values["mcp_servers"] = servers
        sources.setdefault("mcp_servers", "project")
    return values, sources


def _stricter(key: str, value: Any, current: Any) -> bool:
    if key == "approval":
        return stricter_approval(value, current)
    return bool(current) and not bool(value)  # web_search / web_fetch: off is stricter


def stricter_approval(mode: str, than: str) -> bool:
    """Whether approval ``mode`` allows less than ``than`` (read-only > ask > auto)."""
    return _APPROVAL_RANK[mode] > _APPROVAL_RANK[than]


def _joined_servers(
    own: tuple[McpServerConfig, ...],
    project: tuple[McpServerConfig, ...],
    *,
    floor: ApprovalMode | None,
) -> tuple[McpServerConfig, ...]:
    """The person's servers, then the project's whose names the person does not use; a
    project server's approval is raised to ``floor`` (the person's mode) where looser."""
    names = {s.name for s in own}
    extra = tuple(
        dataclasses.replace(s, origin="project", approval=_raised(s.approval, floor))
        for s in project
        if s.name not in names
    )
    return (*own, *extra)


def _raised(mode: ApprovalMode, floor: ApprovalMode | None) -> ApprovalMode:
    return floor if floor is not None and stricter_approval(floor, mode) else mode


def read_config_file(path: Path) -> dict[str, Any]:
    """A ``loom.yaml``'s settings, checked and typed (:class:`LoomConfigError` names the
    file and key of a problem).

    The file is ``stat``-ed first: anything but a regular file, or a file larger than
    :data:`~loom_jupyter.folders.CONFIG_MAX_BYTES`, is refused before a byte of it is read
    (a FIFO is opened without blocking and refused by the ``fstat`` of what was opened).
    Then at most that many bytes go to :func:`parse_config`.
    """
    where = str(path)
    try:
        _check_config_file(path.stat(), where)
        fd = os.open(path, os.O_RDONLY | _O_NONBLOCK | _O_CLOEXEC)
        with os.fdopen(fd, "rb") as handle:
            _check_config_file(os.fstat(handle.fileno()), where)  # the file opened, checked
            data = handle.read(CONFIG_MAX_BYTES + 1)
    except OSError as exc:
        raise LoomConfigError(f"{where}: cannot be read ({exc.strerror or exc})") from None
    return parse_config(data, where)


def parse_config(data: bytes, where: str) -> dict[str, Any]:
    """The settings in a ``loom.yaml``'s bytes (UTF-8), checked and typed; ``where`` names
    the file in messages.

    A loom.yaml may come from a folder someone else wrote, and is read before the person
    decides to trust it, so: at most :data:`~loom_jupyter.folders.CONFIG_MAX_BYTES` bytes,
    no YAML anchors or aliases (an alias bomb expands a few hundred bytes into gigabytes),
    lists and mappings nested at most :data:`CONFIG_MAX_DEPTH` deep, and a value of the
    wrong type refused by its type's name, never printed whole. Whatever else goes wrong
    while parsing or checking (even a ``RecursionError`` or ``MemoryError``) is one
    :class:`LoomConfigError` naming ``where``.
    """
    return _guarded(where, _parse_config, data, where)


def parse_yaml(text: str, where: str, what: str) -> Any:
    """One YAML document from a file someone else may have written (a skill's front
    matter), read as :func:`parse_config` reads a loom.yaml: no anchors or aliases, nesting
    bounded, any failure one :class:`LoomConfigError` naming ``where``; ``what`` names the
    kind of text in the refusal of anchors."""
    return _guarded(where, _load_yaml, text, where, what)


def _guarded(where: str, read: Callable[..., _T], *args: Any) -> _T:
    """``read(*args)``, any failure in it one :class:`LoomConfigError` naming ``where``."""
    try:
        return read(*args)
    except LoomConfigError:
        raise
    except RecursionError:
        raise LoomConfigError(f"{where}: nested too deeply to be read") from None
    except MemoryError:
        raise LoomConfigError(f"{where}: cannot be read: it needs too much memory") from None
    except Exception as exc:  # anything else a hostile value provokes
        raise LoomConfigError(
            f"{where}: cannot be read as settings ({type(exc).__name__})"
        ) from None


def _read_yaml(path: Path) -> dict[str, Any]:
    """The person's ``~/.config/loom/loom.yaml`` and the project's are read alike."""
    return read_config_file(path)


CONFIG_MAX_DEPTH = 32
"""How deep lists and mappings may nest in a ``loom.yaml`` (a real one needs four)."""
_QUOTED_CHARS = 60  # of a scalar quoted in a message
_T = TypeVar("_T")
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def _check_config_file(found: os.stat_result, where: str) -> None:
    if not stat.S_ISREG(found.st_mode):
        raise LoomConfigError(f"{where}: not a regular file, not read")
    if found.st_size > CONFIG_MAX_BYTES:
        raise LoomConfigError(_too_large(where, found.st_size))


def _too_large(where: str, size: int) -> str:
    return (
        f"{where}: {size:,} bytes, larger than the {CONFIG_MAX_BYTES // 1024} KiB "
        f"({CONFIG_MAX_BYTES:,} bytes) a loom.yaml may hold: not read"
    )


def _parse_config(data: bytes, where: str) -> dict[str, Any]:
    if len(data) > CONFIG_MAX_BYTES:
        raise LoomConfigError(_too_large(where, len(data)))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LoomConfigError(f"{where}: not UTF-8 text (byte {exc.start:,})") from None
    document = _load_yaml(text, where, "loom.yaml")
    if document is None:
        return {}
    if not isinstance(document, dict):
        raise LoomConfigError(
            f"{where}: expected a mapping of setting: value at the top level, got {_kind(document)}"
        )
    return {key: _coerce(key, value, where) for key, value in document.items()}


def _load_yaml(text: str, where: str, what: str) -> Any:
    """One YAML document, composed by :func:`_config_loader` (no aliases, bounded depth);
    ``what`` names the kind of text in the refusal of anchors."""
    import yaml  # lazily: keeps `import loom_jupyter` light

    loader = None
    try:
        loader = _config_loader()(text)  # its reader refuses control characters already
        return loader.get_single_data()
    except _Refused as exc:
        raise LoomConfigError(f"{where}: {exc.args[0].format(what=what)}") from None
    except yaml.YAMLError as exc:
        problem = visible(_clipped(str(exc), 400))
        raise LoomConfigError(f"{where}: not valid YAML ({problem})") from None
    finally:
        if loader is not None:
            loader.dispose()


class _Refused(Exception):  # not an error of the file's YAML: a refusal
    """Raised while composing: an anchor, an alias, or nesting too deep."""


@functools.cache
def _config_loader() -> type:
    """A ``yaml.SafeLoader`` that refuses anchors and aliases when it meets the first one,
    and nesting deeper than :data:`CONFIG_MAX_DEPTH`, before it builds anything."""
    import yaml

    class ConfigLoader(yaml.SafeLoader):
        depth = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            event = self.peek_event()  # type: ignore[no-untyped-call]
            line = event.start_mark.line + 1 if event.start_mark else 0
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
                raise _Refused(
                    "YAML anchors and aliases (&name / *name) are not allowed in {what} "
                    f"(line {line})"
                )
            if self.depth >= CONFIG_MAX_DEPTH:
                raise _Refused(
                    f"lists and mappings nest more than {CONFIG_MAX_DEPTH} levels deep "
                    f"(line {line}): not read"
                )
            self.depth += 1
            try:
                return super().compose_node(parent, index)
            finally:
                self.depth -= 1

    return ConfigLoader


def _read_env(env: Mapping[str, str]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for name in _field_names():
        var = f"LOOM_{name.upper()}"
        if env.get(var):
            values[name] = _guarded(var, _coerce, name, env[var], var)
    return values


def _coerce(key: Any, value: Any, source: str) -> Any:
    """Check ``key`` exists and convert ``value`` to the field's type. A value of the wrong
    type is refused by its type's name; only a short scalar is ever quoted."""
    if not isinstance(key, str) or key not in _field_names():
        known = ", ".join(sorted(_field_names()))
        raise LoomConfigError(f"{source}: unknown setting {_shown(key)} (known: {known})")
    if key == "mcp_servers":
        return _mcp_servers(value, source)
    if key == "telemetry":
        return _telemetry(value, source)
    if key == "thinking":
        return _thinking(value, source)
    if key == "effort":
        return _effort(value, source)
    default = getattr(Settings(), key)
    if isinstance(default, bool):
        try:
            return _to_bool(value)
        except ValueError:
            raise LoomConfigError(f"{source}: {key} must be a bool, got {_shown(value)}") from None
    if isinstance(default, int | float):
        return _number(key, value, type(default), source)
    if value is None and default is None:  # archive_dir: left unset
        return None
    return _check_literal(key, _text(key, value, source), _literal_of(key), source)


def _number(key: str, value: Any, kind: type[int] | type[float], source: str) -> int | float:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise LoomConfigError(f"{source}: {key} must be a {kind.__name__}, got {_kind(value)}")
    try:
        number = kind(value)
    except (ValueError, OverflowError):  # 'many', a 5,000-digit number, .inf as an int
        raise LoomConfigError(
            f"{source}: {key} must be a {kind.__name__}, got {_shown(value)}"
        ) from None
    if not number > 0 or not math.isfinite(number):
        raise LoomConfigError(f"{source}: {key} must be positive, got {_shown(value)}")
    return number


def _text(key: str, value: Any, source: str) -> str:
    """A string setting's value: a string, or a number written without quotes."""
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        if isinstance(value, int) and value.bit_length() > 256:
            raise LoomConfigError(f"{source}: {key} must be a string, got a very long number")
        return str(value)
    literal = _literal_of(key)
    if literal is not None:
        allowed = ", ".join(get_args(literal))
        raise LoomConfigError(f"{source}: {key} must be one of {allowed}; got {_kind(value)}")
    raise LoomConfigError(f"{source}: {key} must be a string, got {_kind(value)}")


def _to_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        text = value.strip().lower()
        if text in {"1", "true", "yes", "on"}:
            return True
        if text in {"0", "false", "no", "off"}:
            return False
    raise ValueError("not a boolean")


def _literal_of(key: str) -> Any:
    return {"approval": ApprovalMode, "provider": Provider, "journal_mode": JournalMode}.get(key)


def _check_literal(key: str, value: Any, literal: Any, source: str) -> str:
    if literal is None:
        return value  # type: ignore[no-any-return]  # a string, checked by the caller
    allowed = get_args(literal)
    if value not in allowed:
        raise LoomConfigError(
            f"{source}: {key} must be one of {', '.join(allowed)}; got {_shown(value)}"
        )
    return value  # type: ignore[no-any-return]  # one of the allowed strings


def _thinking(value: Any, source: str) -> str:
    """``off`` or ``adaptive``; YAML's ``off``/``on`` (booleans) and ``on`` mean the same."""
    if isinstance(value, bool):
        return "adaptive" if value else "off"
    if not isinstance(value, str):
        raise LoomConfigError(
            f"{source}: thinking must be one of off, adaptive; got {_kind(value)}"
        )
    text = value.strip().lower()
    text = {"on": "adaptive", "true": "adaptive", "false": "off", "no": "off"}.get(text, text)
    return _check_literal("thinking", text, ThinkingMode, source)


def _effort(value: Any, source: str) -> str | None:
    """An effort level, or ``None`` (unset: ``default``, empty or YAML null)."""
    if value is None:
        return None
    if not isinstance(value, str):
        levels = ", ".join(get_args(EffortLevel))
        raise LoomConfigError(f"{source}: effort must be one of {levels}; got {_kind(value)}")
    text = value.strip().lower()
    if text in ("", "default", "none", "null"):
        return None
    return _check_literal("effort", text, EffortLevel, source)


def _kind(value: Any) -> str:
    """What a value is, by its type's name: never its contents, which may be huge."""
    if value is None:
        return "nothing (null)"
    for kinds, name in _KINDS:
        if isinstance(value, kinds):
            return name
    return f"a value of type {type(value).__name__}"


_KINDS: tuple[tuple[type | tuple[type, ...], str], ...] = (
    (bool, "a boolean"),
    (int, "a whole number"),
    (float, "a number"),
    (str, "a string"),
    ((list, tuple), "a list"),
    (dict, "a mapping"),
    ((set, frozenset), "a set"),
    ((bytes, bytearray), "binary data"),
    (datetime.datetime, "a date and time"),
    (datetime.date, "a date"),
)


def _shown(value: Any) -> str:
    """A short scalar quoted (at most :data:`_QUOTED_CHARS` characters, its controls made
    visible); anything else named by its type (:func:`_kind`)."""
    if isinstance(value, str):
        return visible(repr(_clipped(value, _QUOTED_CHARS)))
    if isinstance(value, bool | float) or (isinstance(value, int) and value.bit_length() < 200):
        return repr(value)
    return _kind(value)


def _clipped(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


# -- mcp_servers (DESIGN §10) ---------------------------------------------------------------

_MCP_NAME = re.compile(r"[A-Za-z0-9_-]{1,40}")
_MCP_KEYS = ("command", "args", "env", "url", "headers", "approval", "timeout")
_MIN_SECRET_CHARS = 6  # shorter env/header values are too likely to be ordinary words


@dataclass(frozen=True)
class McpServerConfig:
    """One entry of ``mcp_servers``: a stdio server (``command``) or a streamable HTTP one
    (``url``); its tools reach the model as ``mcp__NAME__TOOL``. ``timeout`` bounds each
    call and the start, in seconds; ``approval`` applies to this server's tools."""

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    url: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    approval: ApprovalMode = "ask"
    timeout: float = 120.0
    origin: McpOrigin = "user"
    """``project``: from the notebook's folder, started only when the folder is trusted."""

    @property
    def transport(self) -> Literal["stdio", "http"]:
        """``stdio`` (a command) or ``http`` (a URL)."""
        return "stdio" if self.command is not None else "http"

    def secrets(self) -> tuple[str, ...]:
        """The values of ``env`` and ``headers`` (and a header's token after its scheme):
        never shown to the model, archived or printed."""
        found: set[str] = set()
        for _, value in (*self.env, *self.headers):
            found.add(value)
            found.update(value.split()[1:])  # "Bearer abc..." -> also "abc..."
        return tuple(v for v in found if len(v) >= _MIN_SECRET_CHARS)


def _mcp_servers(value: Any, source: str) -> tuple[McpServerConfig, ...]:
    """``mcp_servers`` from loom.yaml (a mapping NAME: options), ``LOOM_MCP_SERVERS`` (the same
    as YAML or JSON text, read as safely as loom.yaml) or already typed; errors name the
    file, the server and the key."""
    if isinstance(value, tuple) and all(isinstance(v, McpServerConfig) for v in value):
        return value
    if isinstance(value, str):
        if len(value) > CONFIG_MAX_BYTES:
            raise LoomConfigError(
                f"{source}: mcp_servers holds {len(value):,} characters, more than "
                f"{CONFIG_MAX_BYTES:,}: not read"
            )
        value = _load_yaml(value, f"{source}: mcp_servers", source)
    if value is None:
        return ()
    if not isinstance(value, dict):
        raise LoomConfigError(
            f"{source}: mcp_servers must be a mapping of NAME: options, got {_kind(value)}"
        )
    return tuple(_mcp_server(name, options, source) for name, options in value.items())


def _mcp_server(name: Any, options: Any, source: str) -> McpServerConfig:
    named = isinstance(name, str) and _MCP_NAME.fullmatch(name)
    where = f"{source}: mcp_servers.{name if named else _shown(name)}"
    if not named or "__" in name:
        raise LoomConfigError(
            f"{where}: a server name is 1-40 letters, digits, - or _ (no double _), "
            f"since tools are named mcp__NAME__TOOL"
        )
    if not isinstance(options, dict):
        raise LoomConfigError(
            f"{where}: expected a mapping (command/args/env or url/headers), got {_kind(options)}"
        )
    unknown = sorted(_key_name(k) for k in options if k not in _MCP_KEYS)
    if unknown:
        more = f" and {len(unknown) - 10} more" if len(unknown) > 10 else ""
        raise LoomConfigError(
            f"{where}: unknown key(s) {', '.join(unknown[:10])}{more} "
            f"(known: {', '.join(_MCP_KEYS)})"
        )
    command, url = options.get("command"), options.get("url")
    if (command is None) == (url is None):
        raise LoomConfigError(
            f"{where}: give either command (a stdio server) or url (streamable HTTP)"
        )
    if command is not None and (not isinstance(command, str) or not command.strip()):
        raise LoomConfigError(f"{where}: command must be a non-empty string")
    if url is not None and (
        not isinstance(url, str) or not url.startswith(("http://", "https://"))
    ):
        raise LoomConfigError(f"{where}: url must start with http:// or https://")
    if url is not None and ("args" in options or "env" in options):
        raise LoomConfigError(f"{where}: args and env belong to a stdio server (command)")
    if command is not None and "headers" in options:
        raise LoomConfigError(f"{where}: headers belong to an HTTP server (url)")
    args = options.get("args") or []
    if not isinstance(args, list) or not all(_scalar(a) for a in args):
        raise LoomConfigError(f"{where}: args must be a list of strings")
    approval = options.get("approval", "ask")
    if not isinstance(approval, str):
        raise LoomConfigError(
            f"{where}: approval must be one of ask, auto, read-only; got {_kind(approval)}"
        )
    _check_literal("approval", approval, ApprovalMode, where)
    timeout = options.get("timeout", 120.0)
    try:
        if isinstance(timeout, bool) or not isinstance(timeout, int | float | str):
            raise TypeError
        timeout = float(timeout)
    except (TypeError, ValueError, OverflowError):
        raise LoomConfigError(f"{where}: timeout must be a number of seconds") from None
    if not timeout > 0 or not math.isfinite(timeout):
        raise LoomConfigError(f"{where}: timeout must be positive, got {timeout!r}")
    return McpServerConfig(
        name=name,
        command=command,
        args=tuple(str(a) for a in args),
        env=_string_pairs(options.get("env"), f"{where}.env"),
        url=url,
        headers=_string_pairs(options.get("headers"), f"{where}.headers"),
        approval=approval,  # type: ignore[arg-type]  # checked against ApprovalMode above
        timeout=timeout,
    )


def _scalar(value: Any) -> bool:
    """A string or a number short enough to turn into text (an arg, an env value)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value.bit_length() < 4096
    return isinstance(value, str | float | bool)


def _key_name(key: Any) -> str:
    return visible(_clipped(key, _QUOTED_CHARS)) if isinstance(key, str) else _kind(key)


def _string_pairs(value: Any, where: str) -> tuple[tuple[str, str], ...]:
    if value is None:
        return ()
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise LoomConfigError(f"{where}: expected a mapping of NAME: value")
    if not all(_scalar(v) for v in value.values()):
        raise LoomConfigError(f"{where}: values must be strings")
    return tuple((k, str(v)) for k, v in value.items())


_TELEMETRY_KEYS = ("endpoint", "headers", "capture_content")


@dataclass(frozen=True)
class TelemetrySettings:
    """loom.yaml ``telemetry`` (DESIGN §16): where the OpenTelemetry export goes (an OTLP/HTTP
    base URL such as ``http://otel-collector:4318``), the headers sent with it, and whether
    message and tool contents go too (redacted). Read by ``telemetry/config.py``."""

    endpoint: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    capture_content: bool = False


def _telemetry(value: Any, source: str) -> TelemetrySettings | None:
    """``telemetry`` from loom.yaml (a mapping), ``LOOM_TELEMETRY`` (an endpoint URL) or typed."""
    if value is None or isinstance(value, TelemetrySettings):
        return value
    if isinstance(value, str):
        value = {"endpoint": value}
    where = f"{source}: telemetry"
    if not isinstance(value, dict):
        raise LoomConfigError(f"{where} must be a mapping (endpoint, headers, capture_content)")
    unknown = sorted(_key_name(k) for k in value if k not in _TELEMETRY_KEYS)
    if unknown:
        known = ", ".join(_TELEMETRY_KEYS)
        raise LoomConfigError(f"{where}: unknown key(s) {', '.join(unknown[:10])} (known: {known})")
    endpoint = value.get("endpoint")
    if endpoint is not None and (
        not isinstance(endpoint, str) or not endpoint.startswith(("http://", "https://"))
    ):
        raise LoomConfigError(f"{where}.endpoint must start with http:// or https://")
    try:
        capture = _to_bool(value.get("capture_content", False))
    except ValueError:
        raise LoomConfigError(f"{where}.capture_content must be a bool") from None
    headers = _string_pairs(value.get("headers"), f"{where}.headers")
    return TelemetrySettings(endpoint=endpoint, headers=headers, capture_content=capture)
