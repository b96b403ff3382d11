"""The LiteLLM internals picobot reads, in one place.

LiteLLM exposes a streamed response's HTTP headers (a LiteLLM Proxy's own
`x-litellm-response-cost` among them) only on the chunk's private `_hidden_params`, and
whether the provider sent real usage only through the stream wrapper's raw `chunks` list.
Both are undocumented; tests/core/test_llm_litellm_compat.py builds real LiteLLM objects
and fails loudly if either goes away.
"""

from __future__ import annotations

from typing import Any

PROXY_COST_HEADER = "x-litellm-response-cost"
"""What a LiteLLM Proxy says the call cost (USD), by its own price table and config."""


def proxy_cost(chunk: Any) -> float | None:
    """The cost a LiteLLM Proxy in front sent in its response header, or None (no proxy,
    or a value that is not a finite, non-negative number)."""
    hidden = getattr(chunk, "_hidden_params", None)
    headers = hidden.get("additional_headers") if isinstance(hidden, dict) else None
    if not isinstance(headers, dict):
        return None
    # LiteLLM prefixes the provider's headers with `llm_provider-`.
    raw = headers.get(f"llm_provider-{PROXY_COST_HEADER}", headers.get(PROXY_COST_HEADER))
    if not isinstance(raw, str | int | float):
        return None
    try:
        cost = float(raw)
    except ValueError:
        return None
    return cost if 0 <= cost < float("inf") else None


def provider_sent_usage(response: Any) -> bool:
    """LiteLLM makes up a usage estimate when the provider sends none; its raw chunk list
    tells the two apart. If that list is missing (another LiteLLM version), trust it."""
    chunks = getattr(response, "chunks", None)
    if not isinstance(chunks, list):
        return True
    return any(getattr(c, "usage", None) for c in chunks)
