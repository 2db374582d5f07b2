"""Folder trust: what a notebook's folder asks for, and whether the person allowed it.

A notebook's folder is content someone else may have written (a cloned repository, a
shared drive). Its ``loom.yaml`` and instruction files ask Loom to start programs (MCP
servers), loosen approvals, use web tools and put text in the system prompt. None of that
happens until the person trusts the folder (DESIGN §12):

- :func:`read_request` reads what the folder asks for (:class:`FolderRequest`) and a
  hash of those files' bytes;
- :class:`TrustStore` is ``~/.config/loom/trust.json`` (never in the project): the
  folders the person trusted, keyed by the project root's real path and that hash, so
  a changed ``loom.yaml`` or instruction file asks again;
- :func:`folder_trust` puts the two together (:class:`FolderTrust`), and
  :func:`load_settings` resolves a notebook's settings with it.

A folder that asks for nothing needs no trust. Untrusted, the folder's servers are
listed and never started, its instruction files are not sent, and its security keys
only tighten (:mod:`loom_jupyter.settings`).
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import tempfile
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from typing_extensions import assert_never

from loom_jupyter.controls import visible
from loom_jupyter.errors import LoomConfigError, LoomError
from loom_jupyter.folders import instruction_candidates, project_config, project_root
from loom_jupyter.settings import TRUSTED_ONLY, Settings, read_config_file, user_config_path

if TYPE_CHECKING:
    from collections.abc import Mapping

    from loom_jupyter.settings import ApprovalMode, McpServerConfig

__all__ = [
    "TRUST_FILE_NAME",
    "FolderRequest",
    "FolderTrust",
    "TrustDecision",
    "TrustStatus",
    "TrustStore",
    "decide",
    "folder_trust",
    "load_settings",
    "read_request",
]

TRUST_FILE_NAME = "trust.json"
TrustStatus = Literal["trusted", "untrusted", "changed", "denied", "not-needed"]
"""``trusted``: allowed as it is now; ``changed``: allowed once, but what it asks for
changed since; ``denied``: the person said no to it as it is now; ``not-needed``: the
folder asks for nothing."""

TrustDecision = Literal["trust", "deny", "revoke"]

_STATUS_WORDS: dict[TrustStatus, str] = {
    "trusted": "trusted: its MCP servers, settings and instruction files are used",
    "untrusted": "not trusted: its MCP servers do not start, its instruction files are not "
    "sent, and its approval and web settings only tighten yours",
    "changed": "changed since you trusted it: its extras are off until you trust it again",
    "denied": "you chose not to trust it: its extras stay off",
    "not-needed": "not needed: the folder asks for nothing",
}

_HASH_CHUNK = 1 << 16
_KEEP_PER_ROOT = 32  # decisions remembered per project root (sub-folders, edits)


@dataclass(frozen=True)
class FolderRequest:
    """What a notebook's folder asks Loom for, as the person must see it before trusting."""

    root: Path
    """The project root's real path (the folder holding ``.git``, else the notebook's)."""
    folder: str
    """The notebook's folder relative to the root (``.`` for the root itself)."""
    config: Path | None
    """The project's ``loom.yaml``, when there is one."""
    servers: tuple[McpServerConfig, ...]
    approval: ApprovalMode | None
    web_search: bool | None
    web_fetch: bool | None
    instructions: tuple[Path, ...]
    """Instruction files that exist, outermost first."""
    digest: str
    """sha256 of the bytes of ``loom.yaml`` and every instruction file (with their names)."""
    problem: str = ""
    """Why ``loom.yaml`` could not be read as settings (its bytes still count)."""
    archive: tuple[str, ...] = ()
    """Where and how it asks the archive to be written (``archive_dir``, ``journal_mode``)."""

    @property
    def asks(self) -> bool:
        """Whether the folder asks for anything trust governs: servers, instruction files,
        approval or web settings (a loom.yaml of models and budgets needs no trust)."""
        keys = (self.approval, self.web_search, self.web_fetch)
        wants = bool(self.servers or self.instructions or self.problem or self.archive)
        return wants or any(value is not None for value in keys)

    def lines(self) -> list[str]:
        """Everything the folder asks for, nothing cut short, one item a line."""
        found: list[str] = []
        for server in self.servers:
            found.append(f"MCP server {server.name}: {_server_target(server)}")
            found.append(f"  its tools' approval: {server.approval}")
        if self.approval is not None:
            found.append(f"approval: {self.approval}")
        for key in ("web_search", "web_fetch"):
            if getattr(self, key) is not None:
                found.append(f"{key}: {'on' if getattr(self, key) else 'off'}")
        found += list(self.archive)
        found += [f"instruction file: {self._shown(p)}" for p in self.instructions]
        if self.problem:
            found.append(f"loom.yaml cannot be used: {self.problem}")
        elif self.config is not None and not found:
            found.append("loom.yaml: other settings only (model, budgets, ...)")
        return [visible(line) for line in found]

    def _shown(self, path: Path) -> str:
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return str(path)


