"""How much time AnthropicModel adds on top of the raw anthropic SDK.

Both paths stream the same replies from the same fake Messages API on
127.0.0.1 through the same SDK client; requests alternate between them.
Reported: time to first token (first text delta) and total time per request,
medians, the adapter's added milliseconds and the ratio. Goal: <= 15 ms added
at the median.

    python benchmarks/model_overhead.py           # 100 requests per path
    python benchmarks/model_overhead.py --quick   # 5 requests per path (CI)
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any

from loom_jupyter.messages import Message
from loom_jupyter.models.anthropic import AnthropicModel
from loom_jupyter.models.base import ModelRequest, TextChunk
from loom_jupyter.models.wire import request_params
from loom_jupyter.settings import Settings
from loom_jupyter.testing import FakeAnthropic

REPLY = " ".join(f"word{i}" for i in range(80))  # about 40 text deltas
GOAL_MS = 15.0
Timing = tuple[float, float]


async def _raw(client: Any, params: dict[str, Any]) -> Timing:
    start = time.perf_counter()
    first = None
    async with client.messages.stream(**params) as stream:
        async for event in stream:
            if first is None and event.type == "content_block_delta":
                first = time.perf_counter()
        await stream.get_final_message()
    end = time.perf_counter()
    return (first or end) - start, end - start


async def _adapter(model: AnthropicModel, request: ModelRequest) -> Timing:
    start = time.perf_counter()
    first = None
    async for event in model.stream(request):
        if first is None and isinstance(event, TextChunk):
            first = time.perf_counter()
    end = time.perf_counter()
    return (first or end) - start, end - start


async def run(count: int) -> dict[str, list[Timing]]:
    import anthropic

    request = ModelRequest(
        model="claude-sonnet-5-5", system="You are terse.", messages=(Message.user_text("hello"),)
    )
    params = request_params(request)
    timings: dict[str, list[Timing]] = {"raw SDK": [], "AnthropicModel": []}
    with FakeAnthropic(responder=lambda body: {"content": [REPLY]}) as fake:
        client = anthropic.AsyncAnthropic(api_key="sk-bench", base_url=fake.base_url, max_retries=0)
        model = AnthropicModel(Settings(), client=client)
        for _ in range(min(5, count)):  # warm up connections and code paths
            await _raw(client, params)
            await _adapter(model, request)
        for _ in range(count):
            timings["raw SDK"].append(await _raw(client, params))
            timings["AnthropicModel"].append(await _adapter(model, request))
        await client.close()
    return timings


def table(timings: dict[str, list[Timing]]) -> str:
    """A plain-text table of medians, the added time and the ratio."""
    med = {name: (_median(t, 0), _median(t, 1)) for name, t in timings.items()}
    raw, ours = med["raw SDK"], med["AnthropicModel"]
    count = len(timings["raw SDK"])
    rows = [f"{'path':<16}{'n':>5}{'TTFT median ms':>17}{'total median ms':>18}"]
    rows += [f"{name:<16}{count:>5}{m[0]:>17.2f}{m[1]:>18.2f}" for name, m in med.items()]
    rows.append(f"{'added':<16}{'':>5}{ours[0] - raw[0]:>17.2f}{ours[1] - raw[1]:>18.2f}")
    rows.append(f"{'ratio':<16}{'':>5}{ours[0] / raw[0]:>17.3f}{ours[1] / raw[1]:>18.3f}")
    verdict = "met" if ours[1] - raw[1] <= GOAL_MS else "NOT met"
    rows.append(f"goal: <= {GOAL_MS:g} ms added at the median (total): {verdict}")
    return "\n".join(rows)


def _median(values: list[Timing], index: int) -> float:
    return statistics.median(v[index] for v in values) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="5 requests per path (a few seconds)")
    parser.add_argument("--count", type=int, default=100, help="requests per path")
    args = parser.parse_args()
    timings = asyncio.run(run(5 if args.quick else args.count))
    print(table(timings))


if __name__ == "__main__":
    main()
