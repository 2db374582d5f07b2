"""Folder trust: what a notebook's folder asks for, and whether the person allowed it.

A notebook's folder is content someone else may have written (a cloned repository, a
shared drive). Its ``loom.yaml`` and instruction files ask Loom to start programs (MCP
servers), loosen approvals, use web tools and put text in the system prompt. None of that
happens until the person trusts the folder (DESIGN §12):

- :func:`read_request` reads the folder **once** (:class:`FolderRequest`): each file's
  bytes, bounded by a ``stat``-free size check on the open file, are hashed, parsed and
  shown, and what a decision switches on (settings, servers) is built from those same
  bytes — never from an earlier or later read;
- the hash frames every file by its name and length (:func:`_digest`), so two different
  folders never hash the same, and a decision carries the digest of what the person saw
  (:func:`decide`): a folder that changed since is shown again, not trusted unseen;
- :class:`TrustStore` is ``~/.config/loom/trust.json`` (never in the project): the
  decisions, keyed by the project root's real path and that hash, and whether the person
  also let the folder loosen approvals (asked apart: :attr:`FolderRequest.loosens`);
- :func:`folder_trust` puts the two together (:class:`FolderTrust`), and
  :func:`load_settings` resolves a notebook's settings with it.

A folder that asks for nothing needs no trust. Untrusted, the folder's servers are
listed and never started, its instruction files are not sent, its skills are not offered
(:mod:`loom_jupyter.skills`), and its security keys only tighten
(:mod:`loom_jupyter.settings`).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from typing_extensions import assert_never

from loom_jupyter.controls import visible
from loom_jupyter.errors import LoomConfigError, LoomError
from loom_jupyter.folders import (
    CONFIG_MAX_BYTES,
    INSTRUCTION_MAX_BYTES,
    FolderFile,
    instruction_candidates,
    project_config,
    project_root,
    read_bounded,
)
from loom_jupyter.own_writes import wrote
from loom_jupyter.policy import managed_policy
from loom_jupyter.settings import (
    TRUSTED_ONLY,
    Settings,
    parse_config,
    person_approval,
    stricter_approval,
    user_config_path,
)
from loom_jupyter.skills import (
    find_skills,
    parse_skill,
    project_skill_roots,
    read_skill_files,
)

if TYPE_CHECKING:
    from collections.abc import Mapping

    from loom_jupyter.settings import ApprovalMode, McpServerConfig
    from loom_jupyter.skills import SkillSet

__all__ = [
    "STATUS_WORDS",
    "TRUST_FILE_NAME",
    "FolderFile",
    "FolderRequest",
    "FolderTrust",
    "TrustAnswer",
    "TrustDecision",
    "TrustStatus",
    "TrustStore",
    "decide",
    "folder_trust",
    "load_settings",
    "read_request",
    "skills_for",
]

TRUST_FILE_NAME = "trust.json"
TrustStatus = Literal["trusted", "untrusted", "changed", "denied", "not-needed"]
"""``trusted``: allowed as it is now; ``changed``: allowed once, but what it asks for
changed since; ``denied``: the person said no to it as it is now; ``not-needed``: the
folder asks for nothing."""

TrustDecision = Literal["trust", "deny", "revoke"]

STATUS_WORDS: dict[TrustStatus, str] = {
    "trusted": "trusted: its MCP servers, settings, instruction files and skills are used",
    "untrusted": "not trusted: its MCP servers do not start, its instruction files are not "
    "sent, its skills are not offered, and its approval and web settings only tighten yours",
    "changed": "changed since you trusted it: its extras are off until you trust it again",
    "denied": "you chose not to trust it: its extras stay off",
    "not-needed": "not needed: the folder asks for nothing that needs trust",
}
"""What each status means, in the words every front shows (the sidebar's copy is
generated from this: ``labextension/src/generated/trust.ts``)."""

HASH_VERSION = 2
"""The trust hash's framing (2: every name and content length-prefixed). Decisions made
under an earlier framing are asked again once, saying why."""
REHASHED_NOTE = (
    "Loom now checks a folder's files more strictly than when you trusted this one (each "
    "file's name and length are part of the check): look at what it asks for once more."
)
CHANGED_NOTE = (
    "The folder changed after it was shown to you, so nothing was recorded: this is what "
    "it asks for now."
)
LOOSEN_QUESTION = "Let this folder make Loom run code and commands without asking you"

_KEEP_PER_ROOT = 32  # decisions remembered per project root (sub-folders, edits)


@dataclass(frozen=True)
class FolderRequest:
    """What a notebook's folder asks Loom for, read once, as the person must see it."""

    root: Path
    """The project root's real path (the folder holding ``.git``, else the notebook's)."""
    folder: str
    """The notebook's folder relative to the root (``.`` for the root itself)."""
    config: FolderFile | None
    """The project's ``loom.yaml``, when there is one."""
    instructions: tuple[FolderFile, ...]
    """Instruction files that exist, outermost first."""
    values: Mapping[str, Any] = field(default_factory=dict, compare=False)
    """The settings ``loom.yaml``'s bytes hold (empty when it cannot be used)."""
    person_approval: ApprovalMode = "ask"
    """The person's own approval mode (their config and environment), for :attr:`loosens`."""
    digest: str = ""
    """sha256 of the framed names and bytes of ``loom.yaml`` and every instruction file."""
    problem: str = ""
    """Why ``loom.yaml`` could not be used as settings (its bytes still count)."""
    skills: tuple[FolderFile, ...] = ()
    """The project skills' ``SKILL.md`` files (DESIGN §15), nearest folder first: what
    :func:`skills_for` offers the model once the folder is trusted, from these bytes."""

    @property
    def servers(self) -> tuple[McpServerConfig, ...]:
        """The MCP servers ``loom.yaml`` names, built from the bytes that were hashed."""
        return tuple(self.values.get("mcp_servers", ()))

    @property
    def approval(self) -> ApprovalMode | None:
        found: ApprovalMode | None = self.values.get("approval")
        return found

    @property
    def archive(self) -> tuple[str, ...]:
        """Where and how it asks the archive to be written (``journal_mode``)."""
        return tuple(f"{k}: {self.values[k]}" for k in TRUSTED_ONLY if k in self.values)

    @property
    def asks(self) -> bool:
        """Whether the folder asks for anything trust governs: servers, instruction files,
        approval or web settings (a loom.yaml of models and budgets needs no trust)."""
        keys = ("approval", "web_search", "web_fetch")
        wants = bool(self.servers or self.instructions or self.skills)
        wants = wants or bool(self.problem or self.archive)
        return wants or any(self.values.get(key) is not None for key in keys)

    @property
    def loosens(self) -> tuple[str, ...]:
        """What would make Loom ask the person less than their own mode: the folder's
        ``approval`` or a server's, when looser. Asked apart from the rest."""
        mine = self.person_approval
        found = []
        if self.approval is not None and stricter_approval(mine, self.approval):
            found.append(f"approval: {self.approval} (yours is {mine})")
        found += [
            f"MCP server {s.name}'s tools: approval {s.approval} (yours is {mine})"
            for s in self.servers
            if stricter_approval(mine, s.approval)
        ]
        return tuple(visible(line) for line in found)

    def lines(self) -> list[str]:
        """Everything the folder asks for, nothing cut short, one item a line."""
        found: list[str] = []
        for server in self.servers:
            found.append(f"MCP server {server.name}: {_server_target(server)}")
            found.append(f"  its tools' approval: {server.approval}")
        if self.approval is not None:
            found.append(f"approval: {self.approval}")
        for key in ("web_search", "web_fetch"):
            if self.values.get(key) is not None:
                found.append(f"{key}: {'on' if self.values[key] else 'off'}")
        found += list(self.archive)
        for file in self.instructions:
            found.append(f"instruction file: {file.name}" + _skipped(file))
        found += _skill_lines(self.skills)
        if self.problem:
            found.append(f"loom.yaml cannot be used: {self.problem}")
        elif self.config is not None and not found:
            found.append("loom.yaml: other settings only (model, budgets, ...)")
        return [visible(line) for line in found]


