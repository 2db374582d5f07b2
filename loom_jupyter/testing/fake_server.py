"""The HTTP side of the fake Messages API: shared state, request handler, server.

See :mod:`loom_jupyter.testing.fake_anthropic` for the public class and the
script format. Standard library only.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import socket
import sys
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any, Literal, TypeAlias
from urllib.parse import parse_qs

from loom_jupyter.testing.fake_payloads import (
    SseEvent,
    default_models,
    message_json,
    model_json,
    models_page,
    partial_events,
    stream_events,
)
from loom_jupyter.testing.fake_script import (
    CacheSimulator,
    Entry,
    HttpFault,
    Reply,
    StreamFault,
    cache_control_problem,
    echo_reply,
    error_body,
    estimate_tokens,
    parse_entry,
)
from loom_jupyter.testing.fake_thinking import remember_thinking, thinking_problem

if TYPE_CHECKING:
    from collections import deque
    from collections.abc import Callable
    from pathlib import Path

__all__ = ["FakeServer", "RecordedRequest", "Responder", "ScriptItem", "ServerState", "cut"]

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
class ServerState:
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
    thinking: dict[str, tuple[Json, ...]] = field(default_factory=dict)  # tool_use id -> its
    served: int = 0
    ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    models: list[Json] = field(default_factory=default_models)
    gates: dict[str, threading.Event] = field(default_factory=dict)  # hold name -> open
    holding: dict[str, int] = field(default_factory=dict)  # hold name -> streams held there

    def gate(self, name: str) -> threading.Event:
        with self.lock:
            return self.gates.setdefault(name, threading.Event())

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


class FakeServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    state: ServerState

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that hangs up (a cancelled stream) is normal here, not worth a traceback.
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: FakeServer

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
    def state(self) -> ServerState:
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
        path, _, query = self.path.partition("?")
        if path.rstrip("/") == "/v1/models":
            with self.state.lock:
                models = list(self.state.models)
            try:
                self._json(200, models_page(models, parse_qs(query)))
            except ValueError as exc:
                self._error(400, "invalid_request_error", str(exc))
            return
        model_id = path.removeprefix("/v1/models/")
        if path.startswith("/v1/models/") and model_id:
            with self.state.lock:
                known = next((m for m in self.state.models if m.get("id") == model_id), None)
            self._json(200, known or model_json(model_id))
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
        problem = cache_control_problem(body) or thinking_problem(body, self.state.thinking)
        if problem is not None:
            self._error(400, "invalid_request_error", problem)
            return
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
        remember_thinking(self.state.thinking, reply.content)
        usage = reply.usage or self.state.cache.usage(body, _output_tokens(reply))
        usage = {"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, **usage}
        model, message_id = str(body.get("model", "")), f"msg_fake_{n:04d}"
        if not body.get("stream"):
            self._json(200, message_json(reply, message_id=message_id, model=model, usage=usage), n)
            return
        events = stream_events(reply, message_id=message_id, model=model, usage=usage)
        self._start_sse(n)
        delay = reply.delay or self.state.event_delay
        if reply.hold is not None:
            cut = _after_deltas(events, reply.hold_after)
            self._send_events(events[:cut], delay)
            self._hold(reply.hold)
            events = events[cut:]
        self._send_events(events, delay)
        self._end_chunks()

    def _hold(self, name: str) -> None:
        """Wait at the gate ``name`` until it is released (or the server stops)."""
        gate, state = self.state.gate(name), self.state
        with state.lock:
            state.holding[name] = state.holding.get(name, 0) + 1
        while not gate.wait(0.05) and not state.stopping.is_set():
            pass

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
        cut(self.connection)


def _after_deltas(events: list[SseEvent], count: int) -> int:
    """How many of ``events`` go out before a hold: up to the ``count``-th delta."""
    seen = 0
    for index, (name, _) in enumerate(events):
        if name == "content_block_delta":
            seen += 1
            if seen >= count:
                return index + 1
    return len(events)


def _output_tokens(reply: Reply) -> int:
    return max(
        1, estimate_tokens([block.get("text") or block.get("input") for block in reply.content])
    )


def cut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):  # already closed
        sock.shutdown(socket.SHUT_RDWR)
