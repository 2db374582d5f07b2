"""What went wrong talking to the API, and the message a person gets for it.

The adapter turns each SDK / transport exception into a :class:`Failure`
(plain data, no ``anthropic`` import here), and :func:`to_error` turns a
failure into a :class:`~loom_jupyter.errors.ModelError` whose message says
what happened and what to do. :func:`describe` is the short form used in
retry notices.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal
from urllib.parse import urlsplit

from loom_jupyter.errors import (
    AuthenticationError,
    MissingApiKeyError,
    ModelAPIError,
    ModelConnectionError,
    ModelError,
    ModelTimeoutError,
    OverloadedError,
    RateLimitedError,
    RequestTooLargeError,
    StreamInterruptedError,
)

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = [
    "ErrorContext",
    "Failure",
    "FailureKind",
    "describe",
    "redact",
    "safe_endpoint",
    "to_error",
]

FailureKind = Literal[
    "status",  # the API answered with an error (HTTP status, or an SSE error event: status 200)
    "connection",  # could not connect / the connection failed before the answer started
    "timeout",  # no answer before the request timeout
    "stall",  # the stream went silent past the idle timeout
    "dropped",  # the connection broke mid-stream
    "incomplete",  # the stream ended without message_stop
    "missing_key",  # no credentials at all
    "bad_response",  # the API sent something the SDK could not read
]
Category = Literal[
    "auth", "permission", "rate", "overloaded", "too_large", "not_found", "billing",
    "api_timeout", "invalid", "server", "other",
]  # fmt: skip

_RETRYABLE_STATUSES = frozenset({408, 409, 429})
_KEY_HELP = (
    "Run `%cowork login` in a cell (it asks without showing the key) or paste it into the "
    "key field of the Loom sidebar: either keeps it outside the notebook. Or run "
    "`export ANTHROPIC_API_KEY=...` in the terminal before starting Jupyter. Then try again"
)


@dataclass(frozen=True)
class Failure:
    """One failed attempt, as plain data."""

    kind: FailureKind
    status: int | None = None
    error_type: str | None = None
    api_message: str = ""
    retry_after: float | None = None
    request_id: str | None = None
    detail: str = ""

    @property
    def mid_stream(self) -> bool:
        """The answer had started (an SSE error event comes with status 200)."""
        return self.status == 200 or self.kind in ("stall", "dropped", "incomplete")

    @property
    def retryable_before_stream(self) -> bool:
        """Worth sending again when it happened before the stream started."""
        if self.kind in ("connection", "timeout"):
            return True
        status = self.status or 0
        return self.kind == "status" and (status in _RETRYABLE_STATUSES or status >= 500)

    @property
    def overloaded(self) -> bool:
        """An overload (529, or an ``overloaded_error`` event)."""
        return self.kind == "status" and _category(self) == "overloaded"


@dataclass(frozen=True)
class ErrorContext:
    """What the messages mention besides the failure itself."""

    model: str
    endpoint: str = "https://api.anthropic.com"
    request_timeout: float = 600.0
    idle_timeout: float = 120.0
    retries: int = 0
    secrets: tuple[str, ...] = ()


def to_error(failure: Failure, context: ErrorContext) -> ModelError:
    """The LoomError for ``failure``, its message free of any secret."""
    error = _build(failure, context)
    message = redact(str(error), context.secrets) + _suffix(failure, context)
    error.args = (message,)
    return error


def describe(failure: Failure) -> str:
    """A few words for a retry notice: ``overloaded (529)``, ``connection failed``..."""
    if failure.kind != "status":
        return {"connection": "connection failed", "timeout": "request timed out"}.get(
            failure.kind, failure.kind
        )
    words = {"rate": "rate-limited", "overloaded": "overloaded", "server": "server error"}
    label = words.get(_category(failure), failure.error_type or "error")
    where = "mid-stream" if failure.status == 200 else str(failure.status)
    return f"{label} ({where})"


def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every secret (of 8+ characters) replaced by ``[redacted]``."""
    for secret in secrets:
        if len(secret) >= 8:
            text = text.replace(secret, "[redacted]")
    return text


