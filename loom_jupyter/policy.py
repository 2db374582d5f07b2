"""Managed policy (DESIGN §16): what an organisation fixes that nobody below can loosen.

A hub operator writes ``managed.yaml`` in ``/etc/loom/`` and/or ``{sys.prefix}/etc/loom/`` (the
image's environment). Both are read; per key the stricter value wins:

==========================  ===========================================================
``approval``                the loosest mode allowed (``ask`` forbids ``auto``; ``read-only``
                            forbids ``ask`` and ``auto``)
``models``                  the model ids allowed (both files: those both list)
``mcp_servers_allowed``     the only MCP server names that may start, whoever names them
``web_search``/``web_fetch`` ``false`` forbids the API's tool everywhere
``daily_spend_limit_usd``   per person per UTC day (the lower), kept by :mod:`loom_jupyter.spend`
``telemetry``               ``endpoint``, ``headers``, ``capture_content`` (read by telemetry)
==========================  ===========================================================

Nothing the person sets (their loom.yaml, ``LOOM_*`` variables, a magic) nor a project
loosens it: settings are governed where they are resolved (:meth:`ManagedPolicy.govern`,
called by :func:`loom_jupyter.trust.settings_for`), a magic that asks for more is refused
(:meth:`ManagedPolicy.check_approval`, :meth:`ManagedPolicy.check_model`), and every model
request passes the spend and model gate (``session/policy_gate.py``). A file that does not
parse, holds an unknown key or a bad value stops Loom (fail closed):
:class:`~loom_jupyter.errors.ManagedPolicyError` names it.

:func:`managed_policy` reads the files as they are now (a ``stat`` each; parsed again only
when one changed), so an operator's edit applies without a restart.
"""

from __future__ import annotations

import dataclasses
import math
import stat
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args

from loom_jupyter.errors import ManagedPolicyError, PolicyRefusedError
from loom_jupyter.settings import (
    MODEL_ALIASES,
    ApprovalMode,
    Settings,
    parse_yaml,
    stricter_approval,
)

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

__all__ = [
    "MANAGED",
    "POLICY_FILE_NAME",
    "POLICY_KEYS",
    "ManagedPolicy",
    "Override",
    "TelemetryPolicy",
    "managed_policy",
    "policy_paths",
    "read_policy",
]

POLICY_FILE_NAME = "managed.yaml"
POLICY_KEYS = (
    "approval",
    "models",
    "mcp_servers_allowed",
    "web_search",
    "web_fetch",
    "daily_spend_limit_usd",
    "telemetry",
)
TELEMETRY_KEYS = ("endpoint", "headers", "capture_content")
MANAGED = "managed by your organisation"
"""The words every front shows where the policy is in force (DESIGN §16)."""
POLICY_MAX_BYTES = 64 * 1024


def policy_paths() -> tuple[Path, ...]:
    """``/etc/loom/managed.yaml``, then ``{sys.prefix}/etc/loom/managed.yaml`` (once if one)."""
    system = Path("/etc/loom") / POLICY_FILE_NAME
    prefix = Path(sys.prefix) / "etc" / "loom" / POLICY_FILE_NAME
    return (system,) if prefix == system else (system, prefix)


@dataclass(frozen=True)
class TelemetryPolicy:
    """``telemetry`` of the managed policy (DESIGN §16), for the OpenTelemetry export:
    ``endpoint`` (an OTLP/HTTP URL; ``None``: not set), ``headers`` sent with each export,
    ``capture_content`` (``None``: not set; ``False`` wins over ``True``)."""

    endpoint: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    capture_content: bool | None = None

    @property
    def is_set(self) -> bool:
        """Whether the policy says anything about telemetry."""
        return self != TelemetryPolicy()

    def merged(self, other: TelemetryPolicy) -> TelemetryPolicy:
        """This (the earlier file) with ``other``: the earlier endpoint and header values
        win; content is captured only if no file says ``false``."""
        names = {name for name, _ in self.headers}
        capture = _stricter_flag(self.capture_content, other.capture_content)
        return TelemetryPolicy(
            endpoint=self.endpoint or other.endpoint,
            headers=(*self.headers, *((n, v) for n, v in other.headers if n not in names)),
            capture_content=capture,
        )


