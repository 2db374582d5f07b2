"""After a restart, the banner offers to rebuild what the conversation used (issue 21)."""

from __future__ import annotations

from dataclasses import replace

from loom_jupyter.engine.state import SessionState
from loom_jupyter.host.services.restart import gone_variables, restart_offer
from loom_jupyter.lineage import ExecutionRecord, execution_record
from loom_jupyter.records import SessionInfo
from loom_jupyter.tools.base import VariableEffect

OLD = "box:41:boot/100:aaaa1111"  # the kernel the variables were made in
RELOADED = "box:41:boot/100:bbbb2222"  # the same process, the extension loaded again
NEW = "box:97:boot/900:cccc3333"  # a restarted kernel


def info(state: SessionState) -> SessionInfo:
    return SessionInfo(
        id="s1",
        notebook_path="nb.ipynb",
        title="t",
        model="m",
        status="active",
        parent_session_id=None,
        forked_at_turn=None,
        created_at="",
        last_active_at="",
        turn_count=3,
        input_tokens=0,
        output_tokens=0,
        cache_creation_tokens=0,
        cache_read_tokens=0,
        cost_usd=0.0,
        session_state=state.to_json(),
        lease_owner=None,
        lease_heartbeat=None,
    )


def used(*names: str, kernel: str = OLD) -> SessionInfo:
    state = SessionState(kernel_session=kernel)
    for turn, name in enumerate(names, 1):
        state = state.with_variables(turn, [VariableEffect(name, "int", None)])
    return info(state)


def records(
    *cells: str, effects: dict[int, tuple[str, ...]] | None = None
) -> list[ExecutionRecord]:
    made = []
    for n, code in enumerate(cells, 1):
        record = execution_record(
            code, source="cell", changed=(), namespace={}, duration_s=1.5, execution_count=n
        )
        made.append(replace(record, id=n, effects=(effects or {}).get(n, record.effects)))
    return made


def text_of(names: list[str], history: list[ExecutionRecord]) -> str | None:
    offer = restart_offer(names, history)
    return offer.text("%cowork rebuild") if offer is not None else None


def test_a_new_kernel_has_lost_what_the_conversation_used_newest_first() -> None:
    assert gone_variables(used("a", "b", "a"), NEW) == ["a", "b"]


def test_the_same_kernel_or_a_conversation_without_code_has_lost_nothing() -> None:
    assert gone_variables(used("a", "b"), RELOADED) == []
    assert gone_variables(used(kernel=""), NEW) == []
    assert gone_variables(info(SessionState()), NEW) == []


def test_the_offer_names_the_command_the_slice_and_its_time() -> None:
    history = records("a = 1", "noise = 2", "b = a + 1", "other = 3")
    offer = text_of(["b", "a", "lost"], history)
    assert offer is not None
    assert "gone with the previous kernel: b, a." in offer
    assert "`%cowork rebuild b a`" in offer
    assert "2 of 4 recorded executions, about 3.00 s" in offer
    assert "--yes" not in offer
    sidebar = restart_offer(["b", "a"], history)
    assert sidebar is not None
    assert "`/rebuild b a` makes them again" in sidebar.text("/rebuild")


def test_steps_with_side_effects_are_pointed_out() -> None:
    history = records("a = 1", "b = a + 1", effects={1: ("writes files",)})
    offer = text_of(["b"], history)
    assert offer is not None
    assert "1 of the steps may write files" in offer
    assert "--yes" in offer


def test_nothing_to_offer_without_records_that_make_the_names() -> None:
    assert restart_offer([], records("a = 1")) is None
    assert restart_offer(["zzz"], records("a = 1")) is None


def test_many_names_are_offered_eight_at_a_time() -> None:
    names = [f"v{n}" for n in range(11)]
    offer = text_of(names, records(*(f"{name} = 1" for name in names)))
    assert offer is not None
    assert f"`%cowork rebuild {' '.join(names[:8])}`" in offer
    assert "(and 3 more: `%cowork provenance NAME` for any)" in offer


def test_the_offer_keeps_every_rebuildable_name_to_narrow_later() -> None:
    """Issue 30: a sidebar opened later narrows the offer to the names still absent."""
    history = records("a = 1", "b = 2", "c = a + b")
    offer = restart_offer(["c", "zzz", "b"], history)
    assert offer is not None
    assert offer.wanted == ("c", "b")  # not "zzz": nothing makes it
    narrowed = restart_offer([n for n in offer.wanted if n != "c"], history)
    assert narrowed is not None
    assert (narrowed.names, narrowed.steps) == (("b",), 1)
