"""pytest fixtures for code that talks to Claude through loom_jupyter.

Enable them in a ``conftest.py``::

    pytest_plugins = ["loom_jupyter.testing.pytest_plugin"]

then::

    def test_my_tool(fake_anthropic):
        fake_anthropic.add(
            {"content": [{"type": "tool_use", "name": "run_python", "input": {"code": "1 + 1"}}]},
            "It is 2.",
        )
        ...  # anything using the anthropic SDK (or loom's AnthropicModel) now talks to the fake
        assert fake_anthropic.message_requests[-1].body["messages"][-1]["role"] == "user"

``fake_anthropic`` is a started :class:`~loom_jupyter.testing.FakeAnthropic`
with an empty script (so it echoes), and ``ANTHROPIC_BASE_URL`` /
``ANTHROPIC_API_KEY`` pointing at it for the test's duration.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from loom_jupyter.testing.fake_anthropic import FakeAnthropic

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["FAKE_API_KEY", "fake_anthropic"]

FAKE_API_KEY = "sk-ant-fake-key-for-tests-0000"
"""The key the fixture puts in ``ANTHROPIC_API_KEY`` (the fake accepts any key)."""


@pytest.fixture
def fake_anthropic(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    """A fake Messages API on 127.0.0.1, with the environment pointing at it."""
    with FakeAnthropic() as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_API_KEY)
        monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
        yield fake
