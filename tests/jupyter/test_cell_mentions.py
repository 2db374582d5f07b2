"""@-mentions in a %cowork cell add the objects' summaries, as in the sidebar."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from loom_jupyter.host.services.mentions import MENTIONS_HEADER

if TYPE_CHECKING:
    from collections.abc import Callable

    from IPython.core.interactiveshell import InteractiveShell

    from loom_jupyter.testing import FakeAnthropic


def last_user_text(fake: FakeAnthropic) -> str:
    message = fake.message_requests[-1].body["messages"][-1]
    content = message["content"]
    return content if isinstance(content, str) else json.dumps(content)


def test_a_cell_turn_carries_the_mentioned_variable(
    shell: InteractiveShell, cowork: Callable[[str], str], fake_anthropic: FakeAnthropic
) -> None:
    shell.run_cell("regions = {'north': 12, 'south': 30}")
    fake_anthropic.add("North is smaller.")
    cowork("compare the two in @regions")
    sent = last_user_text(fake_anthropic)
    assert "compare the two in @regions" in sent
    assert MENTIONS_HEADER in sent
    assert "north" in sent.split(MENTIONS_HEADER, 1)[1]  # the summary of the dict


def test_a_decorator_or_an_address_is_no_mention(
    cowork: Callable[[str], str], fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.add("Fine.")
    cowork("why does @property fail here? mail me at a@b.org")
    assert MENTIONS_HEADER not in last_user_text(fake_anthropic)
