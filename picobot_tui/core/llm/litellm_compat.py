"""The LiteLLM internals picobot reads, in one place.

LiteLLM exposes the cost it computed for a streamed response only on the chunk's private
`_hidden_params`, and whether the provider sent real usage only through the stream
wrapper's raw `chunks` list. Both are undocumented; tests/core/test_llm_litellm_compat.py
builds real LiteLLM objects and fails loudly if either goes away.
"""

from __future__ import annotations

from typing import Any


def response_cost(chunk: Any) -> float | None:
    """The cost LiteLLM attached to a streamed chunk, or None if it attached none."""
    hidden = getattr(chunk, "_hidden_params", None) or {}
    cost = hidden.get("response_cost") if isinstance(hidden, dict) else None
    return float(cost) if cost is not None else None


def provider_sent_usage(response: Any) -> bool:
    """LiteLLM makes up a usage estimate when the provider sends none; its raw chunk list
    tells the two apart. If that list is missing (another LiteLLM version), trust it."""
    chunks = getattr(response, "chunks", None)
    if not isinstance(chunks, list):
        return True
    return any(getattr(c, "usage", None) for c in chunks)