@dataclass(frozen=True)
class Override:
    """A value the person (or the folder) set that the policy replaced: shown where they set it."""

    key: str
    wanted: str
    in_force: str
    source: str  # user | env | project | magic | default
    policy_file: str

    def text(self) -> str:
        """``model: claude-opus-5-5 (your loom.yaml) is not allowed; claude-sonnet-5-5 is used
        (managed by your organisation, /etc/loom/managed.yaml)``."""
        where = _SOURCE_WORDS.get(self.source, self.source)
        return (
            f"{self.key}: {self.wanted} ({where}) is not allowed; {self.in_force} is used "
            f"({MANAGED}, {self.policy_file})"
        )


_SOURCE_WORDS = {
    "user": "your loom.yaml",
    "env": "a LOOM_* variable",
    "project": "the project's loom.yaml",
    "magic": "what you typed",
    "default": "the default",
}


@dataclass(frozen=True)
class ManagedPolicy:
    """The managed policy in force: ``None`` for a key no file sets. ``decided_by`` names,
    per key, the file whose value won (messages name it)."""

    approval: ApprovalMode | None = None
    models: tuple[str, ...] | None = None
    mcp_servers_allowed: tuple[str, ...] | None = None
    web_search: bool | None = None
    web_fetch: bool | None = None
    daily_spend_limit_usd: float | None = None
    telemetry: TelemetryPolicy = TelemetryPolicy()
    decided_by: tuple[tuple[str, str], ...] = ()
    files: tuple[str, ...] = ()
    """The policy files that set something, in reading order."""

    @property
    def active(self) -> bool:
        """Whether any file sets anything."""
        return bool(self.decided_by)

    def file_of(self, key: str) -> str:
        """The policy file whose value of ``key`` is in force."""
        return dict(self.decided_by).get(key, str(policy_paths()[0]))

    # -- what is allowed ----------------------------------------------------------------

    def allows_approval(self, mode: str) -> bool:
        """Whether approval ``mode`` is no looser than the policy's."""
        return self.approval is None or not stricter_approval(self.approval, mode)

    def allows_model(self, model: str) -> bool:
        """Whether requests may go to ``model`` (an alias counts as its id)."""
        return self.models is None or MODEL_ALIASES.get(model, model) in self.models

    def allows_server(self, name: str) -> bool:
        """Whether the MCP server ``name`` may start."""
        return self.mcp_servers_allowed is None or name in self.mcp_servers_allowed

    def check_approval(self, mode: str) -> None:
        """Refuse (:class:`PolicyRefusedError`) an approval mode looser than the policy's."""
        if not self.allows_approval(mode):
            raise PolicyRefusedError(
                f"approval {mode} is not allowed: your organisation's managed policy "
                f"({self.file_of('approval')}) allows at most {self.approval}."
            )

    def check_model(self, model: str) -> None:
        """Refuse (:class:`PolicyRefusedError`) a model the policy does not list."""
        if not self.allows_model(model):
            raise PolicyRefusedError(self.model_refusal(model))

    def model_refusal(self, model: str) -> str:
        """Why ``model`` is refused, and what is allowed."""
        allowed = ", ".join(self.models or ()) or "none (the policy files list no model in common)"
        return (
            f"the model {model} is not allowed by your organisation's managed policy "
            f"({self.file_of('models')}); allowed: {allowed}."
        )

    def server_refusal(self, name: str) -> str:
        """Why the MCP server ``name`` does not start."""
        allowed = ", ".join(self.mcp_servers_allowed or ()) or "none"
        return (
            f"not allowed by your organisation's managed policy "
            f"({self.file_of('mcp_servers_allowed')}; allowed: {allowed})"
        )

    # -- settings -----------------------------------------------------------------------

    def govern(self, settings: Settings) -> Settings:
        """``settings`` with every value the policy forbids replaced by the strictest it
        allows: approval raised, web search/fetch off, a model (and the delegation judge)
        it does not list replaced by the first it lists, MCP servers' approval raised.
        What the person typed (source ``magic``) and the policy forbids is refused."""
        if not self.active:
            return settings
        changes: dict[str, Any] = {}
        for key, value in self._wanted_changes(settings):
            if settings.source_of(key) == "magic":
                self._refuse(key, getattr(settings, key))
            changes[key] = value
        if self.approval is not None and settings.mcp_servers:
            changes["mcp_servers"] = tuple(
                s
                if self.allows_approval(s.approval)
                else dataclasses.replace(s, approval=self.approval)
                for s in settings.mcp_servers
            )
        return settings.replace(**changes) if changes else settings

    def overrides(self, settings: Settings) -> tuple[Override, ...]:
        """What :meth:`govern` replaces of what someone set in ``settings`` (ungoverned: the
        person, a ``LOOM_*`` variable, the project), each with where it was set."""
        return tuple(
            Override(
                key=key,
                wanted=_shown(getattr(settings, key)),
                in_force=_shown(value),
                source=settings.source_of(key),
                policy_file=self.file_of(_POLICY_KEY_OF.get(key, key)),
            )
            for key, value in self._wanted_changes(settings)
            if settings.source_of(key) != "default"
        )

    def _wanted_changes(self, settings: Settings) -> Iterable[tuple[str, Any]]:
        if self.approval is not None and not self.allows_approval(settings.approval):
            yield "approval", self.approval
        for key in ("web_search", "web_fetch"):
            if getattr(self, key) is False and getattr(settings, key):
                yield key, False
        if self.models:  # an empty list allows nothing: every request is refused at the gate
            for key in ("model", "delegate_judge_model"):
                if not self.allows_model(getattr(settings, key)):
                    yield key, self.models[0]

    def _refuse(self, key: str, value: Any) -> None:
        if key == "approval":
            self.check_approval(value)
        elif key in ("model", "delegate_judge_model"):
            self.check_model(value)
        raise PolicyRefusedError(
            f"{key} {_shown(value)} is not allowed by your organisation's managed policy "
            f"({self.file_of(key)})."
        )

    # -- what fronts show ---------------------------------------------------------------

    def lines(self) -> tuple[str, ...]:
        """Each key in force, one short line each (the banner, ``%cowork status``, the footer)."""
        found: list[str] = []
        if self.approval is not None:
            found.append(f"approval: {self.approval} at most")
        if self.models is not None:
            found.append(f"models: {', '.join(self.models) or 'none'}")
        if self.mcp_servers_allowed is not None:
            found.append(f"MCP servers: {', '.join(self.mcp_servers_allowed) or 'none'}")
        for key in ("web_search", "web_fetch"):
            value = getattr(self, key)
            if value is not None:
                found.append(f"{key}: {'allowed' if value else 'off'}")
        if self.daily_spend_limit_usd is not None:
            found.append(f"daily spend limit: ${self.daily_spend_limit_usd:.2f} (UTC day)")
        if self.telemetry.endpoint is not None:
            found.append(f"telemetry: {self.telemetry.endpoint}")
        return tuple(found)

    def summary(self) -> str:
        """One line: ``managed by your organisation (FILES): key, key, …``."""
        return f"{MANAGED} ({', '.join(self.files)}): " + "; ".join(self.lines())

    # -- two files ----------------------------------------------------------------------

    def stricter(self, other: ManagedPolicy) -> ManagedPolicy:
        """This policy (the earlier file) and ``other``, the stricter value winning per key."""
        decided = dict(self.decided_by)
        theirs = dict(other.decided_by)
        values: dict[str, Any] = {}
        for key in POLICY_KEYS[:-1]:
            mine = getattr(self, key)
            value = values[key] = _stricter(key, mine, getattr(other, key))
            if key not in theirs or (mine is not None and value == mine):
                continue
            both = mine is not None and value != getattr(other, key)  # a common part of both
            decided[key] = f"{decided[key]} and {theirs[key]}" if both else theirs[key]
        if "telemetry" in theirs:
            decided.setdefault("telemetry", theirs["telemetry"])
        values["telemetry"] = self.telemetry.merged(other.telemetry)
        files = tuple(dict.fromkeys((*self.files, *other.files)))
        return ManagedPolicy(**values, decided_by=tuple(decided.items()), files=files)