@dataclass(frozen=True)
class FolderTrust:
    """A folder's request and the person's decision about it."""

    request: FolderRequest
    status: TrustStatus
    with_approval: bool = False
    """The person also let the folder loosen approvals (:attr:`FolderRequest.loosens`)."""
    note: str = ""
    """Why it is asked again (:data:`REHASHED_NOTE`, :data:`CHANGED_NOTE`)."""

    @property
    def trusted(self) -> bool:
        """Whether the folder's extras are on (trusted, or nothing to trust)."""
        return self.status in ("trusted", "not-needed")

    @property
    def loosening(self) -> bool:
        """Whether the folder's looser approvals apply (trusted with them, or none asked)."""
        return self.trusted and (self.with_approval or not self.request.loosens)

    def report(self) -> str:
        """The whole picture, plain text: the folder, the decision, what it asks for."""
        request = self.request
        where = str(request.root) + (
            f" (notebook folder {request.folder})" if request.folder != "." else ""
        )
        lines = [f"Folder: {where}", f"Trust: {STATUS_WORDS[self.status]}"]
        if self.note:
            lines.append(self.note)
        if request.asks:
            lines.append("It asks for:")
            lines += [_bullet(item) for item in request.lines()]
        if request.loosens:
            said = "allowed" if self.status == "trusted" and self.with_approval else "not allowed"
            lines.append(f"Loosening your approval mode ({said} unless you say so apart):")
            lines += [_bullet(item) for item in request.loosens]
        return "\n".join(lines)

    def summary(self) -> str:
        """One line for a banner or a notice; empty when there is nothing to say."""
        if self.trusted:
            problem = self.request.problem
            return f"This folder's loom.yaml cannot be used: {problem}" if problem else ""
        root = self.request.root
        why = {
            "untrusted": "is not trusted",
            "changed": "changed since you trusted it",
            "denied": "was not trusted (you said no)",
        }[self.status]
        return (
            f"This folder ({root}) {why}: its loom.yaml servers, approval and web settings, "
            "its instruction files and its skills are not used. `%cowork trust` shows what it "
            "asks for and trusts it."
        )


