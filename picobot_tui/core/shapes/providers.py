"""The one table of providers picobot knows: config entry, LiteLLM prefixes, key env var.

The settings model's `providers.*` entries must match `PROVIDER_NAMES` (a test checks it);
the client's routing and missing-key check read the derived maps below.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Provider:
    """One `providers.<name>` config entry and how LiteLLM reaches it."""

    name: str
    prefixes: tuple[str, ...]
    """LiteLLM model prefixes (`prefix/model`) routed to this entry."""
    env_var: str | None = None
    """The standard env var LiteLLM reads for the key (hosted providers only)."""
    bare: tuple[str, ...] = ()
    """Starts of bare model names LiteLLM routes here without a prefix."""
    openai_compatible: bool = False
    """Its apiBase speaks the OpenAI API, so it gets a `/v1` path if it has none."""


PROVIDERS: tuple[Provider, ...] = (
    Provider(
        "openai",
        ("openai",),
        "OPENAI_API_KEY",
        bare=("gpt-", "chatgpt", "o1", "o3", "o4"),
        openai_compatible=True,
    ),
    Provider("anthropic", ("anthropic",), "ANTHROPIC_API_KEY", bare=("claude",)),
    Provider("openrouter", ("openrouter",), "OPENROUTER_API_KEY"),
    Provider("gemini", ("gemini",), "GEMINI_API_KEY", bare=("gemini",)),
    Provider("deepseek", ("deepseek",), "DEEPSEEK_API_KEY", bare=("deepseek",)),
    Provider("groq", ("groq",), "GROQ_API_KEY"),
    Provider("ollama", ("ollama", "ollama_chat")),
    Provider("vllm", ("hosted_vllm", "vllm"), openai_compatible=True),
    Provider("custom", ("custom",), openai_compatible=True),
)

PROVIDER_NAMES: tuple[str, ...] = tuple(p.name for p in PROVIDERS)
MODEL_PREFIXES: dict[str, str] = {pre: p.name for p in PROVIDERS for pre in p.prefixes}
"""Model prefix -> providers.<name> entry."""
BARE_PREFIXES: tuple[tuple[str, str], ...] = tuple(
    (start, p.name) for p in PROVIDERS for start in p.bare
)
"""(start of a bare model name, provider), checked in order."""
PROVIDER_ENV: dict[str, str] = {p.name: p.env_var for p in PROVIDERS if p.env_var}
"""The standard env var LiteLLM reads for each hosted provider."""
OPENAI_COMPATIBLE: frozenset[str] = frozenset(p.name for p in PROVIDERS if p.openai_compatible)
