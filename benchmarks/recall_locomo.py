"""Recall of the archive's search on LoCoMo (conversation memory retrieval).

LoCoMo: A. Maharana, D.-H. Lee, S. Tulyakov, M. Bansal, F. Barbieri, Y. Fang,
*Evaluating Very Long-Term Conversational Memory of LLM Agents*, ACL 2024
(arXiv:2402.17753). CC BY-NC 4.0: evaluation data only. It is read at run time
from ``--data`` and never copied into the repository.

Each conversation becomes one archive session; its turns are appended in order
as ``"<speaker>: <text>"`` (plus ``" [image: <caption>]"``), and every question is
searched verbatim with ``Archive.search(sid, question, limit=10)``.  R@k is the
share of a question's evidence turns found in the top k, averaged over questions.

    python benchmarks/recall_locomo.py [--data PATH] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loom_jupyter.messages import TurnDraft

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO_ROOT.parent / "shared" / "bench" / "locomo_dev.json"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
KS = (1, 5, 10)
_DIA_ID = re.compile(r"D:?(\d+):0*(\d+)")


@dataclass(frozen=True)
class DialogTurn:
    dia_id: str
    content: str


@dataclass(frozen=True)
class Question:
    text: str
    category: int
    evidence: frozenset[str]


@dataclass(frozen=True)
class Conversation:
    sample_id: str
    turns: tuple[DialogTurn, ...]
    questions: tuple[Question, ...]


def turn_content(turn: dict[str, Any]) -> str:
    """The turn as the archive stores it: speaker, text and the image caption if any."""
    content = f"{turn['speaker']}: {turn['text']}"
    if turn.get("blip_caption"):
        content += f" [image: {turn['blip_caption']}]"
    return content


def normalise_evidence(raw: list[str], known: set[str]) -> frozenset[str]:
    """Split, repair (``D:11:26``, ``D30:05``) and keep only ids that name a turn."""
    ids: set[str] = set()
    for entry in raw:
        for piece in re.split(r"[;\s]+", str(entry)):
            match = _DIA_ID.fullmatch(piece.strip())
            if match and (dia_id := f"D{match[1]}:{match[2]}") in known:
                ids.add(dia_id)
    return frozenset(ids)


def _session_numbers(conversation: dict[str, Any]) -> list[int]:
    keys = (re.fullmatch(r"session_(\d+)", key) for key in conversation)
    return sorted(int(m[1]) for m in keys if m)


def parse_sample(sample: dict[str, Any]) -> Conversation:
    """One LoCoMo sample -> its turns in order and its scorable questions."""
    conv = sample["conversation"]
    turns = tuple(
        DialogTurn(turn["dia_id"], turn_content(turn))
        for n in _session_numbers(conv)
        for turn in conv[f"session_{n}"]
    )
    known = {turn.dia_id for turn in turns}
    questions = []
    for qa in sample["qa"]:
        evidence = normalise_evidence(qa.get("evidence", []), known)
        if evidence:
            questions.append(Question(qa["question"], int(qa["category"]), evidence))
    return Conversation(sample["sample_id"], turns, tuple(questions))


def load(path: Path) -> list[Conversation]:
    with path.open(encoding="utf-8") as handle:
        return [parse_sample(sample) for sample in json.load(handle)]


@dataclass(frozen=True)
class Result:
    category: int
    recalls: tuple[float, ...]  # one per k in KS
    ms: float  # wall clock
    cpu_ms: float  # CPU of all threads: the cost without scheduler waits


def recall_at(ranked: list[str], evidence: frozenset[str], k: int) -> float:
    return len(evidence & set(ranked[:k])) / len(evidence)


async def run_conversation(archive: Any, conv: Conversation) -> list[Result]:
    sid = await archive.create_session(notebook_path=f"locomo/{conv.sample_id}.ipynb", model="none")
    dia_of: dict[int, str] = {}
    for turn in conv.turns:
        number = await archive.append_turn(sid, TurnDraft(role="user", content=turn.content))
        dia_of[number] = turn.dia_id
    results = []
    for question in conv.questions:
        start, start_cpu = time.perf_counter(), time.process_time()
        hits = await archive.search(sid, question.text, limit=max(KS))
        ms = (time.perf_counter() - start) * 1000.0
        cpu_ms = (time.process_time() - start_cpu) * 1000.0
        ranked = [dia_of[hit.turn_number] for hit in hits]
        recalls = tuple(recall_at(ranked, question.evidence, k) for k in KS)
        results.append(Result(question.category, recalls, ms, cpu_ms))
    return results


async def run(conversations: list[Conversation]) -> list[Result]:
    from loom_jupyter.archive import Archive

    results: list[Result] = []
    with tempfile.TemporaryDirectory() as tmp:
        async with Archive.open(Path(tmp) / "locomo.sqlite") as archive:
            for conv in conversations:
                results.extend(await run_conversation(archive, conv))
    return results


def _row(name: str, rows: list[Result]) -> str:
    means = [statistics.fmean(r.recalls[i] for r in rows) for i in range(len(KS))]
    cells = " | ".join(f"{m:.3f}" for m in means)
    return f"| {name} | {len(rows)} | {cells} |"


def table(results: list[Result]) -> str:
    lines = ["| category | n | R@1 | R@5 | R@10 |", "|---|---:|---:|---:|---:|"]
    for category, name in CATEGORIES.items():
        rows = [r for r in results if r.category == category]
        if rows:
            lines.append(_row(name, rows))
    lines.append(_row("**all**", results))
    lines.append("")
    for what, times in (
        ("search latency (wall clock)", [r.ms for r in results]),
        ("search CPU (all threads)", [r.cpu_ms for r in results]),
    ):
        ordered = sorted(times)
        p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
        lines.append(f"{what}: median {statistics.median(ordered):.2f} ms, p95 {p95:.2f} ms")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="locomo json file")
    parser.add_argument("--quick", action="store_true", help="first conversation only (CI)")
    args = parser.parse_args(argv)
    if not args.data.is_file():
        raise SystemExit(f"LoCoMo data not found at {args.data}; pass --data PATH")
    conversations = load(args.data)
    if args.quick:
        conversations = conversations[:1]
    questions = sum(len(c.questions) for c in conversations)
    print(f"LoCoMo recall: {len(conversations)} conversations, {questions} scorable questions")
    results = asyncio.run(run(conversations))
    print(table(results))
    print(f"load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
