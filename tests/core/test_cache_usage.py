"""Usage read the same way from every provider's shape, priced with the table's rates, and
the breakpoints a call gets (issue 24). LiteLLM's own usage objects are built from the
real responses in tests/core/test_anthropic_server.py and the e2e tests; here the shapes
and the maths."""

from __future__ import annotations

import pytest

from picobot_tui.core.cache_plan import MAX_BREAKPOINTS, breakpoints
from picobot_tui.core.llm.cache_markers import mark, needs_markers
from picobot_tui.core.llm.usage import (
    Rates,
    Tokens,
    price,
    read_usage,
    rewrite_price,
    uncached_price,
)

SONNET = {
    "input_cost_per_token": 3e-06,
    "output_cost_per_token": 1.5e-05,
    "cache_read_input_token_cost": 3e-07,
    "cache_creation_input_token_cost": 3.75e-06,
    "cache_creation_input_token_cost_above_1hr": 6e-06,
}


def test_anthropic_through_litellm_counts_the_cache_once() -> None:
    usage = {
        "prompt_tokens": 160,  # LiteLLM: input 10 + read 100 + written 50
        "completion_tokens": 3,
        "prompt_tokens_details": {
            "cached_tokens": 100,
            "cache_creation_tokens": 50,
            "cache_creation_token_details": {"ephemeral_1h_input_tokens": 30},
        },
        "cache_creation_input_tokens": 50,
        "cache_read_input_tokens": 100,
    }
    tokens = read_usage(usage)
    assert tokens == Tokens(10, 100, 20, 30, 3, 0)
    assert tokens.prompt == 160 and tokens.hit_rate == pytest.approx(100 / 160)


def test_openai_counts_cached_inside_the_prompt() -> None:
    usage = {
        "prompt_tokens": 3000,
        "completion_tokens": 40,
        "prompt_tokens_details": {"cached_tokens": 2048},
        "completion_tokens_details": {"reasoning_tokens": 25},
    }
    assert read_usage(usage) == Tokens(952, 2048, 0, 0, 40, 25)


def test_a_shape_that_leaves_the_cache_out_of_the_prompt_is_not_counted_twice() -> None:
    # A provider whose prompt_tokens is the uncached input alone (Anthropic's raw shape).
    usage = {"prompt_tokens": 10, "cache_read_input_tokens": 100, "completion_tokens": 1}
    tokens = read_usage(usage)
    assert (tokens.input, tokens.cache_read, tokens.prompt) == (10, 100, 110)
    assert tokens.hit_rate == pytest.approx(100 / 110)  # not 100 %, not over 1


def test_deepseek_hit_tokens_and_junk_values() -> None:
    assert read_usage({"prompt_tokens": 50, "prompt_cache_hit_tokens": 40}).cache_read == 40
    assert read_usage({"prompt_tokens": "x", "completion_tokens": None}) == Tokens()


def test_price_uses_the_five_rates_and_the_anthropic_rule_for_a_missing_hour_rate() -> None:
    rates = Rates.from_table(SONNET)
    assert rates is not None
    tokens = Tokens(10, 100, 20, 30, 3, 0)
    assert price(tokens, rates) == pytest.approx(3.6e-4)  # LiteLLM's own, non-streamed
    assert uncached_price(tokens, rates) == pytest.approx(160 * 3e-6 + 3 * 1.5e-5)
    no_hour = Rates.from_table({k: v for k, v in SONNET.items() if "1hr" not in k})
    assert no_hour is not None and no_hour.cache_write_1h == pytest.approx(6e-06)
    bare = Rates.from_table({"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6})
    assert bare is not None and bare.cache_read == bare.cache_write_5m == 1e-6
    assert Rates.from_table({"output_cost_per_token": 1.0}) is None
    assert rewrite_price(1000, "5m", rates) == pytest.approx(1000 * (3.75e-06 - 3e-07))
    assert rewrite_price(1000, "1h", rates) == pytest.approx(1000 * (6e-06 - 3e-07))


def test_reasoning_and_long_prompt_rates() -> None:
    table = {
        **SONNET,
        "output_cost_per_reasoning_token": 1e-05,
        "input_cost_per_token_above_200k_tokens": 6e-06,
        "output_cost_per_token_above_200k_tokens": 2.25e-05,
    }
    rates = Rates.from_table(table)
    assert rates is not None and rates.long is not None
    assert price(Tokens(0, 0, 0, 0, 10, 4), rates) == pytest.approx(6 * 1.5e-5 + 4 * 1e-5)
    long = Tokens(250_000, 0, 0, 0, 10, 0)
    assert price(long, rates) == pytest.approx(250_000 * 6e-06 + 10 * 2.25e-05)


def _msgs(n: int, summary_at: int | None = None) -> list[dict[str, str]]:
    out = [{"role": "system", "content": "SYS"}]
    for i in range(1, n):
        role = "user" if i % 2 else "assistant"
        out.append({"role": role, "content": f"m{i}"})
    if summary_at is not None:
        out[summary_at] = {"role": "system", "content": "[Compacted context] summary"}
    return out


def test_breakpoints_system_summary_previous_and_newest_at_most_four() -> None:
    first = _msgs(4, summary_at=2)
    assert breakpoints(first) == (0, 2, 3)
    second = [*first, {"role": "assistant", "content": "a"}, {"role": "user", "content": "u"}]
    assert breakpoints(second, first) == (0, 2, 3, 5)
    assert len(breakpoints(second, first)) <= MAX_BREAKPOINTS
    changed = [second[0], {"role": "user", "content": "other"}, *second[2:]]
    assert breakpoints(changed, first) == (0, 2, 5)  # the old prefix is gone: no mark for it
    assert breakpoints([]) == ()


def test_markers_go_to_claude_providers_only_and_on_the_message() -> None:
    assert needs_markers("anthropic/claude-sonnet-4-5")
    assert needs_markers("claude-3-5-haiku-latest")
    assert needs_markers("bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0")
    assert needs_markers("vertex_ai/claude-sonnet-4-5")
    assert needs_markers("openrouter/x", provider="anthropic")
    for model in ("openai/gpt-4o-mini", "deepseek/deepseek-chat", "gemini/gemini-2.0-flash"):
        assert not needs_markers(model)
    assert not needs_markers("bedrock/amazon.nova-pro-v1:0")
    messages = _msgs(3)
    marked = mark(messages, (0, 2), "1h")
    assert marked[0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert marked[1] is messages[1] and "cache_control" not in messages[0]
    assert mark(messages, (2,), "5m")[2]["cache_control"] == {"type": "ephemeral"}
