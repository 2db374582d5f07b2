"""A fake Anthropic Messages API on 127.0.0.1, for tests, notebooks and browser tests.

Point the real ``anthropic`` SDK at it with ``ANTHROPIC_BASE_URL`` (any
``ANTHROPIC_API_KEY`` is accepted unless ``api_key=`` is given). It serves

- ``POST /v1/messages`` — JSON, or SSE when the body says ``"stream": true``;
- ``POST /v1/messages/count_tokens`` — ``{"input_tokens": n}`` (about 4 chars a token);
- ``GET /v1/models`` — the models of ``models=`` (default: Opus, Sonnet and Haiku 5.5),
  paginated as the API does (``limit``, ``after_id``/``before_id``; ``data``,
  ``has_more``, ``first_id``, ``last_id``);
- ``GET /v1/models/{id}`` — that model, or one with ``max_input_tokens`` 1,000,000;

and records every request (``fake.requests``: method, path, headers, parsed body).

In a test or notebook::

    from loom_jupyter.testing import FakeAnthropic

    with FakeAnthropic(script=[...]) as fake:
        os.environ["ANTHROPIC_BASE_URL"] = fake.base_url
        ...
        assert fake.message_requests[0].body["model"] == "claude-sonnet-5-5"

As a process (other tools start it and read the port from a file)::

    python -m loom_jupyter.testing.fake_anthropic --script script.json --port-file port.txt
    # also: --port N, --record requests.jsonl, --default echo|error, --delay S, --api-key KEY

The script
----------
A JSON list; each ``POST /v1/messages`` takes the next entry. When the script
is empty, the in-process ``responder(body)`` function is asked (if given and
it returns an entry), then the default: ``"echo"`` replies
``(fake Claude) You said: <last user message>`` so walkthroughs run without a
script; ``"error"`` answers HTTP 400 saying the script ran out.

Entries:

``"some text"``
    A text reply (``end_turn``).
``{"content": [BLOCK, ...], "stop_reason": ..., "usage": {...}, "model": ..., "delay": s}``
    A reply. A BLOCK is ``"text"``, ``{"type": "text", "text": ...}`` or
    ``{"type": "tool_use", "id": "toolu_1", "name": ..., "input": {...}}`` (id
    optional). Server tools (``web_search``, ``web_fetch``) too:
    ``{"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input":
    {...}}`` (its input streams like a tool call's), ``{"type": "web_search_tool_result",
    "tool_use_id": ..., "content": [...]}`` or ``web_fetch_tool_result`` (sent whole), and
    text with ``"citations": [...]`` (streamed as ``citations_delta`` events before the
    text). ``stop_reason`` defaults to ``tool_use`` when a tool is called,
    else ``end_turn`` (any API value works: ``pause_turn``, ``max_tokens``,
    ``refusal``...). ``usage`` defaults to an estimate with simulated prompt
    caching (the prefix up to the last ``cache_control`` is written once, then
    read). ``delay`` pauses between SSE events. Text streams two words per
    delta; tool input as about three ``input_json_delta`` pieces. ``"hold": NAME``
    (with ``"hold_after": n``, default 1) stops a stream after its first ``n`` deltas
    until ``fake.release(NAME)``; ``fake.held(NAME)`` counts the streams waiting there
    (a turn that is surely running, with no timing).
``{"fault": "http", "status": 429, "retry_after": 2, "error_type": ..., "message": ...}``
    An HTTP error (any status; the error type defaults from the status:
    401 authentication_error, 413 request_too_large, 429 rate_limit_error,
    500 api_error, 529 overloaded_error...). ``retry_after`` sets the header.
``{"fault": "sse_error", "after_deltas": 2, "error_type": "overloaded_error", "message": ...}``
    A stream that starts (status 200), sends ``after_deltas`` text deltas,
    then an ``event: error``.
``{"fault": "drop", "after_deltas": 2}``
    The connection is cut mid-stream (no final chunk).
``{"fault": "stall", "after_deltas": 1, "seconds": 30}``
    The stream goes silent for ``seconds`` (longer than the client's read
    timeout), then the connection is cut.
``{"fault": "truncate", "after_deltas": 2}``
    The stream ends cleanly but without ``message_delta`` / ``message_stop``.
``{"fault": "hang", "seconds": 30}``
    No answer at all (not even headers) for ``seconds``, then the connection
    is cut: a request timeout before the stream starts.

Any entry may carry ``"times": n`` to repeat it. Mid-stream faults also take
``"text"`` (the partial answer they stream), or ``"content": [BLOCK, ...]``
to stream whole blocks first (say, a complete tool call) and fail after them.
Without ``"stream": true`` a stream fault answers like the matching HTTP
failure (``sse_error``: status 529 or 500; ``drop``/``stall``: the connection
is cut).

Example — a tool call, then the answer after the tool result comes back::

    [
      {"content": [{"type": "text", "text": "Let me check."},
                   {"type": "tool_use", "id": "toolu_1", "name": "run_python",
                    "input": {"code": "df.shape"}}]},
      "The frame has 3 rows and 2 columns."
    ]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import sys
import threading
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from loom_jupyter.testing.fake_script import parse_script
from loom_jupyter.testing.fake_server import (
    FakeServer,
    Handler,
    RecordedRequest,
    Responder,
    ScriptItem,
    ServerState,
    cut,
)

if TYPE_CHECKING:
    from collections.abc import Sequence
    from types import FrameType, TracebackType

__all__ = ["FakeAnthropic", "RecordedRequest", "Responder", "ScriptItem", "main"]


class FakeAnthropic:
    """The fake Messages API server (see the module docstring for the script format)."""

    def __init__(
        self,
        script: Sequence[ScriptItem] = (),
        *,
        responder: Responder | None = None,
        default: Literal["echo", "error"] = "echo",
        api_key: str | None = None,
        event_delay: float = 0.0,
        port: int = 0,
        record_path: Path | None = None,
        models: Sequence[dict[str, Any]] | None = None,
    ) -> None:
        entries = deque(parse_script(list(script)))
        self._state = ServerState(entries, responder, default, api_key, event_delay, record_path)
        if models is not None:
            self._state.models = [dict(m) for m in models]
        self._server = FakeServer(("127.0.0.1", port), Handler)
        self._server.state = self._state
        self._thread: threading.Thread | None = None

    def __repr__(self) -> str:
        return f"FakeAnthropic(base_url={self.base_url!r}, remaining={self.remaining})"

    @property
    def port(self) -> int:
        """The TCP port it listens on."""
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """What to put in ``ANTHROPIC_BASE_URL``."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received, in order."""
        with self._state.lock:
            return list(self._state.requests)

    @property
    def message_requests(self) -> list[RecordedRequest]:
        """Only the ``POST /v1/messages`` requests."""
        return [r for r in self.requests if r.method == "POST" and r.path == "/v1/messages"]

    @property
    def remaining(self) -> int:
        """Script entries not yet used."""
        with self._state.lock:
            return len(self._state.script)

    def held(self, name: str) -> int:
        """How many streams have stopped at the hold ``name`` (released or not)."""
        with self._state.lock:
            return self._state.holding.get(name, 0)

    def release(self, name: str) -> None:
        """Let the streams held at ``name`` (and later ones) finish."""
        self._state.gate(name).set()

    def set_models(self, models: Sequence[dict[str, Any]]) -> None:
        """What ``GET /v1/models`` lists from now on (the API's model objects)."""
        with self._state.lock:
            self._state.models = [dict(m) for m in models]

    def add(self, *items: ScriptItem) -> None:
        """Append entries to the script."""
        entries = parse_script(list(items))
        with self._state.lock:
            self._state.script.extend(entries)

    def clear_script(self) -> int:
        """Drop the script entries not yet used; returns how many there were."""
        with self._state.lock:
            dropped = len(self._state.script)
            self._state.script.clear()
        return dropped

    def start(self) -> FakeAnthropic:
        """Serve in a background thread."""
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.02,), name="fake-anthropic", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, cut open connections and end stalls."""
        self._state.stopping.set()
        self._server.shutdown()
        self._server.server_close()
        with self._state.lock:
            open_sockets = list(self._state.connections)
        for sock in open_sockets:
            cut(sock)
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeAnthropic:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m loom_jupyter.testing.fake_anthropic``: serve until killed."""
    args = _parser().parse_args(argv)
    script = json.loads(Path(args.script).read_text(encoding="utf-8")) if args.script else []
    fake = FakeAnthropic(
        script,
        default=args.default,
        api_key=args.api_key,
        event_delay=args.delay,
        port=args.port,
        record_path=Path(args.record) if args.record else None,
    )
    signal.signal(signal.SIGTERM, _interrupt)
    with fake:
        if args.port_file:
            _write_atomically(Path(args.port_file), str(fake.port))
        print(f"fake Anthropic API at {fake.base_url}", file=sys.stderr, flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description="A fake Anthropic Messages API on 127.0.0.1.")
    parser.add_argument(
        "--script", help="JSON file: a list of script entries (see the module docs)"
    )
    parser.add_argument(
        "--port", type=int, default=0, help="port to listen on (default: a free one)"
    )
    parser.add_argument("--port-file", help="write the port to this file once listening")
    parser.add_argument("--record", help="append every request as a JSON line to this file")
    parser.add_argument("--default", choices=("echo", "error"), default="echo")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds between SSE events")
    parser.add_argument("--api-key", help="accept only this key (default: any)")
    return parser


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def _write_atomically(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


if __name__ == "__main__":
    raise SystemExit(main())
