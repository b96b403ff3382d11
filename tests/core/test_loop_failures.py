"""Requests counted in the trace when the model client re-sends on its own, also for the
summary call of a compaction (the main call's case is in test_loop.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from picobot_tui.core.budget import estimate_messages, estimate_text
from picobot_tui.core.llm.model import ModelRequest, ResentChunk, TextChunk, UsageChunk
from tests.core.test_compaction import BIG, is_summary_call
from tests.core.test_loop import make, run


def resending_summaries(request: ModelRequest) -> list[Any]:
    """Like a provider (usage = chars/4); every summary call was sent twice."""
    raw = estimate_messages(request.messages) + estimate_text(str(request.tools or ""))
    if is_summary_call(request):
        return [ResentChunk("sent again"), TextChunk("SUMMARY"), UsageChunk(raw, 5)]
    return [TextChunk("ok"), UsageChunk(raw, 5)]


async def test_a_summary_call_sent_twice_counts_two_requests(picobot_home: Path) -> None:
    rt, model, _ = make(default=resending_summaries, token_budget=4000)
    session = None
    for i in range(8):
        out, session = await run(rt, f"q{i} " + BIG, session)
        assert out[-1].outcome == "final"
    summaries = [r for r in model.requests if is_summary_call(r)]
    assert summaries, "no compaction happened"
    lines = (picobot_home / "data/traces/traces.jsonl").read_text().splitlines()
    traces = [json.loads(line) for line in lines]
    # Each summary call is 2 requests, each main call 1: as many llm_calls as requests.
    assert sum(t["llm_calls"] for t in traces) == len(model.requests) + len(summaries)
    assert sum(t["retries"] for t in traces) == len(summaries)
    assert rt.loop.failures.count == 0
