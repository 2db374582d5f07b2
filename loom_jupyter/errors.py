"""Every error loom_jupyter raises on purpose.

All of them descend from :class:`LoomError`, so a front can catch one type and
show ``str(error)``: each message says what happened and what to do next.

::

    LoomError
    ├── LoomConfigError            bad loom.yaml / LOOM_* value (names file and key)
    │   └── ManagedPolicyError     a managed.yaml that does not parse: Loom stops (fail closed)
    ├── PolicyRefusedError         the organisation's managed policy forbids what was asked
    ├── ArchiveError
    │   ├── ArchiveBusyError       locked by another writer past the busy timeout
    │   ├── ArchiveCorruptError    not a SQLite file, or damaged (names the file)
    │   ├── ArchiveReadOnlyError   the folder or file cannot be written
    │   ├── ArchiveLinkError       .loom/ or the archive is a link (or not a plain folder/file)
    │   ├── SessionNotFoundError   no session with that id
    │   ├── TurnNotFoundError      no turn (or task) with that number/id (also a LookupError)
    │   └── LeaseHeldError         another live process writes this session
    ├── ModelError
    │   ├── MissingApiKeyError     ANTHROPIC_API_KEY is not set
    │   ├── AuthenticationError    the key was refused
    │   ├── RateLimitedError       429 (carries retry_after)
    │   ├── OverloadedError        529 / overloaded_error
    │   ├── RequestTooLargeError   the request does not fit the model's context
    │   ├── ModelConnectionError   cannot reach the API
    │   ├── ModelTimeoutError      the API or the stream stalled
    │   ├── StreamInterruptedError the stream broke or ended early
    │   ├── ModelAPIError          any other API failure
    │   └── RequestRefusedError    refused by the managed policy before it was sent (also a
    │                              PolicyRefusedError): over the daily spend, a model not allowed
    ├── ContextBudgetError         the window cannot fit even the newest turn
    ├── SessionBusyError           a session switch asked for while a turn or delegation runs
    ├── ToolError                  raised inside a tool; becomes an is_error result
    │   ├── PathOutsideNotebookError  a path escapes the notebook's folder
    │   └── ApprovalDeniedError    the person (or the policy) said no
    └── DelegationError            planning or running delegated work failed
"""

from __future__ import annotations

__all__ = [
    "ApprovalDeniedError",
    "ArchiveBusyError",
    "ArchiveCorruptError",
    "ArchiveError",
    "ArchiveLinkError",
    "ArchiveReadOnlyError",
    "AuthenticationError",
    "ContextBudgetError",
    "DelegationError",
    "LeaseHeldError",
    "LoomConfigError",
    "LoomError",
    "ManagedPolicyError",
    "MissingApiKeyError",
    "ModelAPIError",
    "ModelConnectionError",
    "ModelError",
    "ModelTimeoutError",
    "OverloadedError",
    "PathOutsideNotebookError",
    "PolicyRefusedError",
    "RateLimitedError",
    "RequestRefusedError",
    "RequestTooLargeError",
    "SessionBusyError",
    "SessionNotFoundError",
    "StreamInterruptedError",
    "ToolError",
    "TurnNotFoundError",
]


class LoomError(Exception):
    """Base of every error loom_jupyter raises on purpose."""


class LoomConfigError(LoomError):
    """A setting has a bad value; the message names the file (or variable) and key."""


class ManagedPolicyError(LoomConfigError):
    """A managed policy file (``/etc/loom/managed.yaml``, ``{sys.prefix}/etc/loom/managed.yaml``)
    does not parse, holds an unknown key or a bad value, or cannot be read: Loom runs no turn
    until it is fixed (fail closed); the message names the file."""


class PolicyRefusedError(LoomError):
    """The organisation's managed policy forbids what was asked (a looser approval mode, a
    model it does not list); the message names the policy file."""


class ArchiveError(LoomError):
    """The notebook's conversation archive cannot do what was asked."""


class ArchiveBusyError(ArchiveError):
    """Another process held the archive locked past the busy timeout."""


class ArchiveCorruptError(ArchiveError):
    """The archive file is not a SQLite database or is damaged; it is left untouched."""


class ArchiveReadOnlyError(ArchiveError):
    """The archive (or its folder) cannot be written."""


class ArchiveLinkError(ArchiveError):
    """``.loom/``, the archive or a companion of it (``-wal``, ``-shm``, ``-journal``) is a
    symbolic link or not a plain folder/file; Loom does not follow it, nothing was changed."""


class SessionNotFoundError(ArchiveError):
    """No session with the given id exists in this archive."""


class TurnNotFoundError(ArchiveError, LookupError):
    """No turn with that number (or task/subtask with that id) in the session."""


class LeaseHeldError(ArchiveError):
    """Another live process is the writer of this session."""


class ModelError(LoomError):
    """The model API failed; ``retryable`` tells whether trying again may help."""

    retryable: bool = False


class MissingApiKeyError(ModelError):
    """No API key is configured."""


class AuthenticationError(ModelError):
    """The API refused the key."""


class RateLimitedError(ModelError):
    """The API rate-limited the request."""

    retryable = True

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class OverloadedError(ModelError):
    """The API is overloaded."""

    retryable = True


class RequestTooLargeError(ModelError):
    """The request is larger than the model's context window."""


class ModelConnectionError(ModelError):
    """The API could not be reached."""

    retryable = True


class ModelTimeoutError(ModelError):
    """The API did not answer, or the stream stalled, in time."""

    retryable = True


class StreamInterruptedError(ModelError):
    """The response stream broke off or ended without finishing."""

    retryable = True


class ModelAPIError(ModelError):
    """Any other failure reported by the API."""


class RequestRefusedError(ModelError, PolicyRefusedError):
    """A model request the managed policy refused before anything was sent: the day's spend
    reached the limit, the model is not allowed, or the policy file cannot be read."""


class ContextBudgetError(LoomError):
    """The request cannot fit the context budget, even with the smallest window."""


class SessionBusyError(LoomError):
    """A session switch (resume, new, fork, close) was asked for while a turn or a delegation
    runs: switching then would split the turn's prompt and answer between two sessions.

    ``running`` says what runs (``"A turn"``, ``"A delegation"``); ``action`` what was asked
    (``"start a new session"``). The message says both and what to do."""

    def __init__(self, running: str, action: str) -> None:
        super().__init__(
            f"{running} is running: wait for it to finish or press Stop, then {action} again "
            "(switching now would split its prompt and answer between two sessions)."
        )
        self.running = running
        self.action = action


class ToolError(LoomError):
    """A tool failed; the loop turns it into an ``is_error`` tool result."""


class PathOutsideNotebookError(ToolError):
    """A path resolves outside the notebook's folder tree."""


class ApprovalDeniedError(ToolError):
    """The tool call was not approved."""


class DelegationError(LoomError):
    """Planning, running or verifying delegated work failed."""
