"""AnthropicModel: the Messages API through the official ``anthropic`` SDK.

The only module that imports ``anthropic``, and only when a client is first
needed (importing this module stays light). The client is
``AsyncAnthropic`` by default, ``AsyncAnthropicBedrock`` /
``AsyncAnthropicVertex`` when ``settings.provider`` says so; any compatible
endpoint works through ``ANTHROPIC_BASE_URL`` (read by the SDK).

Failures become :class:`~loom_jupyter.errors.ModelError` subclasses with a
message a person can act on (see :mod:`loom_jupyter.models.failures`).
Retries are bounded and visible: the SDK's own retries are switched off and
this module retries instead, so each retry is announced with a
:class:`~loom_jupyter.models.base.RetryNotice` event (and a log line, and
``on_retry`` for ``count_tokens``), and a server's ``retry-after`` is capped
at ``settings.retry_after_cap_seconds``:

- before the stream starts: up to ``settings.max_retries`` retries of
  connection errors, timeouts, 408/409/429 and 5xx/529;
- once it has started: exactly one retry of an overload (``overloaded_error``
  event), and only if no text or tool call has been yielded yet. Nothing
  else is retried mid-stream: the caller keeps the partial answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import logging
import os
import random
import time
from typing import TYPE_CHECKING, Any

import loom_jupyter.apikey as apikey
from loom_jupyter.errors import ModelAPIError, ModelError
from loom_jupyter.models.base import ModelEvent, ModelRequest, RetryNotice
from loom_jupyter.models.failures import ErrorContext, Failure, describe, safe_endpoint, to_error
from loom_jupyter.models.sdk_events import IncompleteStreamError, StreamMapper
from loom_jupyter.models.wire import count_tokens_params, request_params
from loom_jupyter.settings import Settings

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable


__all__ = ["AnthropicModel"]

log = logging.getLogger(__name__)
_MAX_BACKOFF_SECONDS = 8.0


class _Secret:
    """A string that never shows itself in a repr or str."""

    __slots__ = ("value",)

    def __init__(self, value: str) -> None:
        self.value = value

    def __repr__(self) -> str:
        return "<secret>"

    __str__ = __repr__


class _Budget:
    """Retries used so far for one request."""

    def __init__(self) -> None:
        self.before_stream = 0
        self.overload_retried = False

    @property
    def total(self) -> int:
        return self.before_stream + int(self.overload_retried)


class AnthropicModel:
    """A :class:`~loom_jupyter.models.base.Model` backed by the Anthropic Messages API.

    ``client`` may be a ready SDK client (it is used with its own retries
    switched off); otherwise one is built from ``settings`` on first use,
    with ``api_key``, else ``ANTHROPIC_API_KEY`` / ``ANTHROPIC_AUTH_TOKEN``, else the key
    ``%cowork login`` stored (:mod:`loom_jupyter.apikey`; a newly stored key rebuilds it).
    ``retry_backoff_seconds`` is the first backoff when the server gives no
    ``retry-after`` (doubling, at most 8 s, never past the cap).
    """

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        client: Any = None,
        api_key: str | None = None,
        retry_backoff_seconds: float = 0.5,
        on_retry: Callable[[RetryNotice], None] | None = None,
    ) -> None:
        self._settings = settings or Settings()
        self._given_client = client
        self._api_key = _Secret(api_key) if api_key else None
        self._client: Any = None
        self._from_store: _Secret | None = None  # the stored key the client was built with
        self._backoff = retry_backoff_seconds
        self._on_retry = on_retry

    def __repr__(self) -> str:
        return (
            f"AnthropicModel(model={self.name!r}, provider={self._settings.provider!r}, "
            f"endpoint={self._endpoint()!r})"
        )

    @property
    def name(self) -> str:
        """The model id from settings (requests carry their own ``model``)."""
        return self._settings.model

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Stream the answer to ``request`` (see the module docstring for retries)."""
        client = self._ensure_client()
        params = request_params(request)
        budget = _Budget()
        while True:
            mapper = StreamMapper()
            try:
                async with contextlib.aclosing(self._attempt(client, params, mapper)) as events:
                    async for event in events:
                        yield event
                return
            except Exception as exc:
                failure = self._failure(exc)
                notice = self._plan_retry(failure, mapper, budget)
                if notice is None:
                    raise self._error(failure, request, budget) from exc
            yield notice
            await asyncio.sleep(notice.wait_seconds)

    async def count_tokens(self, request: ModelRequest) -> int:
        """Input tokens of ``request``, counted by the API."""
        client = self._ensure_client()
        params = count_tokens_params(request)
        result = await self._call_with_retries(
            lambda: client.messages.count_tokens(**params), request
        )
        return int(result.input_tokens)

    async def context_window(self, model: str | None = None) -> int | None:
        """``max_input_tokens`` of ``model`` from the Models API (``None`` if unavailable)."""
        client = self._ensure_client()
        request = ModelRequest(model=model or self.name, system="", messages=())
        try:
            info = await self._call_with_retries(
                lambda: client.models.retrieve(request.model), request
            )
        except Exception:
            return None
        value = getattr(info, "max_input_tokens", None)
        return int(value) if value else None

    async def list_models(self) -> list[dict[str, Any]]:
        """Every model ``GET /v1/models`` lists (all pages), as the API's JSON objects.
        Raises on any failure (:func:`loom_jupyter.models.catalog.list_models` falls back)."""
        if self._settings.provider != "anthropic":
            raise ModelAPIError(f"{self._settings.provider} does not serve the Models API")
        client = self._ensure_client()
        request = ModelRequest(model=self.name, system="", messages=())
        listed: list[dict[str, Any]] = []
        try:
            async for info in client.models.list(limit=100):
                listed.append(dict(info.to_dict(mode="json")))
        except Exception as exc:
            failure = _failure_from(exc)
            if failure is None:
                raise
            raise self._error(failure, request, _Budget()) from exc
        return listed

    async def aclose(self) -> None:
        """Close the HTTP client this model built (a given client is left open)."""
        if self._client is not None and self._given_client is None:
            await self._client.close()
        self._client = None

    async def _attempt(
        self, client: Any, params: dict[str, Any], mapper: StreamMapper
    ) -> AsyncGenerator[ModelEvent, None]:
        async with client.messages.stream(**params) as sdk_stream:
            mapper.request_id = sdk_stream.request_id
            async for sdk_event in sdk_stream:
                event = mapper.map(sdk_event, sdk_stream.current_message_snapshot)
                if event is not None:
                    yield event
        yield mapper.finish()

    async def _call_with_retries(
        self, call: Callable[[], Awaitable[Any]], request: ModelRequest
    ) -> Any:
        budget = _Budget()
        while True:
            try:
                return await call()
            except Exception as exc:
                failure = self._failure(exc)
                notice = self._plan_retry(failure, StreamMapper(), budget)
                if notice is None:
                    raise self._error(failure, request, budget) from exc
            if self._on_retry is not None:
                self._on_retry(notice)
            await asyncio.sleep(notice.wait_seconds)

    def _plan_retry(
        self, failure: Failure, mapper: StreamMapper, budget: _Budget
    ) -> RetryNotice | None:
        """The notice for retrying ``failure``, or ``None`` when it must be raised."""
        if failure.mid_stream:
            notice = self._overload_retry(failure, mapper, budget)
        else:
            notice = self._pre_stream_retry(failure, budget)
        if notice is not None:
            log.info("%s", notice.message)
        return notice

    def _pre_stream_retry(self, failure: Failure, budget: _Budget) -> RetryNotice | None:
        limit = self._settings.max_retries
        if not failure.retryable_before_stream or budget.before_stream >= limit:
            return None
        budget.before_stream += 1
        wait = failure.retry_after
        wait = self._backoff_for(budget) if wait is None else wait
        return RetryNotice(budget.before_stream, limit, self._capped(wait), describe(failure))

    def _overload_retry(
        self, failure: Failure, mapper: StreamMapper, budget: _Budget
    ) -> RetryNotice | None:
        # Once text or a tool call was shown, a retry would show it twice: never.
        if not failure.overloaded or mapper.shown or budget.overload_retried:
            return None
        budget.overload_retried = True
        return RetryNotice(1, 1, self._capped(self._backoff_for(budget)), describe(failure))

    def _backoff_for(self, budget: _Budget) -> float:
        backoff = min(self._backoff * 2.0 ** max(budget.total - 1, 0), _MAX_BACKOFF_SECONDS)
        return backoff * (1 - 0.25 * random.random())  # jitter, like the SDK's

    def _capped(self, wait: float) -> float:
        return max(0.0, min(wait, self._settings.retry_after_cap_seconds))

    def _error(self, failure: Failure, request: ModelRequest, budget: _Budget) -> ModelError:
        context = ErrorContext(
            model=request.model or self.name,
            endpoint=self._endpoint(),
            request_timeout=self._settings.request_timeout_seconds,
            idle_timeout=self._settings.stream_idle_timeout_seconds,
            retries=budget.total,
            secrets=self._secrets(),
        )
        return to_error(failure, context)

    def _secrets(self) -> tuple[str, ...]:
        candidates = [self._api_key.value if self._api_key else None, apikey.known_key()]
        candidates += [os.environ.get(name) for name in apikey.ENV_NAMES]
        if self._client is not None:
            candidates += [
                getattr(self._client, "api_key", None),
                getattr(self._client, "auth_token", None),
            ]
        return tuple(sorted({c for c in candidates if c}, key=len, reverse=True))

    def _endpoint(self) -> str:
        client = self._client or self._given_client
        if client is not None:
            return safe_endpoint(str(client.base_url))
        return safe_endpoint(os.environ.get("ANTHROPIC_BASE_URL") or "https://api.anthropic.com")

    def _ensure_client(self) -> Any:
        if self._client is not None and self._stored_key_changed():
            self._client = None  # %cowork login (or the sidebar) saved another key, or none
        if self._client is None:
            self._client = self._build_client()
        return self._client

    def _stored_key_changed(self) -> bool:
        """The client was built with the stored key, and the store now holds another."""
        built = self._from_store
        return built is not None and apikey.known_key() != built.value

    def _build_client(self) -> Any:
        if self._given_client is not None:
            with_options = getattr(self._given_client, "with_options", None)
            return with_options(max_retries=0) if with_options else self._given_client
        key = self._api_key.value if self._api_key else None
        self._from_store = None
        if key is None and self._settings.provider == "anthropic" and not apikey.environment_key():
            stored = apikey.stored_key()  # the environment first, else %cowork login's key
            self._from_store = _Secret(stored) if stored else None
            key = stored
        return _build_sdk_client(self._settings, key)

    def _failure(self, exc: Exception) -> Failure:
        failure = _failure_from(exc)
        if failure is None:
            raise exc
        return failure


