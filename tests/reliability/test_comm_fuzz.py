"""A fuzz suite over the sidebar comm: 300+ hostile messages to one real kernel.

The messages come from :mod:`.fuzz` (seeded, so every run sends the same ones),
in batches by kind. Each message must be answered as the protocol says (an
error ``notice``, its documented reply, or a documented ignore); after each
batch a ``print(1)`` cell still runs, ``sessions`` is answered, the archive's
``PRAGMA integrity_check`` is ok, nothing was written outside the notebook's
folder, no junk became a prompt and every valid prompt was archived verbatim.
Times are recorded (``record_property`` and the printed line), never asserted:
the stall bound (:data:`.fuzz.STALL`) only turns a hang into a failure.
``benchmarks/comm_fuzz.py`` runs the same batches and commits the times.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from kernel.sidebar_wire import hello, start_wire

from loom_jupyter.testing import FakeAnthropic

from .fuzz import FIELDS, Batch, CommFuzz, Raw, comm_batches, outside_archives, responder

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

pytestmark = pytest.mark.kernel

BATCHES = comm_batches()


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The notebook's parents: path-like messages aim above the notebook, into here."""
    return tmp_path_factory.mktemp("fuzz-sandbox")


@pytest.fixture(scope="module")
def fuzz(sandbox: Path) -> Iterator[CommFuzz]:
    notebook = sandbox / "a" / "b" / "work" / "nb.ipynb"
    notebook.parent.mkdir(parents=True)
    with FakeAnthropic(responder=responder) as fake:
        wire = start_wire(fake, notebook, sandbox / "config", approval="auto")
        try:
            runner = CommFuzz(wire, notebook, sandbox)
            runner.open(hello())
            yield runner
        finally:
            wire.shutdown()


@pytest.fixture(scope="module")
def outside_before() -> set[str]:
    return outside_archives()


def test_the_generator_is_deterministic_and_covers_every_message_type() -> None:
    probes = [p for batch in BATCHES for p in batch.probes]
    assert len(probes) >= 300
    assert [p.label for b in comm_batches() for p in b.probes] == [p.label for p in probes]
    types = [p.data.get("type") for p in probes if isinstance(p.data, dict)]
    sent_types = {kind for kind in types if isinstance(kind, str)}
    assert all(kind in sent_types for kind in FIELDS)
    assert any(isinstance(p.data, Raw) for p in probes)  # deeper than the client encodes
    assert sum(p.prompt is not None for p in probes) >= 4  # valid sends are prompts
    assert len({p.client_id for p in probes if p.prompt is not None}) == sum(
        p.prompt is not None for p in probes
    )


@pytest.mark.parametrize("batch", BATCHES, ids=lambda b: b.kind)
def test_a_batch_of_hostile_messages_leaves_the_kernel_answering(
    batch: Batch,
    fuzz: CommFuzz,
    outside_before: set[str],
    record_property: Callable[[str, object], None],
) -> None:
    report = fuzz.run(batch)
    record_property("worst_answer_s", round(report.worst_answer, 3))
    record_property("print_1_s", round(report.print_seconds, 3))
    record_property("sessions_s", round(report.sessions_seconds, 3))
    print(  # the measured times, for the log
        f"{batch.kind}: {len(batch.probes)} messages, {report.count('notice')} notices, "
        f"{report.count('ignore')} ignored; worst answer {report.worst_answer:.3f} s, "
        f"print(1) {report.print_seconds:.3f} s, sessions {report.sessions_seconds:.3f} s"
    )
    assert report.unexpected == []
    assert report.late_replies == []  # no message answered twice or after the next one
    assert report.print_output == "1\n"
    assert report.integrity == "ok"
    assert report.stray_files == []
    assert outside_archives() == outside_before
    assert report.junk_archived == []
    assert report.prompts_missing == []
    assert fuzz.wire.km.is_alive()
