"""The LiteLLM internals picobot reads, in one place.

LiteLLM exposes a streamed response's HTTP headers (a LiteLLM Proxy's own
`x-litellm-response-cost` among them) and the `usage.cost` the server sent (kept apart from
LiteLLM's own bill, which it writes over `usage.cost`) only on the chunk's private
`_hidden_params`, and whether the provider sent real usage only through the stream
wrapper's raw `chunks` list. All are undocumented; tests/core/test_llm_litellm_compat.py
builds real LiteLLM objects and fails loudly if one goes away.
"""

from __future__ import annotations

from typing import Any

PROXY_COST_HEADER = "x-litellm-response-cost"
"""What a LiteLLM Proxy says the call cost (USD), by its own price table and config."""
UPSTREAM_COST = "upstream_usage_cost"
"""Where LiteLLM keeps the `usage.cost` the server sent: the real proxy sends its figure
there on a streamed call, and no cost header (tests/headless/test_litellm_proxy_e2e.py)."""


def proxy_cost(chunk: Any) -> float | None:
    """The cost a LiteLLM Proxy in front sent: its response header (a whole response), else
    the `usage.cost` of its last streamed chunk; None without one (no proxy, or a value that
    is not a finite, non-negative number). LiteLLM's own bill is never taken for it."""
    hidden = getattr(chunk, "_hidden_params", None)
    if not isinstance(hidden, dict):
        return None
    headers = hidden.get("additional_headers")
    raw: Any = None
    if isinstance(headers, dict):  # LiteLLM prefixes the provider's headers `llm_provider-`
        raw = headers.get(f"llm_provider-{PROXY_COST_HEADER}", headers.get(PROXY_COST_HEADER))
    if raw is None:
        raw = hidden.get(UPSTREAM_COST)
    if isinstance(raw, bool) or not isinstance(raw, str | int | float):
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


def reserve_for_forking(where: str) -> bool:
    """Forbid LiteLLM's Rust extension from starting in this process (a fork server): its
    runtime threads do not survive fork(), and a native route run here first would make
    every forked child raise `ForkedAfterNativeRuntimeStarted` (LiteLLM's
    `rust_bridge/fork_guard.py`, made for gunicorn's preload). True once reserved, False
    on a LiteLLM without the extension. Raises RuntimeError if a native route already ran.
    Its children may use the extension: only this process is reserved."""
    try:
        from litellm.rust_bridge.fork_guard import reserve_process_for_forking
    except ImportError:
        return False
    reserve_process_for_forking(where)
    return True