@dataclass(frozen=True)
class TrustAnswer:
    """What became of a decision: recorded, or not because the folder changed since it
    was shown (then :attr:`trust` is the folder as it is now, to be shown and asked)."""

    trust: FolderTrust
    recorded: bool


def read_request(notebook_path: str | os.PathLike[str]) -> FolderRequest:
    """What the notebook's folder asks for now (``notebook_path`` may name the folder):
    one bounded read of each file, hashed, parsed and shown from the same bytes."""
    folder = _folder_of(Path(notebook_path).expanduser().absolute())
    root = project_root(folder / "notebook.ipynb")
    config = _read_file(project_config(folder), root, CONFIG_MAX_BYTES)
    candidates = instruction_candidates(root, folder)
    found = (_read_file(path, root, INSTRUCTION_MAX_BYTES) for path in candidates)
    instructions = tuple(f for f in found if f is not None)
    values, problem = _config_values(config)
    roots = project_skill_roots(root, folder)
    skills = read_skill_files(roots, inside=_real(root), base=root)
    return FolderRequest(
        root=_real(root),
        folder=_relative(folder, root),
        config=config,
        instructions=instructions,
        values=values,
        person_approval=_person_approval(),
        digest=_digest(_relative(folder, root), (config, *instructions, *skills)),
        problem=problem,
        skills=skills,
    )


def folder_trust(
    notebook_path: str | os.PathLike[str], *, store: TrustStore | None = None
) -> FolderTrust:
    """The notebook's folder request with the person's decision about it."""
    return (store or TrustStore()).judge(read_request(notebook_path))


