"""Describing values within a time and a size limit (security review R10).

A value's own code (``repr``, ``shape``...) that never returns ends the call with an error
naming the value and the method; the caller waits at most the limit. The blocking values
here wait on an event each test sets at its end, so no stopped worker outlives its test
(a worker blocked in C, like ``time.sleep``, cannot be stopped from Python). Timeouts are
guards against a hang, never measured.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from typing import TYPE_CHECKING

import pytest

from loom_jupyter.errors import ToolError
from loom_jupyter.tools import namespace_reader
from loom_jupyter.tools.local_kernel import LocalKernel
from loom_jupyter.tools.namespace_reader import DescribeLimits, DescribeTimeout, NamespaceReader

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from .conftest import Caller

LIMIT = 0.5
GUARD = 30.0


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """Set at the test's end: every value blocked on it returns, its worker ends."""
    event = threading.Event()
    yield event
    event.set()


def blocked_repr(release: threading.Event) -> object:
    """A value whose ``repr`` blocks in C (like ``time.sleep``) until ``release``."""

    class Blocked:
        def __repr__(self) -> str:
            release.wait(GUARD)
            return "Blocked()"

    return Blocked()


class Spinning:
    """A value whose ``repr`` loops in Python until it is stopped."""

    def __repr__(self) -> str:
        deadline = time.monotonic() + GUARD
        while time.monotonic() < deadline:
            pass
        return "Spinning()"


def describers() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name == "loom-describe"}


def wait_until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + GUARD
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


async def test_a_repr_that_never_returns_ends_the_call_with_a_clear_error(
    release: threading.Event, call: Caller
) -> None:
    """The mechanism behind tests/kernel/test_describe_limits.py (R10), in process."""
    kernel = LocalKernel(limits=DescribeLimits(seconds=LIMIT))
    kernel.namespace.update(s=blocked_repr(release), ok=[1, 2])
    call.ctx = dataclasses.replace(call.ctx, kernel=kernel)

    out = await call("inspect_variables", name="s")
    assert out.is_error
    text = out.text_content
    assert f"describing `s` took longer than {LIMIT:g} s: its repr did not finish" in text
    assert "stopped in `__repr__`" in text
    assert "the kernel is free" in text

    again = await call("inspect_variables", name="s")  # at once: not tried again
    assert again.is_error
    assert "not described again" in again.text_content
    table = await call("inspect_variables")
    assert not table.is_error
    rows = {line.split()[0]: line for line in table.text_content.splitlines()[1:]}
    assert "[1, 2]" in rows["ok"]
    assert "(not shown: its repr did not finish when tried earlier)" in rows["s"]
    assert (await call("inspect_variables", name="ok")).text_content.startswith("ok: list len 2")


async def test_a_spinning_repr_is_stopped_and_its_worker_ends() -> None:
    before = describers()
    reader = NamespaceReader(DescribeLimits(seconds=LIMIT))
    with pytest.raises(DescribeTimeout, match="its repr did not finish"):
        reader.describe("spin", Spinning())
    wait_until(lambda: describers() <= before, "the stopped worker to end")


async def test_a_hanging_shape_names_the_shape(release: threading.Event) -> None:
    class Lazy:
        @property
        def shape(self) -> tuple[int, int]:
            release.wait(GUARD)
            return (1, 1)

    reader = NamespaceReader(DescribeLimits(seconds=LIMIT))
    with pytest.raises(DescribeTimeout, match=r"its `shape` did not finish"):
        reader.describe("lazy", Lazy())


async def test_a_listing_goes_on_past_a_value_whose_preview_hangs(
    release: threading.Event,
) -> None:
    limits = DescribeLimits(seconds=GUARD, preview_seconds=LIMIT)
    kernel = LocalKernel(limits=limits)
    kernel.namespace.update(a=1, m=blocked_repr(release), n=[blocked_repr(release)], z="last")
    first = {v.name: v for v in await kernel.list_variables()}
    assert first["a"].summary == "1"
    assert first["m"].summary == f"(not shown: its repr did not finish within {LIMIT:g} s)"
    assert first["m"].type_name == "Blocked"
    assert first["n"].summary == f"(not shown: its repr did not finish within {LIMIT:g} s)"
    assert first["z"].summary == "'last'"
    again = {v.name: v for v in await kernel.list_variables()}  # remembered: not tried again
    assert again["m"].summary == "(not shown: its repr did not finish when tried earlier)"
    assert again["z"].summary == "'last'"