@dataclass(frozen=True)
class FolderTrust:
    """A folder's request and the person's decision about it."""

    request: FolderRequest
    status: TrustStatus

    @property
    def trusted(self) -> bool:
        """Whether the folder's extras are on (trusted, or nothing to trust)."""
        return self.status in ("trusted", "not-needed")

    def report(self) -> str:
        """The whole picture, plain text: the folder, the decision, what it asks for."""
        request = self.request
        where = str(request.root) + (
            f" (notebook folder {request.folder})" if request.folder != "." else ""
        )
        lines = [f"Folder: {where}", f"Trust: {_STATUS_WORDS[self.status]}"]
        if request.asks:
            lines.append("It asks for:")
            lines += [_bullet(item) for item in request.lines()]
        return "\n".join(lines)

    def summary(self) -> str:
        """One line for a banner or a notice; empty when there is nothing to say."""
        if self.trusted:
            return ""
        root = self.request.root
        why = {
            "untrusted": "is not trusted",
            "changed": "changed since you trusted it",
            "denied": "was not trusted (you said no)",
        }[self.status]
        return (
            f"This folder ({root}) {why}: its loom.yaml servers, approval and web settings and "
            "its instruction files are not used. `%cowork trust` shows what it asks for and "
            "trusts it."
        )


def read_request(notebook_path: str | os.PathLike[str]) -> FolderRequest:
    """What the notebook's folder asks for now (``notebook_path`` may name the folder)."""
    folder = _folder_of(Path(notebook_path).expanduser().absolute())
    root = project_root(folder / "notebook.ipynb")
    real_root = _real(root)
    config_path = project_config(folder)
    config = config_path if _is_file(config_path) else None
    instructions = tuple(p for p in instruction_candidates(root, folder) if _is_file(p))
    values, problem = _config_values(config)
    servers = tuple(values.get("mcp_servers", ()))
    return FolderRequest(
        root=real_root,
        folder=_relative(folder, root),
        config=config,
        servers=servers,
        approval=values.get("approval"),
        web_search=values.get("web_search"),
        web_fetch=values.get("web_fetch"),
        instructions=instructions,
        digest=_digest(root, folder, (config, *instructions)),
        archive=tuple(f"{k}: {values[k]}" for k in TRUSTED_ONLY if values.get(k) is not None),
        problem=problem,
    )


def folder_trust(
    notebook_path: str | os.PathLike[str], *, store: TrustStore | None = None
) -> FolderTrust:
    """The notebook's folder request with the person's decision about it."""
    request = read_request(notebook_path)
    if not request.asks:
        return FolderTrust(request, "not-needed")
    return FolderTrust(request, (store or TrustStore()).status(request))


def decide(
    notebook_path: str | os.PathLike[str],
    decision: TrustDecision,
    *,
    store: TrustStore | None = None,
) -> FolderTrust:
    """Record the person's decision about the notebook's folder as it asks now (``revoke``
    forgets every decision about its project); the trust that follows."""
    store = store or TrustStore()
    request = read_request(notebook_path)
    if decision == "trust":
        store.trust(request)
    elif decision == "deny":
        store.deny(request)
    elif decision == "revoke":
        store.revoke(request.root)
    else:
        assert_never(decision)
    return folder_trust(notebook_path, store=store)


def load_settings(
    notebook_path: str | os.PathLike[str], **overrides: Any
) -> tuple[Settings, FolderTrust]:
    """The notebook's settings, resolved with its folder's trust, and that trust."""
    trust = folder_trust(notebook_path)
    folder = _folder_of(Path(notebook_path).expanduser().absolute())
    return Settings.load(folder, trusted=trust.trusted, **overrides), trust


