"""What tests and benchmarks check of cached requests: where the markers are, whether two
requests share their prefix byte for byte, and what the price table says a call costs
(computed here from LiteLLM's table, independently of picobot's own maths)."""

from __future__ import annotations

import json
from typing import Any

Body = dict[str, Any]


def _blocks(body: Body) -> list[tuple[str, Any]]:
    """The prompt's blocks in Anthropic's cache order: tools, system, messages."""
    out: list[tuple[str, Any]] = [("tool", t) for t in body.get("tools") or ()]
    system = body.get("system")
    if isinstance(system, str):
        system = [{"type": "text", "text": system}]
    out += [("system", b) for b in system or ()]
    for message in body.get("messages") or ():
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        out += [(message["role"], b) for b in content or ()]
    return out


def markers(body: Body) -> list[tuple[int, str]]:
    """(block index, kind) of every block carrying `cache_control`."""
    return [
        (i, kind)
        for i, (kind, block) in enumerate(_blocks(body))
        if isinstance(block, dict) and "cache_control" in block
    ]


def marker_count(body: Any) -> int:
    """How many `cache_control` keys the whole body holds, wherever they are."""
    return json.dumps(body).count('"cache_control"')


def unmarked(body: Body) -> list[str]:
    """The prompt's blocks as canonical JSON without their markers."""
    out = []
    for kind, block in _blocks(body):
        if isinstance(block, dict):
            block = {k: v for k, v in block.items() if k != "cache_control"}
        out.append(json.dumps([kind, block], sort_keys=True, ensure_ascii=False))
    return out


def shared_prefix(before: Body, after: Body) -> int:
    """How many leading blocks of `before` `after` sends byte for byte (markers aside)."""
    a, b = unmarked(before), unmarked(after)
    n = 0
    while n < len(a) and n < len(b) and a[n] == b[n]:
        n += 1
    return n


def table_price(model: str, usage: dict[str, Any]) -> float:
    """An Anthropic usage dict priced with the five rates of LiteLLM's table."""
    import litellm

    info = litellm.model_cost[model]
    split = usage.get("cache_creation") or {}
    w1h = split.get("ephemeral_1h_input_tokens", 0)
    w5m = usage.get("cache_creation_input_tokens", 0) - w1h
    return (
        usage["input_tokens"] * info["input_cost_per_token"]
        + usage.get("cache_read_input_tokens", 0) * info["cache_read_input_token_cost"]
        + w5m * info["cache_creation_input_token_cost"]
        + w1h * info["cache_creation_input_token_cost_above_1hr"]
        + usage["output_tokens"] * info["output_cost_per_token"]
    )