_POLICY_KEY_OF = {"model": "models", "delegate_judge_model": "models"}


def _stricter(key: str, mine: Any, theirs: Any) -> Any:
    if mine is None or theirs is None:
        return theirs if mine is None else mine
    if key == "approval":
        return theirs if stricter_approval(theirs, mine) else mine
    if key in ("models", "mcp_servers_allowed"):
        return tuple(name for name in mine if name in theirs)
    if key in ("web_search", "web_fetch"):
        return _stricter_flag(mine, theirs)
    if key == "daily_spend_limit_usd":
        return min(mine, theirs)
    raise AssertionError(key)


def _stricter_flag(mine: bool | None, theirs: bool | None) -> bool | None:
    if mine is False or theirs is False:
        return False
    return True if mine or theirs else None


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


# -- reading --------------------------------------------------------------------------------


def read_policy(paths: Sequence[Path] | None = None) -> ManagedPolicy:
    """The policy the files at ``paths`` (default :func:`policy_paths`) set together, the
    stricter value winning; a missing file sets nothing. Raises :class:`ManagedPolicyError`
    naming a file that cannot be read, does not parse, or holds an unknown key or bad value."""
    policy = ManagedPolicy()
    for path in paths if paths is not None else policy_paths():
        data = _read_bytes(path)
        if data is not None:
            policy = policy.stricter(parse_policy(data, str(path)))
    return policy


