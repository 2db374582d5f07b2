"""The fake Messages API itself: wire format, script format, CLI form."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from typing import TYPE_CHECKING, Any

import pytest

from loom_jupyter.testing import FakeAnthropic
from loom_jupyter.testing.fake_script import parse_script

if TYPE_CHECKING:
    from pathlib import Path

TOOL_THEN_TEXT: list[Any] = [
    {
        "content": [
            {"type": "text", "text": "Let me check."},
            {
                "type": "tool_use",
                "id": "toolu_1",
                "name": "run_python",
                "input": {"code": "df.shape"},
            },
        ]
    },
    "The frame has 3 rows and 2 columns.",
]


def _post(
    base_url: str, path: str, body: dict[str, Any], headers: dict[str, str] | None = None
) -> Any:
    data = json.dumps(body).encode()
    all_headers = {
        "content-type": "application/json",
        "authorization": "Bearer sk-test",
        **(headers or {}),
    }
    req = urllib.request.Request(base_url + path, data=data, headers=all_headers, method="POST")
    return urllib.request.urlopen(req, timeout=5)


def _body(text: str = "hi", stream: bool = False) -> dict[str, Any]:
    return {
        "model": "claude-sonnet-5-5",
        "max_tokens": 50,
        "stream": stream,
        "messages": [{"role": "user", "content": text}],
    }


def _sse(raw: str) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for chunk in raw.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in chunk.split("\n"))
        events.append((lines["event"], json.loads(lines["data"])))
    return events


def test_json_reply_with_tool_use_then_text() -> None:
    with FakeAnthropic(TOOL_THEN_TEXT) as fake:
        first = json.load(_post(fake.base_url, "/v1/messages", _body()))
        second = json.load(_post(fake.base_url, "/v1/messages", _body()))
    assert first["stop_reason"] == "tool_use"
    assert first["content"][1] == {
        "type": "tool_use",
        "id": "toolu_1",
        "name": "run_python",
        "input": {"code": "df.shape"},
    }
    assert second["content"] == [{"type": "text", "text": "The frame has 3 rows and 2 columns."}]
    assert second["stop_reason"] == "end_turn"


def test_sse_stream_shape() -> None:
    with FakeAnthropic(TOOL_THEN_TEXT[:1]) as fake:
        response = _post(fake.base_url, "/v1/messages", _body(stream=True))
        assert response.headers["content-type"].startswith("text/event-stream")
        assert response.headers["request-id"].startswith("req_fake_")
        events = _sse(response.read().decode())
    names = [name for name, _ in events]
    assert names[0] == "message_start"
    assert names[-2:] == ["message_delta", "message_stop"]
    assert all(data["type"] == name for name, data in events)
    assert "usage" in events[0][1]["message"]
    assert "usage" in events[-2][1]
    tool_start = next(
        d
        for n, d in events
        if n == "content_block_start" and d["content_block"]["type"] == "tool_use"
    )
    assert tool_start["content_block"]["input"] == {}
    pieces = [
        d["delta"]["partial_json"]
        for n, d in events
        if n == "content_block_delta" and d["index"] == 1
    ]
    assert len(pieces) >= 2
    assert json.loads("".join(pieces)) == {"code": "df.shape"}


def test_echo_default_and_error_default() -> None:
    with FakeAnthropic() as fake:
        reply = json.load(_post(fake.base_url, "/v1/messages", _body("show me   the\nplot")))
    assert reply["content"][0]["text"] == "(fake Claude) You said: show me the plot"
    with FakeAnthropic(["one"], default="error") as fake:
        _post(fake.base_url, "/v1/messages", _body())
        with pytest.raises(urllib.error.HTTPError) as caught:
            _post(fake.base_url, "/v1/messages", _body())
        body = caught.value.read().decode()  # read while the server is up
    assert caught.value.code == 400
    assert "script is empty (1 entries used)" in body


def test_a_cleared_script_answers_the_next_request_with_what_comes_after_it() -> None:
    with FakeAnthropic(["left over", "also left"]) as fake:
        assert fake.clear_script() == 2
        assert fake.remaining == 0
        fake.add("this test's own")
        reply = json.load(_post(fake.base_url, "/v1/messages", _body()))
    assert reply["content"][0]["text"] == "this test's own"


def test_echo_names_a_tool_result() -> None:
    body = _body()
    body["messages"] = [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t", "name": "x", "input": {}}],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "t",
                    "content": [{"type": "text", "text": "42"}],
                }
            ],
        },
    ]
    with FakeAnthropic() as fake:
        reply = json.load(_post(fake.base_url, "/v1/messages", body))
    assert reply["content"][0]["text"] == "(fake Claude) You said: 42"


def test_responder_function_and_times() -> None:
    def responder(body: dict[str, Any]) -> str:
        return f"model was {body['model']}"

    with FakeAnthropic([{"content": ["twice"], "times": 2}], responder=responder) as fake:
        texts = [
            json.load(_post(fake.base_url, "/v1/messages", _body()))["content"][0]["text"]
            for _ in range(3)
        ]
    assert texts == ["twice", "twice", "model was claude-sonnet-5-5"]


def test_http_fault_has_error_body_request_id_and_retry_after() -> None:
    entry = {"fault": "http", "status": 429, "retry_after": 3}
    with FakeAnthropic([entry]) as fake:
        with pytest.raises(urllib.error.HTTPError) as caught:
            _post(fake.base_url, "/v1/messages", _body())
        body = json.loads(caught.value.read())  # while the server runs: it may still be sending
    error = caught.value
    assert error.code == 429
    assert error.headers["retry-after"] == "3"
    assert error.headers["request-id"].startswith("req_fake_")
    assert body["type"] == "error"
    assert body["error"]["type"] == "rate_limit_error"


def test_stream_faults_without_stream_answer_like_http() -> None:
    with (
        FakeAnthropic([{"fault": "sse_error"}]) as fake,
        pytest.raises(urllib.error.HTTPError) as caught,
    ):
        _post(fake.base_url, "/v1/messages", _body())
    assert caught.value.code == 529


def test_api_key_enforced_and_count_tokens_and_models() -> None:
    with FakeAnthropic(api_key="sk-right") as fake:
        with pytest.raises(urllib.error.HTTPError) as caught:
            _post(fake.base_url, "/v1/messages/count_tokens", _body())
        counted = json.load(
            _post(
                fake.base_url,
                "/v1/messages/count_tokens",
                _body("x" * 400),
                {"x-api-key": "sk-right", "authorization": ""},
            )
        )
        request = urllib.request.Request(
            fake.base_url + "/v1/models/claude-opus-5-5", headers={"x-api-key": "sk-right"}
        )
        model = json.load(urllib.request.urlopen(request, timeout=5))
        with pytest.raises(urllib.error.HTTPError) as missing:
            _post(fake.base_url, "/v1/nothing", _body(), {"authorization": "Bearer sk-right"})
        paths = [r.path for r in fake.requests]
    assert caught.value.code == 401
    assert counted["input_tokens"] > 100
    assert model["id"] == "claude-opus-5-5"
    assert model["max_input_tokens"] == 1_000_000
    assert missing.value.code == 404
    assert paths == [
        "/v1/messages/count_tokens",
        "/v1/messages/count_tokens",
        "/v1/models/claude-opus-5-5",
        "/v1/nothing",
    ]
    assert fake.message_requests == []


@pytest.mark.parametrize(
    ("item", "error"),
    [
        ({"fault": "explode"}, "script entry 1: unknown fault 'explode'"),
        ({"content": [{"type": "image"}]}, "script entry 1: unknown block type 'image'"),
        (42, "script entry 1: an entry is a string or an object"),
        ({"content": [{"type": "tool_use"}]}, "script entry 1: 'name'"),
    ],
)
def test_script_errors_name_the_entry(item: Any, error: str) -> None:
    with pytest.raises(ValueError, match=error):
        parse_script(["fine", item])


def test_command_line_form(tmp_path: Path) -> None:
    script, port_file, record = (
        tmp_path / "script.json",
        tmp_path / "port",
        tmp_path / "requests.jsonl",
    )
    script.write_text(json.dumps(TOOL_THEN_TEXT))
    command = [sys.executable, "-m", "loom_jupyter.testing.fake_anthropic", "--script", str(script)]
    command += ["--port-file", str(port_file), "--record", str(record)]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while not port_file.exists() and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.05)
        base_url = f"http://127.0.0.1:{int(port_file.read_text())}"
        events = _sse(_post(base_url, "/v1/messages", _body(stream=True)).read().decode())
        second = json.load(_post(base_url, "/v1/messages", _body()))
        echo = json.load(_post(base_url, "/v1/messages", _body("and now?")))
    finally:
        process.send_signal(signal.SIGTERM)
        code = process.wait(timeout=10)
    assert code == 0
    assert events[-1][0] == "message_stop"
    assert second["content"][0]["text"] == "The frame has 3 rows and 2 columns."
    assert echo["content"][0]["text"] == "(fake Claude) You said: and now?"
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    assert len(lines) == 3
    assert lines[0]["headers"]["authorization"] == "<redacted>"
    assert lines[0]["body"]["stream"] is True
