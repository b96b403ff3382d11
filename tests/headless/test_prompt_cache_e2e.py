"""Prompt caching end to end (issue 24): the real `picobot` against the local Anthropic
server, which caches as Anthropic does. The exact request bodies show where the markers
are and that consecutive calls share their prefix byte for byte; the server's usage is
what picobot reports, and its cost is the price table's within 1 %."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from picobot_tui.core.llm.litellm_compat import PROXY_COST_HEADER
from tests.headless.conftest import run_cli
from tests.support.anthropic_server import AnthropicTestServer
from tests.support.cache_checks import (
    marker_count,
    markers,
    shared_prefix,
    table_price,
    unmarked,
)
from tests.support.openai_server import OpenAITestServer, text_reply, tool_call_reply

pytestmark = pytest.mark.e2e

MODEL = "anthropic/claude-sonnet-4-5"
PRICED = "claude-sonnet-4-5"  # its entry in LiteLLM's price table


@pytest.fixture
def anthropic() -> Iterator[AnthropicTestServer]:
    with AnthropicTestServer() as server:
        yield server


def _home(home: Path, server: AnthropicTestServer, **defaults: Any) -> Path:
    config = {
        "agents": {"defaults": {"model": MODEL, "retryBackoff": 0.05, **defaults}},
        "providers": {"anthropic": {"apiKey": "sk-ant-test-key", "apiBase": server.url}},
    }
    if "cache" in defaults:
        config["cache"] = defaults.pop("cache")
        config["agents"]["defaults"] = {"model": MODEL, "retryBackoff": 0.05, **defaults}
    (home / "config.json").write_text(json.dumps(config))
    (home / "workspace" / "a.txt").write_text("hello from a.txt\n")
    return home


def _json_run(home: Path, *messages: str, session: str | None = None) -> list[dict[str, Any]]:
    lines = [
        json.dumps({"type": "message", "content": m, **({"session": session} if session else {})})
        for m in messages
    ]
    res = run_cli(home, "agent", "--json", input="\n".join(lines) + "\n")
    assert res.returncode == 0, res.stderr
    return [json.loads(line) for line in res.stdout.splitlines()]


def test_markers_prefix_usage_and_cost_over_three_turns(
    picobot_home: Path, anthropic: AnthropicTestServer
) -> None:
    home = _home(picobot_home, anthropic)
    anthropic.script(
        [
            tool_call_reply("read_file", {"path": "a.txt"}),
            text_reply("It says hello."),
            text_reply("Second answer."),
            text_reply("Third answer."),
        ]
    )
    events = _json_run(home, "what is in a.txt?", "and then?", "thanks")
    assert [e["outcome"] for e in events if e["type"] == "turn_finished"] == ["final"] * 3
    bodies = [r.body for r in anthropic.completions]
    assert len(bodies) == 4
    for body in bodies:
        marks = markers(body)
        assert 2 <= len(marks) <= 4 and marker_count(body) == len(marks)
        kinds = [k for _, k in marks]
        assert kinds[0] == "system"  # the system prompt, with the tools before it
        assert marks[-1][0] == len(unmarked(body)) - 1  # the newest block
        assert body["system"][0]["cache_control"] == {"type": "ephemeral"}
    for before, after in zip(bodies, bodies[1:], strict=False):
        # Within a turn and across turns: every block the earlier call sent is re-sent.
        assert shared_prefix(before, after) == len(unmarked(before))
        # The earlier call's newest block carries a marker again: the read is found.
        assert len(unmarked(before)) - 1 in [i for i, _ in markers(after)]
    # The first turn's message goes out again with the time line it was first sent with.
    first_user = bodies[0]["messages"][0]["content"][0]["text"]
    assert "[current time: " in first_user
    assert bodies[3]["messages"][0]["content"][0]["text"] == first_user

    usages = anthropic.usages
    assert usages[0]["cache_read_input_tokens"] == 0
    assert usages[0]["cache_creation_input_tokens"] > 1024
    for before, after in zip(usages, usages[1:], strict=False):
        written = before["cache_read_input_tokens"] + before["cache_creation_input_tokens"]
        assert after["cache_read_input_tokens"] == written  # all of it read
        assert after["input_tokens"] == 0  # everything up to the newest block is cached
    reported = [e for e in events if e["type"] == "usage"]
    assert len(reported) == 4
    session_read = session_prompt = 0
    total = 0.0
    for event, usage in zip(reported, usages, strict=True):
        prompt = (
            usage["input_tokens"]
            + usage["cache_read_input_tokens"]
            + usage["cache_creation_input_tokens"]
        )
        session_read += usage["cache_read_input_tokens"]
        session_prompt += prompt
        assert event["prompt_tokens"] == prompt
        assert event["cache_read_tokens"] == usage["cache_read_input_tokens"]
        assert event["cache_write_tokens"] == usage["cache_creation_input_tokens"]
        assert event["hit_rate"] == pytest.approx(usage["cache_read_input_tokens"] / prompt)
        assert event["session_hit_rate"] == pytest.approx(session_read / session_prompt)
        expected = table_price(PRICED, usage)
        assert event["cost"] == pytest.approx(expected, rel=0.01)
        total += expected
        assert event["session_cost"] == pytest.approx(total, rel=0.01)
        assert event["cache_ttl_s"] == 300
    assert reported[-1]["session_saved"] > 0
    assert reported[-1]["rewrite_cost"] > 0
    # The trace carries each call's cache figures.
    traces = [
        json.loads(line) for line in (home / "data/traces/traces.jsonl").read_text().splitlines()
    ]
    calls = [c for t in traces for c in t["calls"]]
    assert [c["cache_read_tokens"] for c in calls] == [u["cache_read_input_tokens"] for u in usages]
    assert [c["cache_write_tokens"] for c in calls] == [
        u["cache_creation_input_tokens"] for u in usages
    ]
    assert traces[0]["cache_read_tokens"] == sum(u["cache_read_input_tokens"] for u in usages[:2])

    # A resumed session's first call reads what the previous process wrote.
    session = next(e["session"] for e in events if e["type"] == "turn_finished")
    # `sessions show` carries each call's figures under its answer.
    shown = run_cli(home, "sessions", "show", session)
    assert shown.returncode == 0, shown.stderr
    for usage in usages:
        assert f"{usage['cache_read_input_tokens']:,} read from cache, " in shown.stdout
        assert f"{usage['cache_creation_input_tokens']:,} written)" in shown.stdout
    anthropic.clear()
    anthropic.script([text_reply("Welcome back.")])
    res = run_cli(home, "agent", "-m", "one more", "-s", session)
    assert res.returncode == 0, res.stderr
    [resumed] = anthropic.usages
    assert resumed["cache_read_input_tokens"] == written_total(usages[-1])
    assert shared_prefix(bodies[-1], anthropic.completions[0].body) == len(unmarked(bodies[-1]))

    # Past the TTL the cache is cold: the next call writes the whole prefix again.
    anthropic.advance(301)
    anthropic.clear()
    anthropic.script([text_reply("Cold again.")])
    assert run_cli(home, "agent", "-m", "after a pause", "-s", session).returncode == 0
    [cold] = anthropic.usages
    assert cold["cache_read_input_tokens"] == 0
    assert cold["cache_creation_input_tokens"] > written_total(usages[-1])


def written_total(usage: dict[str, Any]) -> int:
    return usage["cache_read_input_tokens"] + usage["cache_creation_input_tokens"]


def test_compaction_calls_carry_no_marker_and_the_summary_gets_one(
    picobot_home: Path, anthropic: AnthropicTestServer
) -> None:
    home = _home(picobot_home, anthropic, tokenBudget=6000)
    anthropic.default = text_reply("SUMMARY-OR-ANSWER " + "z" * 400)
    big = "x" * 4000
    events = _json_run(home, *(f"q{i} {big}" for i in range(5)))
    assert any(e["type"] == "history_compressed" for e in events)
    bodies = [r.body for r in anthropic.completions]
    summaries = [b for b in bodies if "You write summaries" in json.dumps(b.get("system"))]
    assert summaries, "no summary call was made"
    for body in summaries:
        assert marker_count(body) == 0
    after = bodies[bodies.index(summaries[0]) + 1]
    marked_texts = [
        block["text"]
        for message in after["messages"]
        for block in message["content"]
        if isinstance(block, dict) and "cache_control" in block and "text" in block
    ]
    assert any(t.startswith("[Compacted context]") for t in marked_texts)
    assert marker_count(after) <= 4


def test_no_markers_when_off_or_when_no_call_can_follow(
    picobot_home: Path, anthropic: AnthropicTestServer
) -> None:
    home = _home(picobot_home, anthropic, cache={"enabled": False})
    _json_run(home, "hi", "again")
    assert len(anthropic.completions) == 2
    assert all(marker_count(r.body) == 0 for r in anthropic.completions)
    assert all(u["cache_creation_input_tokens"] == 0 for u in anthropic.usages)
    # `-m` with one model call allowed: no later call reads this prompt, none is written.
    anthropic.clear()
    _home(picobot_home, anthropic, maxToolIterations=1)
    assert run_cli(home, "agent", "-m", "one shot").returncode == 0
    assert marker_count(anthropic.completions[0].body) == 0


def test_an_hour_ttl_is_sent_and_written_as_such(
    picobot_home: Path, anthropic: AnthropicTestServer
) -> None:
    home = _home(picobot_home, anthropic, cache={"ttl": "1h"})
    events = _json_run(home, "hi", "again")
    for request in anthropic.completions:
        assert {json.dumps(m) for m in _all_markers(request.body)} == {
            json.dumps({"type": "ephemeral", "ttl": "1h"})
        }
    first, second = anthropic.usages
    assert first["cache_creation"]["ephemeral_1h_input_tokens"] > 0
    assert first["cache_creation"]["ephemeral_5m_input_tokens"] == 0
    usage = [e for e in events if e["type"] == "usage"]
    assert usage[0]["cost"] == pytest.approx(table_price(PRICED, first), rel=0.01)
    assert usage[0]["cache_ttl_s"] == 3600
    anthropic.advance(3000)  # 50 minutes: still warm
    anthropic.clear()
    assert run_cli(home, "agent", "-m", "later", "-s", "latest").returncode == 0
    assert anthropic.usages[0]["cache_read_input_tokens"] == written_total(second)


def _all_markers(value: Any) -> list[Any]:
    if isinstance(value, dict):
        found = [value["cache_control"]] if "cache_control" in value else []
        return found + [m for v in value.values() for m in _all_markers(v)]
    if isinstance(value, list):
        return [m for v in value for m in _all_markers(v)]
    return []


def test_openai_cached_tokens_are_read_priced_and_a_proxy_cost_wins(
    picobot_home: Path, llm_server: OpenAITestServer
) -> None:
    """OpenAI caches by itself and counts the cached part inside prompt_tokens: no markers
    are sent, the cached part is priced at its rate, and the hit rate is read / prompt
    (not 100 %). A LiteLLM Proxy's x-litellm-response-cost is taken as it is."""
    import litellm

    config = {
        "agents": {"defaults": {"model": "openai/gpt-4o-mini", "retryBackoff": 0.05}},
        "providers": {"openai": {"apiKey": "sk-test-openai", "apiBase": llm_server.url}},
    }
    (picobot_home / "config.json").write_text(json.dumps(config))
    llm_server.models = ["gpt-4o-mini"]  # what picobot asks the server before the call
    cached = replace(text_reply("one"), usage=(3000, 40), cached=2048)
    proxied = replace(
        text_reply("two"), usage=(3100, 40), cached=2944, headers=((PROXY_COST_HEADER, "0.5"),)
    )
    llm_server.script([cached, proxied])
    events = _json_run(picobot_home, "hi", "again")
    assert all(marker_count(r.body) == 0 for r in llm_server.completions)
    first, second = [e for e in events if e["type"] == "usage"]
    info = litellm.model_cost["gpt-4o-mini"]
    expected = (
        (3000 - 2048) * info["input_cost_per_token"]
        + 2048 * info["cache_read_input_token_cost"]
        + 40 * info["output_cost_per_token"]
    )
    assert first["cost"] == pytest.approx(expected, rel=0.01)
    assert (first["prompt_tokens"], first["cache_read_tokens"]) == (3000, 2048)
    assert first["hit_rate"] == pytest.approx(2048 / 3000)
    assert first["session_saved"] == pytest.approx(
        2048 * (info["input_cost_per_token"] - info["cache_read_input_token_cost"]), rel=0.01
    )
    assert first["cache_ttl_s"] == 0  # no marker: picobot knows no TTL to count down
    assert second["cost"] == 0.5
    assert second["session_cost"] == pytest.approx(expected + 0.5)
    assert second["session_hit_rate"] == pytest.approx((2048 + 2944) / 6100)