class TrustStore:
    """``~/.config/loom/trust.json``: the person's decisions, by project root and hash.

    Written whole (a temporary file renamed over it), mode 0600; a missing or unreadable
    file trusts nothing.
    """

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or user_config_path().parent / TRUST_FILE_NAME

    def status(self, request: FolderRequest) -> TrustStatus:
        """The decision about ``request`` as it is now."""
        entry = self._read().get(str(request.root), {})
        decision = entry.get(request.digest)
        if isinstance(decision, dict):
            return "trusted" if decision.get("trusted") else "denied"
        same_folder = (
            d for d in entry.values() if isinstance(d, dict) and d.get("folder") == request.folder
        )
        return "changed" if any(d.get("trusted") for d in same_folder) else "untrusted"

    def trust(self, request: FolderRequest) -> None:
        """Trust the folder as it asks now."""
        self._decide(request, trusted=True)

    def deny(self, request: FolderRequest) -> None:
        """Remember that the person said no to the folder as it asks now."""
        self._decide(request, trusted=False)

    def revoke(self, root: Path) -> bool:
        """Forget every decision about the project at ``root``; whether there was one."""
        folders = self._read()
        found = folders.pop(str(root), None) is not None
        if found:
            self._write(folders)
        return found

    def _decide(self, request: FolderRequest, *, trusted: bool) -> None:
        folders = self._read()
        entry = {
            digest: d
            for digest, d in folders.get(str(request.root), {}).items()
            if isinstance(d, dict) and d.get("folder") != request.folder
        }
        entry[request.digest] = {"folder": request.folder, "trusted": trusted, "at": _now()}
        folders[str(request.root)] = dict(list(entry.items())[-_KEEP_PER_ROOT:])
        self._write(folders)

    def _read(self) -> dict[str, dict[str, Any]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        folders = data.get("folders") if isinstance(data, dict) else None
        if not isinstance(folders, dict):
            return {}
        return {k: v for k, v in folders.items() if isinstance(v, dict)}

    def _write(self, folders: Mapping[str, Any]) -> None:
        text = json.dumps({"version": 1, "folders": folders}, indent=2, sort_keys=True)
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd, temp = tempfile.mkstemp(dir=self.path.parent, prefix=".trust-", suffix=".json")
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text + "\n")
            Path(temp).chmod(0o600)
            Path(temp).replace(self.path)
        except OSError as error:
            raise LoomError(
                f"Cannot save the trust decision in {self.path}: {error.strerror or error}."
            ) from error


def _config_values(config: Path | None) -> tuple[dict[str, Any], str]:
    if config is None:
        return {}, ""
    try:
        return read_config_file(config), ""
    except LoomConfigError as error:
        return {}, str(error)


def _digest(root: Path, folder: Path, files: tuple[Path | None, ...]) -> str:
    """A hash of where the notebook is in the project and of each file's name and bytes."""
    digest = hashlib.sha256(f"folder\0{_relative(folder, root)}\0".encode())
    for path in files:
        if path is None:
            continue
        digest.update(f"file\0{_relative(path, root)}\0".encode())
        try:
            with path.open("rb") as handle:
                while chunk := handle.read(_HASH_CHUNK):
                    digest.update(chunk)
        except OSError as error:  # unreadable now: its state is part of what was asked
            digest.update(f"unreadable\0{error.errno}\0".encode())
        digest.update(b"\0end\0")
    return digest.hexdigest()


def _server_target(server: McpServerConfig) -> str:
    if server.command is not None:
        line = " ".join(_quoted(part) for part in (server.command, *server.args))
        env = ", ".join(name for name, _ in server.env)
        return f"runs `{line}`" + (f" (env: {env})" if env else "")
    headers = ", ".join(name for name, _ in server.headers)
    return f"connects to {server.url}" + (f" (headers: {headers})" if headers else "")


def _quoted(part: str) -> str:
    import shlex

    return shlex.quote(part)


def _bullet(item: str) -> str:
    """A report line: an item, or (indented) a detail of the item above."""
    return f"    {item.strip()}" if item.startswith("  ") else f"  - {item}"


def _folder_of(path: Path) -> Path:
    """A notebook's folder; a folder is its own."""
    return path if path.is_dir() else path.parent


def _relative(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix() or "."
    except ValueError:
        return str(path)


def _real(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return path


def _is_file(path: Path) -> bool:
    """A file (or a link to one: its target's bytes are what the folder asks with)."""
    try:
        return stat.S_ISREG(path.stat().st_mode)
    except (OSError, ValueError):
        return False


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
