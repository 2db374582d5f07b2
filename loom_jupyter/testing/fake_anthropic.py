"""A fake Anthropic Messages API on 127.0.0.1, for tests, notebooks and browser tests.

Point the real ``anthropic`` SDK at it with ``ANTHROPIC_BASE_URL`` (any
``ANTHROPIC_API_KEY`` is accepted unless ``api_key=`` is given). It serves

- ``POST /v1/messages`` — JSON, or SSE when the body says ``"stream": true``;
- ``POST /v1/messages/count_tokens`` — ``{"input_tokens": n}`` (about 4 chars a token);
- ``GET /v1/models/{id}`` — a model with ``max_input_tokens`` 1,000,000;

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
    optional). ``stop_reason`` defaults to ``tool_use`` when a tool is called,
    else ``end_turn`` (any API value works: ``pause_turn``, ``max_tokens``,
    ``refusal``...). ``usage`` defaults to an estimate with simulated prompt
    caching (the prefix up to the last ``cache_control`` is written once, then
    read). ``delay`` pauses between SSE events. Text streams two words per
    delta; tool input as about three ``input_json_delta`` pieces.
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
import itertools
import json
import signal
import socket
import sys
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from loom_jupyter.testing.fake_payloads import (
    SseEvent,
    message_json,
    model_json,
    partial_events,
    stream_events,
)
from loom_jupyter.testing.fake_script import (
    CacheSimulator,
    Entry,
    HttpFault,
    Reply,
    StreamFault,
    echo_reply,
    error_body,
    estimate_tokens,
    parse_entry,
    parse_script,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from types import FrameType, TracebackType

__all__ = ["FakeAnthropic", "RecordedRequest", "main"]

Json: TypeAlias = dict[str, Any]
ScriptItem: TypeAlias = "str | Json | Entry"
Responder: TypeAlias = "Callable[[Json], ScriptItem | None]"
_SECRET_HEADERS = ("authorization", "x-api-key")


@dataclass(frozen=True)
class RecordedRequest:
    """One request the fake received (header names lower-cased)."""

    method: str
    path: str
    headers: dict[str, str]
    body: Json | None

    def redacted(self) -> Json:
        """JSON form with credential headers masked (for the ``--record`` file)."""
        headers = {
            k: ("<redacted>" if k in _SECRET_HEADERS else v) for k, v in self.headers.items()
        }
        return {"method": self.method, "path": self.path, "headers": headers, "body": self.body}


@dataclass
class _State:
    """Everything the request handlers share (guarded by ``lock``)."""

    script: deque[Entry]
    responder: Responder | None
    default: Literal["echo", "error"]
    api_key: str | None
    event_delay: float
    record_path: Path | None
    lock: threading.Lock = field(default_factory=threading.Lock)
    stopping: threading.Event = field(default_factory=threading.Event)
    requests: list[RecordedRequest] = field(default_factory=list)
    connections: set[socket.socket] = field(default_factory=set)
    cache: CacheSimulator = field(default_factory=CacheSimulator)
    served: int = 0
    ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def record(self, request: RecordedRequest) -> None:
        with self.lock:
            self.requests.append(request)
            if self.record_path is not None:
                with self.record_path.open("a", encoding="utf-8") as file:
                    file.write(json.dumps(request.redacted()) + "\n")

    def next_entry(self, body: Json) -> Entry | None:
        with self.lock:
            if self.script:
                self.served += 1
                return self.script.popleft()
        produced = self.responder(body) if self.responder is not None else None
        if produced is not None:
            return parse_entry(produced)
        return echo_reply(body) if self.default == "echo" else None

    def next_id(self) -> int:
        with self.lock:
            return next(self.ids)


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
    ) -> None:
        entries = deque(parse_script(list(script)))
        self._state = _State(entries, responder, default, api_key, event_delay, record_path)
        self._server = _Server(("127.0.0.1", port), _Handler)
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

    def add(self, *items: ScriptItem) -> None:
        """Append entries to the script."""
        entries = parse_script(list(items))
        with self._state.lock:
            self._state.script.extend(entries)

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
            _cut(sock)
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


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    state: _State

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that hangs up (a cancelled stream) is normal here, not worth a traceback.
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def setup(self) -> None:
        super().setup()
        # Small SSE writes must go out at once (Nagle + delayed ACK would add ~40 ms each).
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with self.server.state.lock:
            self.server.state.connections.add(self.connection)

    def finish(self) -> None:
        with self.server.state.lock:
            self.server.state.connections.discard(self.connection)
        with contextlib.suppress(OSError):  # the client went away; nothing to flush to
            super().finish()

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: tests and notebooks do not want access logs on stderr."""

    def do_GET(self) -> None:
        self._serve(lambda body: self._get_model())

    def do_POST(self) -> None:
        routes = {"/v1/messages": self._messages, "/v1/messages/count_tokens": self._count_tokens}
        path = self.path.split("?", 1)[0]
        self._serve(routes.get(path, lambda body: self._not_found()))

    @property
    def state(self) -> _State:
        return self.server.state

    def _serve(self, route: Callable[[Json | None], None]) -> None:
        body = self._read_body()
        headers = {k.lower(): v for k, v in self.headers.items()}
        self.state.record(RecordedRequest(self.command, self.path.split("?", 1)[0], headers, body))
        try:
            if not self._authorised(headers):
                self._error(401, "authentication_error", "invalid x-api-key")
            elif self.command == "POST" and body is None:
                self._error(400, "invalid_request_error", "the body is not a JSON object")
            else:
                route(body)
        except OSError:
            self.close_connection = True  # the client hung up mid-answer (a cancel)

    def _read_body(self) -> Json | None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            return None
        return parsed if isinstance(parsed, dict) else None

    def _authorised(self, headers: dict[str, str]) -> bool:
        expected = self.state.api_key
        if expected is None:
            return True
        given = headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")
        return given == expected

    def _get_model(self) -> None:
        model_id = self.path.split("?", 1)[0].removeprefix("/v1/models/")
        if self.path.startswith("/v1/models/") and model_id:
            self._json(200, model_json(model_id))
        else:
            self._not_found()

    def _not_found(self) -> None:
        self._error(
            404, "not_found_error", f"fake_anthropic does not serve {self.command} {self.path}"
        )

    def _count_tokens(self, body: Json | None) -> None:
        assert body is not None
        prompt = [body.get("tools") or [], body.get("system") or [], body.get("messages") or []]
        self._json(200, {"input_tokens": estimate_tokens(prompt)})

    def _messages(self, body: Json | None) -> None:
        assert body is not None
        entry = self.state.next_entry(body)
        if entry is None:
            used = self.state.served
            message = f"fake_anthropic: the script is empty ({used} entries used); add more entries"
            self._error(400, "invalid_request_error", message)
        elif isinstance(entry, HttpFault):
            self._error(entry.status, entry.error_type, entry.message, entry.retry_after)
        elif isinstance(entry, Reply):
            self._reply(entry, body)
        else:
            self._stream_fault(entry, body)

    def _reply(self, reply: Reply, body: Json) -> None:
        n = self.state.next_id()
        usage = reply.usage or self.state.cache.usage(body, _output_tokens(reply))
        usage = {"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, **usage}
        model, message_id = str(body.get("model", "")), f"msg_fake_{n:04d}"
        if not body.get("stream"):
            self._json(200, message_json(reply, message_id=message_id, model=model, usage=usage), n)
            return
        events = stream_events(reply, message_id=message_id, model=model, usage=usage)
        self._start_sse(n)
        self._send_events(events, reply.delay or self.state.event_delay)
        self._end_chunks()

    def _stream_fault(self, fault: StreamFault, body: Json) -> None:
        if fault.kind == "hang":
            self.state.stopping.wait(fault.seconds)
            self._drop()
            return
        if not body.get("stream"):
            self._json_fault(fault)
            return
        n = self.state.next_id()
        usage = self.state.cache.usage(body, 1)
        events = partial_events(
            fault, message_id=f"msg_fake_{n:04d}", model=str(body.get("model")), usage=usage
        )
        self._start_sse(n)
        self._send_events(events, self.state.event_delay)
        if fault.kind == "sse_error":
            self._send_events(
                [("error", error_body(fault.error_type, fault.message, f"req_fake_{n:04d}"))], 0
            )
            self._end_chunks()
        elif fault.kind == "truncate":
            self._end_chunks()
        else:
            if fault.kind == "stall":
                self.state.stopping.wait(fault.seconds)
            self._drop()

    def _json_fault(self, fault: StreamFault) -> None:
        if fault.kind == "sse_error":
            status = 529 if fault.error_type == "overloaded_error" else 500
            self._error(status, fault.error_type, fault.message)
        else:
            if fault.kind == "stall":
                self.state.stopping.wait(fault.seconds)
            self._drop()

    def _json(self, status: int, payload: Json, n: int | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", f"req_fake_{n or self.state.next_id():04d}")
        self.end_headers()
        self.wfile.write(data)

    def _error(
        self, status: int, error_type: str, message: str, retry_after: float | None = None
    ) -> None:
        n = self.state.next_id()
        data = json.dumps(error_body(error_type, message, f"req_fake_{n:04d}")).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", f"req_fake_{n:04d}")
        if retry_after is not None:
            self.send_header("retry-after", f"{retry_after:g}")
        self.end_headers()
        self.wfile.write(data)

    def _start_sse(self, n: int) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("request-id", f"req_fake_{n:04d}")
        self.end_headers()

    def _send_events(self, events: list[SseEvent], delay: float) -> None:
        for name, data in events:
            if delay:
                self.state.stopping.wait(delay)
            payload = f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(payload), payload))
            self.wfile.flush()

    def _end_chunks(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _drop(self) -> None:
        self.close_connection = True
        _cut(self.connection)


def _output_tokens(reply: Reply) -> int:
    return max(
        1, estimate_tokens([block.get("text") or block.get("input") for block in reply.content])
    )


def _cut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):  # already closed
        sock.shutdown(socket.SHUT_RDWR)


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