def decide(
    notebook_path: str | os.PathLike[str],
    decision: TrustDecision,
    *,
    shown: str | None = None,
    with_approval: bool = False,
    store: TrustStore | None = None,
) -> TrustAnswer:
    """Record the person's decision about the folder as it was shown to them: ``shown`` is
    the digest of what they saw; the folder is read again and the decision recorded only
    when it still hashes to that (``revoke`` forgets every decision about its project and
    needs none). ``with_approval``: they also let it loosen approvals."""
    store = store or TrustStore()
    request = read_request(notebook_path)
    if decision == "revoke":
        store.revoke(request.root)
        return TrustAnswer(store.judge(request), recorded=True)
    if shown != request.digest:
        now = store.judge(request)
        return TrustAnswer(_with_note(now, CHANGED_NOTE), recorded=False)
    if decision == "trust":
        store.record(request, trusted=True, with_approval=with_approval)
    elif decision == "deny":
        store.record(request, trusted=False, with_approval=False)
    else:
        assert_never(decision)
    return TrustAnswer(store.judge(request), recorded=True)


def load_settings(
    notebook_path: str | os.PathLike[str], *, trust: FolderTrust | None = None, **overrides: Any
) -> tuple[Settings, FolderTrust]:
    """The notebook's settings, resolved with its folder's trust (read now unless given),
    from the same bytes the trust was decided on; and that trust."""
    trust = trust or folder_trust(notebook_path)
    return settings_for(trust, **overrides), trust


def skills_for(trust: FolderTrust, *, home: Path | None = None) -> SkillSet:
    """Every skill found for the notebook: the person's read now, the project's from the
    bytes its request read (and hashed), usable only while the folder is trusted."""
    return find_skills(trust.request.skills, trusted=trust.trusted, home=home)


def settings_for(trust: FolderTrust, *, managed: bool = True, **overrides: Any) -> Settings:
    """Settings resolved with ``trust``: the project's values are the ones its request
    read (and hashed), never read again; then governed by the organisation's managed policy
    (DESIGN §16, :meth:`~loom_jupyter.policy.ManagedPolicy.govern`; ``managed=False``: as
    the person and the folder asked, to say what the policy overrides). A broken policy
    file raises :class:`~loom_jupyter.errors.ManagedPolicyError` (fail closed)."""
    request = trust.request
    wanted = Settings.load(
        request.root / request.folder,
        trusted=trust.trusted,
        loosen=trust.loosening,
        project=trust.request.values,
        **overrides,
    )
    return managed_policy().govern(wanted) if managed else wanted


class TrustStore:
    """``~/.config/loom/trust.json``: the person's decisions, by project root and hash.

    Written whole (a temporary file renamed over it), mode 0600; a missing or unreadable
    file trusts nothing.
    """

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or user_config_path().parent / TRUST_FILE_NAME

    def judge(self, request: FolderRequest) -> FolderTrust:
        """The person's decision about ``request`` as it asks now."""
        if not request.asks:
            return FolderTrust(request, "not-needed")
        entry = self._read().get(str(request.root), {})
        decision = entry.get(request.digest)
        if isinstance(decision, dict) and decision.get("v") == HASH_VERSION:
            if decision.get("trusted"):
                return FolderTrust(request, "trusted", bool(decision.get("with_approval")))
            return FolderTrust(request, "denied")
        earlier = [
            d
            for d in entry.values()
            if isinstance(d, dict) and d.get("folder") == request.folder and d.get("trusted")
        ]
        if not earlier:
            return FolderTrust(request, "untrusted")
        if all(d.get("v") != HASH_VERSION for d in earlier):
            return FolderTrust(request, "changed", note=REHASHED_NOTE)
        return FolderTrust(request, "changed")

    def status(self, request: FolderRequest) -> TrustStatus:
        """The decision about ``request`` as it is now."""
        return self.judge(request).status

    def record(self, request: FolderRequest, *, trusted: bool, with_approval: bool) -> None:
        """Remember the person's decision about the folder as ``request`` read it (the
        decisions about other versions of the same notebook folder are forgotten)."""
        folders = self._read()
        entry = {
            digest: d
            for digest, d in folders.get(str(request.root), {}).items()
            if isinstance(d, dict) and d.get("folder") != request.folder
        }
        entry[request.digest] = {
            "folder": request.folder,
            "trusted": trusted,
            "with_approval": trusted and with_approval,
            "v": HASH_VERSION,
            "at": _now(),
        }
        folders[str(request.root)] = dict(list(entry.items())[-_KEEP_PER_ROOT:])
        self._write(folders)

    def revoke(self, root: Path) -> bool:
        """Forget every decision about the project at ``root``; whether there was one."""
        folders = self._read()
        found = folders.pop(str(root), None) is not None
        if found:
            self._write(folders)
        return found

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
        text = json.dumps({"version": HASH_VERSION, "folders": folders}, indent=2, sort_keys=True)
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd, temp = tempfile.mkstemp(dir=self.path.parent, prefix=".trust-", suffix=".json")
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text + "\n")
            Path(temp).chmod(0o600)
            Path(temp).replace(self.path)
            wrote(self.path, (text + "\n").encode("utf-8"))
        except OSError as error:
            raise LoomError(
                f"Cannot save the trust decision in {self.path}: {error.strerror or error}."
            ) from error