def _build_sdk_client(settings: Settings, api_key: str | None) -> Any:
    """The SDK client for ``settings.provider``, with the SDK's own retries off."""
    import anthropic

    request_timeout = settings.request_timeout_seconds
    timeout = anthropic.Timeout(
        request_timeout,
        read=settings.stream_idle_timeout_seconds,
        connect=min(10.0, request_timeout),
    )
    if settings.provider != "anthropic":
        return _build_cloud_client(settings, timeout)
    context = ErrorContext(model=settings.model, secrets=(api_key,) if api_key else ())
    try:
        if api_key:
            client = anthropic.AsyncAnthropic(api_key=api_key, timeout=timeout, max_retries=0)
        else:
            client = anthropic.AsyncAnthropic(timeout=timeout, max_retries=0)
    except anthropic.CredentialsError as exc:  # a profile or federation setup that fails to load
        raise to_error(Failure("missing_key", detail=str(exc)), context) from exc
    if client.api_key is None and client.auth_token is None and client.credentials is None:
        raise to_error(Failure("missing_key"), context)
    return client


def _build_cloud_client(settings: Settings, timeout: Any) -> Any:
    try:
        if settings.provider == "bedrock":
            from anthropic.lib.bedrock import AsyncAnthropicBedrock

            return AsyncAnthropicBedrock(timeout=timeout, max_retries=0)
        from anthropic.lib.vertex import AsyncAnthropicVertex

        return AsyncAnthropicVertex(timeout=timeout, max_retries=0)
    except (ValueError, ImportError) as exc:
        names = {"bedrock": "Amazon Bedrock", "vertex": "Google Vertex AI"}
        raise ModelAPIError(
            f"Could not set up the {names[settings.provider]} client: {exc} "
            "(or set provider: anthropic in loom.yaml / LOOM_PROVIDER to use the Anthropic API)."
        ) from exc