def parse_policy(data: bytes, where: str) -> ManagedPolicy:
    """One policy file's bytes, checked (:class:`ManagedPolicyError` names ``where``)."""
    try:
        document = parse_yaml(data.decode("utf-8"), where, POLICY_FILE_NAME)
    except UnicodeDecodeError as exc:
        raise ManagedPolicyError(_failed(where, f"not UTF-8 text (byte {exc.start:,})")) from None
    except ManagedPolicyError:
        raise
    except Exception as exc:  # LoomConfigError from the YAML reader: say it is the policy
        raise ManagedPolicyError(_failed(where, str(exc).removeprefix(f"{where}: "))) from None
    if document is None:
        return ManagedPolicy()
    if not isinstance(document, dict):
        raise ManagedPolicyError(
            _failed(where, "expected a mapping of key: value at the top level")
        )
    unknown = sorted(str(k) for k in document if k not in POLICY_KEYS)
    if unknown:
        raise ManagedPolicyError(
            _failed(where, f"unknown key(s) {', '.join(unknown)} (known: {', '.join(POLICY_KEYS)})")
        )
    values = {key: _READERS[key](value, where) for key, value in document.items()}
    telemetry = values.pop("telemetry", TelemetryPolicy())
    decided = tuple((key, where) for key in document)
    files = (where,) if decided else ()
    return ManagedPolicy(**values, telemetry=telemetry, decided_by=decided, files=files)


def _failed(where: str, why: str) -> str:
    return (
        f"{where}: the managed policy cannot be used ({why}). Loom does not run until "
        "your administrator fixes it."
    )


def _approval(value: Any, where: str) -> ApprovalMode:
    allowed = get_args(ApprovalMode)
    if value not in allowed:
        raise ManagedPolicyError(_failed(where, f"approval must be one of {', '.join(allowed)}"))
    return value  # type: ignore[no-any-return]  # one of the allowed strings


def _names(key: str) -> Any:
    def read(value: Any, where: str) -> tuple[str, ...]:
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            raise ManagedPolicyError(_failed(where, f"{key} must be a list of names"))
        names = [str(v) for v in value]
        if key == "models":
            names = [MODEL_ALIASES.get(v, v) for v in names]  # an alias counts as its id
        return tuple(dict.fromkeys(names))

    return read


def _flag(key: str) -> Any:
    def read(value: Any, where: str) -> bool:
        if not isinstance(value, bool):
            raise ManagedPolicyError(_failed(where, f"{key} must be true or false"))
        return value

    return read


