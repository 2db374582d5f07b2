"""The line ``%load_ext`` prints: the notebook, the session resumed (or new), how to switch,
and what the host found at open that the person should know (the organisation's managed
policy and what it overrides, trust, a crash, another
kernel, a rebuild offer, vanished notebooks' conversations, git, the filesystem)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from loom_jupyter.host.services.managed import approval_words
from loom_jupyter.jupyter.cell.output import plural, shorten, wrap_words

if TYPE_CHECKING:
    from loom_jupyter.host.host import Host

__all__ = ["banner"]


def banner(host: Host) -> str:
    """The banner, wrapped at words."""
    found, location = host.found, host.location
    where = f"loom: {location.path.name}"
    if location.source == "terminal":
        where += f" (terminal; archive {host.archive_path})"
    info = found.resumed
    if info is None:
        head = f"{where} — new session"
    else:
        title = shorten(info.title or "(untitled)", 48)
        head = f"{where} — resumed “{title}” ({plural(found.resumed_prompts, 'prompt')})"
    mode, source = host.trust.approval_mode()
    managed = host.trust.managed()  # the organisation's policy (DESIGN §16), if any
    approval = approval_words(mode, source, managed)
    hint = f"approval: {approval} · %cowork sessions to switch · %cowork --help for help"
    if info is not None and location.source in ("terminal", "unknown"):
        # No notebook names this conversation: it may be another shell's, from this folder.
        when = info.last_active_at[:16].replace("T", " ")
        head += f", last active {when} UTC; %cowork new starts a new one"
    offer = host.restarts.offer
    messages = (
        *(managed.lines() if managed is not None else ()),
        host.trust.untrusted_line(),
        found.crash_message,
        found.lease_message,
        offer.text("%cowork rebuild") if offer else None,
        *(o.hint() for o in found.orphans if not o.writer_alive),
        found.tracked_archive,
        *found.storage_notes,
        *found.where_notes,
    )
    return "\n".join([wrap_words(head), hint, *(wrap_words(m) for m in messages if m)])
