"""Web search / fetch and the model's limits on the wire, against the fake Messages API
(real SDK, strict): server tools only when loom.yaml turns them on, a ``pause_turn``
continued with the paused content exactly as it came, citations shown as a sources list,
and ``max_tokens`` and the window's budget following the model."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from loom_jupyter.engine.events import TextDelta, TurnDone
from loom_jupyter.messages import ServerBlock, TextBlock, blocks_from_json, blocks_to_json
from loom_jupyter.models.catalog import list_models
from loom_jupyter.models.estimate import estimate_blocks_tokens, estimate_tokens

from .conftest import collect

if TYPE_CHECKING:
    from loom_jupyter.testing.fake_anthropic import FakeAnthropic

    from .conftest import FakeApi, OpenSession

SEARCH_USE = {
    "type": "server_tool_use",
    "id": "srvtoolu_01",
    "name": "web_search",
    "input": {"query": "pandas 3 release date"},
}
SEARCH_RESULT = {
    "type": "web_search_tool_result",
    "tool_use_id": "srvtoolu_01",
    "content": [
        {
            "type": "web_search_result",
            "url": "https://pandas.pydata.org/docs/whatsnew/v3.0.0.html",
            "title": "What's new in 3.0.0",
            "encrypted_content": "EqkCCkYIBxgCKkD...",
            "page_age": None,
        }
    ],
}
CITATION = {
    "type": "web_search_result_location",
    "url": "https://pandas.pydata.org/docs/whatsnew/v3.0.0.html",
    "title": "What's new in 3.0.0",
    "encrypted_index": "Eo8BCioIAhgB...",
    "cited_text": "pandas 3.0.0 was released on ...",
}
FETCH_USE = {
    "type": "server_tool_use",
    "id": "srvtoolu_02",
    "name": "web_fetch",
    "input": {"url": "https://example.com/notes"},
}
FETCH_RESULT = {
    "type": "web_fetch_tool_result",
    "tool_use_id": "srvtoolu_02",
    "content": {
        "type": "web_fetch_result",
        "url": "https://example.com/notes",
        "retrieved_at": "2026-11-20T10:00:00Z",
        "content": {
            "type": "document",
            "source": {"type": "text", "media_type": "text/plain", "data": "Release notes."},
            "title": "Notes",
            "citations": {"enabled": True},
        },
    },
}
PAUSED = {"content": [SEARCH_USE, SEARCH_RESULT], "stop_reason": "pause_turn"}
ANSWER = {
    "content": [
        {"type": "text", "text": "It came out in 2026.", "citations": [CITATION]},
    ]
}


def bodies(server: FakeAnthropic) -> list[dict[str, Any]]:
    return [r.body for r in server.message_requests if r.body is not None]


def tool_types(body: dict[str, Any]) -> list[str]:
    return [t.get("type", "custom") for t in body.get("tools") or []]


async def test_server_tools_are_sent_only_when_turned_on(
    fake_api: FakeApi, open_session: OpenSession
) -> None:
    model, server = fake_api.model(["plain", "searched"])
    off = await open_session(model)
    await collect(off, "hello")
    assert not {"web_search_20250305", "web_fetch_20250910"} & set(tool_types(bodies(server)[0]))

    on = await open_session(
        model, owner="other", resume=False, web_search=True, web_fetch=True, web_fetch_max_uses=2
    )
    await collect(on, "hello again")
    tools = bodies(server)[1]["tools"]
    assert tools[-2:] == [
        {"type": "web_search_20250305", "name": "web_search", "max_uses": 5},
        {
            "type": "web_fetch_20250910",
            "name": "web_fetch",
            "max_uses": 2,
            "citations": {"enabled": True},
        },
    ]
    assert tools[0]["name"] != "web_search"  # after our own tools: the cached prefix holds


async def test_a_paused_turn_is_continued_with_its_content_as_it_came(
    fake_api: FakeApi, open_session: OpenSession
) -> None:
    model, server = fake_api.model([PAUSED, ANSWER, "You're welcome."])
    session = await open_session(model, web_search=True)

    events = await collect(session, "when did pandas 3 come out?")

    assert isinstance(events[-1], TurnDone), events[-1]
    first, second = bodies(server)
    paused = second["messages"][-1]
    assert paused["role"] == "assistant"
    assert paused["content"] == [SEARCH_USE, SEARCH_RESULT]  # byte for byte, nothing added
    # Before it, the person's message and the turn's tail (the session state), as before.
    asked, tail = second["messages"][0], second["messages"][-2]
    assert [m["role"] for m in second["messages"]] == ["user", "user", "assistant"]
    assert asked["content"][0]["text"] == "when did pandas 3 come out?"
    assert tail["content"] == first["messages"][-1]["content"][:1]
    assert tail["content"][0]["text"].startswith("<session_state>")

    # The archive holds the server blocks verbatim; the next turn sends them again.
    turns = await session.archive.get_turns(session.session_id)
    answers = [t for t in turns if t.role == "assistant"]
    assert answers[0].blocks == (ServerBlock(SEARCH_USE), ServerBlock(SEARCH_RESULT))
    assert answers[1].blocks == (TextBlock("It came out in 2026.", (CITATION,)),)
    await collect(session, "thanks")
    third = bodies(server)[2]
    (answer,) = [m for m in third["messages"] if m["role"] == "assistant"]  # one message
    assert answer["content"][:2] == [SEARCH_USE, SEARCH_RESULT]
    sent_back = answer["content"][2]
    assert sent_back["citations"] == [CITATION]
    assert sent_back["text"] == "It came out in 2026."


async def test_citations_are_shown_as_a_sources_list(
    fake_api: FakeApi, open_session: OpenSession
) -> None:
    model, server = fake_api.model([PAUSED, ANSWER])
    session = await open_session(model, web_search=True)

    events = await collect(session, "when did pandas 3 come out?")

    shown = "".join(e.text for e in events if isinstance(e, TextDelta))
    sources = (
        "**Sources:** [What's new in 3.0.0](https://pandas.pydata.org/docs/whatsnew/v3.0.0.html)"
    )
    assert shown == "It came out in 2026.\n\n" + sources + "\n"
    turns = await session.archive.get_turns(session.session_id)
    assert turns[-1].content == shown  # what the cell and the sidebar showed, on reload too
    assert len(bodies(server)) == 2


async def test_a_web_fetch_result_round_trips_the_archive(
    fake_api: FakeApi, open_session: OpenSession
) -> None:
    blocks = (ServerBlock(FETCH_USE), ServerBlock(FETCH_RESULT), TextBlock("Read it."))
    assert blocks_from_json(blocks_to_json(blocks)) == blocks
    # The window counts them: a page of results is not free.
    assert estimate_blocks_tokens(blocks[:2]) > estimate_tokens(str(FETCH_RESULT)) // 2
    model, _server = fake_api.model(
        [{"content": [FETCH_USE, FETCH_RESULT, {"type": "text", "text": "Read it."}]}]
    )
    session = await open_session(model, web_fetch=True)
    await collect(session, "read https://example.com/notes")
    turns = await session.archive.get_turns(session.session_id)
    assert turns[-1].blocks == blocks


def max_tokens_sent(server: FakeAnthropic) -> list[int]:
    return [int(body["max_tokens"]) for body in bodies(server)]


async def test_max_tokens_and_the_budget_follow_the_model(
    fake_api: FakeApi, open_session: OpenSession
) -> None:
    model, server = fake_api.model(["one", "two", "three"], model="claude-haiku-4-5")
    session = await open_session(model)
    assert session.window.config.budget_tokens == 200_000 - 8192  # the shipped table

    await collect(session, "hi")
    assert max_tokens_sent(server) == [64_000]

    # The Models API says otherwise: fetched (and cached), its limits apply from then on.
    server.set_models(
        [
            {
                "type": "model",
                "id": "claude-haiku-4-5",
                "display_name": "Claude Haiku 4.5",
                "created_at": "2025-10-01T00:00:00Z",
                "lifecycle": "active",
                "max_input_tokens": 150_000,
                "max_tokens": 32_000,
            }
        ]
    )
    listed = await session.environment.options.list_models()
    assert listed.source == "api"
    assert session.window.config.budget_tokens == 150_000 - 8192
    await collect(session, "again")
    assert max_tokens_sent(server)[-1] == 32_000

    # A limit set in loom.yaml (here: a keyword) wins over the model's.
    pinned = await open_session(model, owner="pinned", resume=False, max_output_tokens=1000)
    await collect(pinned, "pinned")
    assert max_tokens_sent(server)[-1] == 1000
    assert pinned.window.config.budget_tokens == 150_000 - 8192
    assert (await list_models(None)).source == "cache"


async def test_an_unknown_model_keeps_the_settings(
    fake_api: FakeApi, open_session: OpenSession
) -> None:
    model, server = fake_api.model(["ok"], model="claude-made-up-1")
    session = await open_session(model)
    await collect(session, "hi")
    assert max_tokens_sent(server) == [8192]
    assert session.window.config.budget_tokens == 120_000 - 8192


async def test_the_output_limit_message_names_the_limit_sent(
    fake_api: FakeApi, open_session: OpenSession
) -> None:
    model, _ = fake_api.model(
        [{"content": ["A long answer"], "stop_reason": "max_tokens"}], model="claude-haiku-4-5"
    )
    session = await open_session(model)
    done = (await collect(session, "write a lot"))[-1]
    assert isinstance(done, TurnDone)
    assert "max_tokens=64,000" in done.message  # the model's limit, not the 8,192 default