# -- reading the folder once ------------------------------------------------------------


def _read_file(path: Path, root: Path, limit: int) -> FolderFile | None:
    """A regular file's bytes, at most ``limit`` (:func:`~loom_jupyter.folders.read_bounded`)."""
    return read_bounded(path, _relative(path, root), limit)


def _config_values(config: FolderFile | None) -> tuple[dict[str, Any], str]:
    if config is None:
        return {}, ""
    if config.data is None:
        return {}, config.skipped
    try:
        return parse_config(config.data, str(config.path)), ""
    except LoomConfigError as error:
        return {}, str(error)


def _person_approval() -> ApprovalMode:
    """The person's own mode (config, environment); a broken config of theirs counts as
    the default, whose error their settings report elsewhere."""
    try:
        return person_approval()
    except LoomError:
        return "ask"


def _digest(folder: str, files: tuple[FolderFile | None, ...]) -> str:
    """A hash of where the notebook is in the project and of each file: its name and its
    bytes (or its size, when skipped), every field length-prefixed, so no two different
    folders frame the same."""
    present = [f for f in files if f is not None]
    digest = hashlib.sha256(b"loom-trust")
    _framed(digest, str(HASH_VERSION).encode())
    _framed(digest, folder.encode())
    _framed(digest, str(len(present)).encode())
    for file in present:
        _framed(digest, file.name.encode("utf-8", "surrogateescape"))
        if file.data is not None:
            _framed(digest, b"bytes")
            _framed(digest, file.data)
        else:
            _framed(digest, b"skipped")
            _framed(digest, f"{file.size}:{file.skipped}".encode())
    return digest.hexdigest()


def _framed(digest: Any, part: bytes) -> None:
    digest.update(len(part).to_bytes(8, "big"))
    digest.update(part)


def _with_note(trust: FolderTrust, note: str) -> FolderTrust:
    return FolderTrust(trust.request, trust.status, trust.with_approval, note)


# -- words -------------------------------------------------------------------------------


def _skill_lines(files: tuple[FolderFile, ...]) -> list[str]:
    """Each project skill: its name and where, then what it says it is for (or why it
    cannot be used)."""
    found: list[str] = []
    for file in files:
        skill = parse_skill(file, "project")
        if skill.status == "invalid":
            found.append(f"skill file {file.name} cannot be used: {skill.reason}")
        else:
            found += [f"skill {skill.name}: {file.name}", f"  {skill.description}"]
    return found


def _skipped(file: FolderFile) -> str:
    return f" (skipped: {file.skipped})" if file.skipped else ""


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


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