def _failure_from(exc: Exception) -> Failure | None:
    """Classify an SDK or transport exception (``None``: not an API failure)."""
    import anthropic
    import httpx2

    if isinstance(exc, anthropic.APIStatusError):
        retry_after = _retry_after(exc.response.headers) if exc.status_code != 200 else None
        message = exc.api_message or ""
        return Failure("status", exc.status_code, exc.type, message, retry_after, exc.request_id)
    if isinstance(exc, anthropic.APITimeoutError):
        return Failure("timeout")
    if isinstance(exc, anthropic.APIConnectionError):
        return Failure("connection", detail=str(exc.__cause__ or exc.message))
    if isinstance(exc, anthropic.APIResponseValidationError):
        return Failure("bad_response", status=exc.status_code, detail=exc.message)
    return _transport_failure(exc, httpx2)


def _transport_failure(exc: Exception, httpx2: Any) -> Failure | None:
    if isinstance(exc, httpx2.TimeoutException):
        return Failure("stall")
    if isinstance(exc, httpx2.RemoteProtocolError | httpx2.NetworkError):
        return Failure("dropped", detail=str(exc) or type(exc).__name__)
    if isinstance(exc, IncompleteStreamError):
        return Failure("incomplete")
    if isinstance(exc, TypeError) and "resolve authentication" in str(exc):
        return Failure("missing_key")
    if isinstance(exc, ValueError) and "Unable to parse tool parameter JSON" in str(exc):
        return Failure("bad_response", detail="a tool call's input was not valid JSON")
    return None


def _retry_after(headers: Any) -> float | None:
    """Seconds from ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date)."""
    with contextlib.suppress(TypeError, ValueError):
        return float(headers.get("retry-after-ms")) / 1000
    value = headers.get("retry-after")
    with contextlib.suppress(TypeError, ValueError):
        return float(value)
    if value:
        parsed = email.utils.parsedate_tz(value)
        if parsed is not None:
            return max(0.0, float(email.utils.mktime_tz(parsed)) - time.time())
    return None
