"""benchmarks/recall_locomo.py on a made-up conversation (no LoCoMo data in tests)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from types import ModuleType

    from loom_jupyter.archive import Archive

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmarks" / "recall_locomo.py"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("recall_locomo", BENCHMARK)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["recall_locomo"] = module
    spec.loader.exec_module(module)
    return module


def _sample() -> dict[str, Any]:
    """A tiny conversation in the benchmark's format, written for this test."""
    return {
        "sample_id": "toy-1",
        "conversation": {
            "speaker_a": "Ana",
            "speaker_b": "Ben",
            "session_1_date_time": "9:00 am on 1 March, 2024",
            "session_1": [
                {"speaker": "Ana", "dia_id": "D1:1", "text": "I adopted a grey cat."},
                {
                    "speaker": "Ben",
                    "dia_id": "D1:2",
                    "text": "Lovely! Mine is a parrot.",
                    "blip_caption": "a photo of a green parrot",
                },
            ],
            "session_2_date_time": "9:00 am on 8 March, 2024",
            "session_2": [
                {"speaker": "Ana", "dia_id": "D2:1", "text": "The cat learned to open doors."},
            ],
            "session_3_date_time": "a session with no turns",
        },
        "qa": [
            {"question": "What pet did Ana adopt?", "evidence": ["D1:1"], "category": 4},
            {"question": "What can the cat do?", "evidence": ["D2:01; D1:1"], "category": 1},
            {"question": "x", "evidence": ["D:2:1", "D", "D9:9"], "category": 2},
            {"question": "Nothing here", "evidence": [], "category": 3},
            {"question": "Only bad ids", "evidence": ["D7:1"], "category": 5},
        ],
    }


def test_turns_and_evidence_are_normalised(bench: ModuleType) -> None:
    conv = bench.parse_sample(_sample())
    assert [t.dia_id for t in conv.turns] == ["D1:1", "D1:2", "D2:1"]
    assert (
        conv.turns[1].content == "Ben: Lovely! Mine is a parrot. [image: a photo of a green parrot]"
    )
    assert [q.evidence for q in conv.questions] == [
        frozenset({"D1:1"}),
        frozenset({"D2:1", "D1:1"}),
        frozenset({"D2:1"}),
    ]
    known = {"D1:1", "D9:1", "D4:4", "D4:6", "D30:5"}
    assert bench.normalise_evidence(["D9:1 D4:4 D4:6", "D30:05"], known) == {
        "D9:1",
        "D4:4",
        "D4:6",
        "D30:5",
    }


async def test_run_conversation_scores_hits_by_dia_id(bench: ModuleType, archive: Archive) -> None:
    conv = bench.parse_sample(_sample())
    results = await bench.run_conversation(archive, conv)
    assert len(results) == 3
    assert results[0].recalls == (1.0, 1.0, 1.0)  # "adopt" finds D1:1 first
    assert all(0.0 <= r <= 1.0 for result in results for r in result.recalls)
    table = bench.table(results)
    assert "| **all** | 3 |" in table
    assert "median" in table


def test_missing_data_file_says_what_to_do(bench: ModuleType, tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="--data"):
        bench.main(["--data", str(tmp_path / "absent.json")])