def _limit(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ManagedPolicyError(
            _failed(where, "daily_spend_limit_usd must be a number of dollars")
        )
    if not math.isfinite(value) or value < 0:
        raise ManagedPolicyError(
            _failed(where, "daily_spend_limit_usd must be a finite number, 0 or more")
        )
    return float(value)


def _telemetry(value: Any, where: str) -> TelemetryPolicy:
    if not isinstance(value, dict):
        raise ManagedPolicyError(_failed(where, "telemetry must be a mapping"))
    unknown = sorted(str(k) for k in value if k not in TELEMETRY_KEYS)
    if unknown:
        raise ManagedPolicyError(
            _failed(
                where,
                f"unknown telemetry key(s) {', '.join(unknown)} "
                f"(known: {', '.join(TELEMETRY_KEYS)})",
            )
        )
    endpoint = value.get("endpoint")
    if endpoint is not None and (
        not isinstance(endpoint, str) or not endpoint.startswith(("http://", "https://"))
    ):
        raise ManagedPolicyError(_failed(where, "telemetry.endpoint must be an http(s) URL"))
    headers = value.get("headers") or {}
    if not isinstance(headers, dict) or not all(
        isinstance(k, str) and isinstance(v, str | int | float) and not isinstance(v, bool)
        for k, v in headers.items()
    ):
        raise ManagedPolicyError(_failed(where, "telemetry.headers must map names to strings"))
    capture = value.get("capture_content")
    if capture is not None and not isinstance(capture, bool):
        raise ManagedPolicyError(_failed(where, "telemetry.capture_content must be true or false"))
    return TelemetryPolicy(
        endpoint=endpoint,
        headers=tuple((k, str(v)) for k, v in headers.items()),
        capture_content=capture,
    )


_READERS: dict[str, Any] = {
    "approval": _approval,
    "models": _names("models"),
    "mcp_servers_allowed": _names("mcp_servers_allowed"),
    "web_search": _flag("web_search"),
    "web_fetch": _flag("web_fetch"),
    "daily_spend_limit_usd": _limit,
    "telemetry": _telemetry,
}


def _read_bytes(path: Path) -> bytes | None:
    """The file's bytes; ``None`` when there is none. Anything else that stops reading it
    (permissions, a folder, too large) is a :class:`ManagedPolicyError`: fail closed."""
    where = str(path)
    try:
        found = path.stat()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ManagedPolicyError(_failed(where, f"cannot be read: {exc.strerror or exc}")) from None
    if not stat.S_ISREG(found.st_mode):
        raise ManagedPolicyError(_failed(where, "not a regular file"))
    if found.st_size > POLICY_MAX_BYTES:
        raise ManagedPolicyError(_failed(where, f"larger than {POLICY_MAX_BYTES // 1024} KiB"))
    try:
        with path.open("rb") as handle:
            return handle.read(POLICY_MAX_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ManagedPolicyError(_failed(where, f"cannot be read: {exc.strerror or exc}")) from None


# -- the policy now ---------------------------------------------------------------------------

_cache_lock = threading.Lock()
_cache: dict[tuple[Any, ...], ManagedPolicy] = {}


def managed_policy(paths: Sequence[Path] | None = None) -> ManagedPolicy:
    """The managed policy as the files hold it now (any thread). Each call ``stat``s them;
    they are parsed again only when one changed. Raises :class:`ManagedPolicyError` while a
    file is broken, every time: Loom fails closed."""
    chosen = tuple(paths if paths is not None else policy_paths())
    key = (chosen, *(_signature(p) for p in chosen))
    with _cache_lock:
        found = _cache.get(key)
    if found is not None:
        return found
    policy = read_policy(chosen)
    with _cache_lock:
        _cache.clear()  # one entry: the files as they are now
        _cache[key] = policy
    return policy


def _signature(path: Path) -> tuple[int, ...] | str | None:
    try:
        found = path.stat()
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"error {exc.errno}"  # read_policy raises it with the file's name
    return (found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns)
