"""A call's tokens, read the same way from every provider, and priced by picobot.

Providers count a cached prompt differently: OpenAI (and DeepSeek, Gemini through LiteLLM)
report `prompt_tokens` with the cached part inside (`prompt_tokens_details.cached_tokens`);
Anthropic reports `input_tokens` beside `cache_read_input_tokens` and
`cache_creation_input_tokens`, which LiteLLM adds up into `prompt_tokens`. `read_usage`
turns either into one `Tokens`, whose parts add up to the prompt once, so a hit rate is
read / prompt for every provider (a rate that counted the cache twice read 100 %).

The cost is `price(tokens, rates)` with the five rates of LiteLLM's price table, not
LiteLLM's own figure: its cache maths has open bugs (streamed cache reads priced as input,
writes counted twice, 1-hour writes at the 5-minute rate). No LiteLLM import here: the
client hands in the model's price-table entry.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

LONG_PROMPT = 200_000
"""Above this many prompt tokens, a model with `*_above_200k_tokens` rates bills them all."""


@dataclass(frozen=True)
class Tokens:
    """One call's tokens. `input` is the uncached prompt; the prompt is input + read +
    writes; `reasoning` is the part of `output` the model spent thinking."""

    input: int = 0
    cache_read: int = 0
    cache_write_5m: int = 0
    cache_write_1h: int = 0
    output: int = 0
    reasoning: int = 0

    @property
    def cache_write(self) -> int:
        return self.cache_write_5m + self.cache_write_1h

    @property
    def prompt(self) -> int:
        return self.input + self.cache_read + self.cache_write

    @property
    def hit_rate(self) -> float | None:
        """The share of the prompt read from the cache (None for an empty prompt)."""
        return self.cache_read / self.prompt if self.prompt else None


def _get(obj: Any, name: str) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def _int(value: Any) -> int:
    try:
        return max(0, int(value or 0))
    except (TypeError, ValueError):
        return 0


def read_usage(usage: Any) -> Tokens:
    """The `Tokens` of a LiteLLM usage object (or its dict form), whatever the provider."""
    prompt = _int(_get(usage, "prompt_tokens"))
    output = _int(_get(usage, "completion_tokens"))
    details = _get(usage, "prompt_tokens_details")
    read = _int(_get(details, "cached_tokens")) or _int(_get(usage, "cache_read_input_tokens"))
    read = read or _int(_get(usage, "prompt_cache_hit_tokens"))  # DeepSeek's own name
    write = _int(_get(usage, "cache_creation_input_tokens")) or _int(
        _get(details, "cache_creation_tokens")
    )
    split = _get(details, "cache_creation_token_details") or _get(usage, "cache_creation")
    write_1h = min(write, _int(_get(split, "ephemeral_1h_input_tokens")))
    # LiteLLM's prompt_tokens holds the cached parts; a shape that leaves them out (the
    # prompt is smaller than they are) is taken as the uncached input alone.
    uncached = prompt - read - write if prompt >= read + write else prompt
    reasoning = _int(_get(_get(usage, "completion_tokens_details"), "reasoning_tokens"))
    return Tokens(uncached, read, write - write_1h, write_1h, output, min(reasoning, output))


@dataclass(frozen=True)
class Rates:
    """USD per token, from one model's price-table entry."""

    input: float
    output: float
    cache_read: float
    cache_write_5m: float
    cache_write_1h: float
    reasoning: float
    long: Rates | None = None
    """The rates for prompts over LONG_PROMPT tokens, when the table has them."""

    @classmethod
    def from_table(cls, info: Mapping[str, Any], suffix: str = "") -> Rates | None:
        """The rates of a `litellm.model_cost` entry (None without input/output prices).

        Where the table is silent: a cache read or write is billed as input (no discount
        claimed), a 1-hour write at twice the input price when the model has cache-write
        pricing (Anthropic's rule), reasoning as output."""

        def rate(name: str) -> float | None:
            value = info.get(f"{name}{suffix}")
            return float(value) if isinstance(value, int | float) else None

        given, out = rate("input_cost_per_token"), rate("output_cost_per_token")
        if given is None or out is None:
            return None
        write = rate("cache_creation_input_token_cost")
        write_1h = rate("cache_creation_input_token_cost_above_1hr")
        if write_1h is None:
            write_1h = 2 * given if write else (write if write is not None else given)
        return cls(
            input=given,
            output=out,
            cache_read=r if (r := rate("cache_read_input_token_cost")) is not None else given,
            cache_write_5m=write if write is not None else given,
            cache_write_1h=write_1h,
            reasoning=r if (r := rate("output_cost_per_reasoning_token")) is not None else out,
            long=None if suffix else cls.from_table(info, "_above_200k_tokens"),
        )


def price(tokens: Tokens, rates: Rates) -> float:
    """What the call cost in USD."""
    r = rates.long if rates.long is not None and tokens.prompt > LONG_PROMPT else rates
    return (
        tokens.input * r.input
        + tokens.cache_read * r.cache_read
        + tokens.cache_write_5m * r.cache_write_5m
        + tokens.cache_write_1h * r.cache_write_1h
        + (tokens.output - tokens.reasoning) * r.output
        + tokens.reasoning * r.reasoning
    )


def uncached_price(tokens: Tokens, rates: Rates) -> float:
    """What the same call would have cost with no cache at all."""
    return price(Tokens(tokens.prompt, 0, 0, 0, tokens.output, tokens.reasoning), rates)


def rewrite_price(prefix_tokens: int, ttl: str, rates: Rates) -> float:
    """What writing a cold prefix of `prefix_tokens` costs more than reading it warm."""
    write = rates.cache_write_1h if ttl == "1h" else rates.cache_write_5m
    return prefix_tokens * (write - rates.cache_read)