async def test_a_listing_that_reaches_its_time_limit_shows_the_rest_by_type(
    release: threading.Event,
) -> None:
    kernel = LocalKernel(limits=DescribeLimits(seconds=LIMIT, preview_seconds=GUARD))
    kernel.namespace.update(m=blocked_repr(release), z="last")  # m never finishes: no race
    first = {v.name: v for v in await kernel.list_variables()}
    note = "(not previewed: the listing reached its time limit)"
    assert first["m"].summary == note  # not known to hang: it ran out of the listing's time
    assert first["m"].type_name == "Blocked"
    assert first["z"].summary == note
    assert first["z"].type_name == "str"


async def test_fingerprints_of_a_value_that_hangs_are_present_but_unchecked(
    release: threading.Event,
) -> None:
    kernel = LocalKernel(limits=DescribeLimits(seconds=LIMIT))
    kernel.namespace.update(held=[blocked_repr(release)])
    assert await kernel.fingerprints(["held", "missing"]) == {"held": None}


async def test_too_many_blocked_workers_stop_describing_until_they_end(
    release: threading.Event, monkeypatch: pytest.MonkeyPatch
) -> None:
    wait_until(lambda: not describers(), "earlier tests' workers to end")
    monkeypatch.setattr(namespace_reader, "MAX_STUCK_WORKERS", 1)
    reader = NamespaceReader(DescribeLimits(seconds=LIMIT))
    with pytest.raises(DescribeTimeout):
        reader.describe("first", blocked_repr(release))
    with pytest.raises(DescribeTimeout, match="earlier descriptions of values are still running"):
        reader.describe("other", [1])
    assert reader.variables({"other": [1]})[0].summary.startswith("(not previewed")
    release.set()
    wait_until(lambda: not describers(), "the blocked worker to end")
    assert reader.describe("other", [1]) == "other: list len 1\n[1]"


async def test_a_huge_repr_is_cut_to_the_size_limit_saying_how_long_it_was() -> None:
    class Verbose:
        def __repr__(self) -> str:
            return "v" * 4_000_000

    reader = NamespaceReader(DescribeLimits(repr_chars=500, detail_chars=800))
    text = reader.describe("big", Verbose())
    assert text.startswith("big: Verbose\n" + "v" * 500 + " ...")
    assert "[repr cut: 4,000,000 characters, the first 500 shown]" in text
    assert len(text) < 800
    whole = NamespaceReader(DescribeLimits(repr_chars=10_000, detail_chars=800))
    long_text = whole.describe("s", "x" * 5000)
    size = len("s: str len 5000\n") + 5002
    assert long_text.endswith(f"\n[description cut: {size:,} characters, the first 800 shown]")
    assert len(long_text) < 900


async def test_unknown_names_are_listed_without_running_any_value(
    release: threading.Event,
) -> None:
    kernel = LocalKernel(limits=DescribeLimits(seconds=LIMIT))
    kernel.namespace.update(held=blocked_repr(release), other=2)
    with pytest.raises(ToolError, match=r"No variable named 'nope'.*Variables: held, other\."):
        await kernel.describe_variable("nope")


async def test_a_secret_at_the_repr_cut_is_redacted_not_cut_in_half(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    secret = "CanarySecretValue-0123456789abcdefghijklmnopqrstuvwxyz"
    monkeypatch.setenv("SERVICE_TOKEN", secret)

    class Leaky:
        def __repr__(self) -> str:
            return "v" * 490 + secret + "w" * 1000

    text = NamespaceReader(DescribeLimits(repr_chars=500)).describe("leaky", Leaky())
    assert "[repr cut: " in text
    assert secret[:8] not in text