def safe_endpoint(url: str) -> str:
    """``scheme://host[:port]/path`` of a base URL, without any user:password@ part."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}".rstrip("/")


def _suffix(failure: Failure, context: ErrorContext) -> str:
    notes = []
    if context.retries:
        notes.append(f"after {context.retries} retr{'y' if context.retries == 1 else 'ies'}")
    if failure.request_id:
        notes.append(f"request id {failure.request_id}")
    return f" ({'; '.join(notes)})" if notes else ""


def _build(failure: Failure, context: ErrorContext) -> ModelError:
    if failure.kind == "status":
        return _status_error(failure, context)
    return _transport_error(failure, context)


def _transport_error(failure: Failure, context: ErrorContext) -> ModelError:
    kind = failure.kind
    if kind == "missing_key":
        other = f" and other credentials failed to load: {failure.detail}" if failure.detail else ""
        return MissingApiKeyError(
            f"No Anthropic API key is set (none in the environment or saved by %cowork login"
            f"{other}). " + _KEY_HELP + ". "
            "To use Amazon Bedrock or Google Vertex AI instead, set `provider` in loom.yaml "
            "or LOOM_PROVIDER."
        )
    if kind == "connection":
        detail = failure.detail or "no connection"
        return ModelConnectionError(
            f"Could not reach the Anthropic API at {context.endpoint} ({detail}). Check the "
            "network connection (and ANTHROPIC_BASE_URL if you set it), then try again."
        )
    if kind == "timeout":
        return ModelTimeoutError(
            f"The Anthropic API did not answer within {context.request_timeout:g} s. Try again; "
            "if long requests keep timing out, raise request_timeout_seconds in loom.yaml "
            "(or LOOM_REQUEST_TIMEOUT_SECONDS)."
        )
    if kind == "stall":
        return ModelTimeoutError(
            f"The answer stalled: nothing arrived for {context.idle_timeout:g} s, so the stream "
            "was stopped. What arrived before is kept. Try again; on a slow network raise "
            "stream_idle_timeout_seconds in loom.yaml (or LOOM_STREAM_IDLE_TIMEOUT_SECONDS)."
        )
    if kind == "dropped":
        return StreamInterruptedError(
            "The connection to the Anthropic API broke in the middle of the answer "
            f"({failure.detail or 'connection closed'}). What arrived before is kept; try again."
        )
    if kind == "incomplete":
        return StreamInterruptedError(
            "The answer ended before it was complete (the stream closed without message_stop). "
            "What arrived is kept; try again."
        )
    return ModelAPIError(
        f"The Anthropic API sent a response that could not be read ({failure.detail}). "
        "Try again; if it repeats, check ANTHROPIC_BASE_URL points at the Messages API."
    )


def _status_error(failure: Failure, context: ErrorContext) -> ModelError:
    category = _category(failure)
    said = _api_said(failure)
    if category == "auth":
        return AuthenticationError(
            f"The Anthropic API refused the API key{said}. It may be mistyped, revoked or "
            "from another organisation (ANTHROPIC_API_KEY wins over a key saved by "
            "%cowork login). " + _KEY_HELP + "."
        )
    if category == "permission":
        return AuthenticationError(
            f"The API key is not allowed to do this{said}. Check the key's workspace and "
            "permissions in the Anthropic Console, or use another key."
        )
    if category == "rate":
        return _rate_limited(failure, said)
    if category == "overloaded":
        return _overloaded(failure)
    if category == "too_large":
        return RequestTooLargeError(
            f"The request is too large for {context.model}'s context window{said}. Lower "
            "context_budget_tokens in loom.yaml (or LOOM_CONTEXT_BUDGET_TOKENS) so less history "
            "is sent, shorten the message, or start a new session."
        )
    return _other_status_error(failure, category, said, context)


def _rate_limited(failure: Failure, said: str) -> RateLimitedError:
    wait = failure.retry_after
    when = f"Wait {wait:g} s" if wait is not None else "Wait a minute"
    if failure.status == 200:
        return RateLimitedError(
            f"The Anthropic API rate-limited the answer mid-stream{said}. What arrived before "
            f"is kept. {when} and try again.",
            retry_after=wait,
        )
    return RateLimitedError(
        f"The Anthropic API is rate-limiting requests{said}. {when} and try again, or check "
        "your plan's rate limits in the Anthropic Console.",
        retry_after=wait,
    )


def _overloaded(failure: Failure) -> OverloadedError:
    if failure.status == 200:
        return OverloadedError(
            "The Anthropic API became overloaded in the middle of the answer. What arrived "
            "before is kept. Try again in a minute."
        )
    return OverloadedError(
        f"The Anthropic API is overloaded right now ({failure.status or 529} overloaded_error). "
        "Try again in a minute."
    )


def _other_status_error(
    failure: Failure, category: Category, said: str, context: ErrorContext
) -> ModelError:
    if category == "not_found":
        return ModelAPIError(
            f"The API does not know model {context.model!r}{said}. Set `model` in loom.yaml "
            "(or LOOM_MODEL) to an available model, e.g. sonnet, opus or haiku."
        )
    if category == "billing":
        return ModelAPIError(
            f"The Anthropic API refused the request for a billing reason{said}. Check the "
            "plan and credit balance in the Anthropic Console."
        )
    if category == "api_timeout":
        error: ModelError = ModelTimeoutError(f"The Anthropic API timed out{said}. Try again.")
    elif category == "invalid":
        error = ModelAPIError(f"The Anthropic API rejected the request{said}.")
    elif failure.status == 200:
        error = StreamInterruptedError(
            f"The Anthropic API reported an error in the middle of the answer{said}. What "
            "arrived before is kept; try again."
        )
    else:
        error = ModelAPIError(f"The Anthropic API failed{said}. Try again in a moment.")
        error.retryable = category == "server"
    return error


def _api_said(failure: Failure) -> str:
    parts = [str(failure.status)] if failure.status and failure.status != 200 else []
    if failure.error_type:
        parts.append(failure.error_type)
    head = " ".join(parts)
    message = failure.api_message.strip()
    if head and message:
        return f" ({head}: {message})"
    return f" ({head or message})" if head or message else ""


def _category(failure: Failure) -> Category:
    kind, status = failure.error_type or "", failure.status or 0
    by_type: dict[str, Category] = {
        "authentication_error": "auth",
        "permission_error": "permission",
        "rate_limit_error": "rate",
        "overloaded_error": "overloaded",
        "request_too_large": "too_large",
        "not_found_error": "not_found",
        "billing_error": "billing",
        "timeout_error": "api_timeout",
        "api_error": "server",
    }
    if kind == "invalid_request_error" and "prompt is too long" in failure.api_message.lower():
        return "too_large"
    if kind in by_type:
        return by_type[kind]
    by_status: dict[int, Category] = {
        401: "auth", 403: "permission", 429: "rate", 529: "overloaded", 413: "too_large",
        404: "not_found", 402: "billing", 408: "api_timeout", 504: "api_timeout",
        400: "invalid", 422: "invalid",
    }  # fmt: skip
    if status in by_status:
        return by_status[status]
    if kind == "invalid_request_error":
        return "invalid"
    return "server" if status >= 500 else "other"
