"""Which models an OpenAI-compatible server serves: `GET {apiBase}/models`, once a process.

vLLM, Ollama's `/v1`, LM Studio, llama.cpp's server and LiteLLM Proxy all answer it. With an
`apiBase` any name passes LiteLLM's routing, so a typo (`gpt-4o-mni`) used to reach the
server and come back as a provider error at call time (exit 1). Asking first turns it into
a usage error naming the server's close names (exit 2), before the first call.

The question is short (`TIMEOUT`) and never decides alone: a server that does not answer,
answers with an error or with no list, is not judged here (the call says what is wrong).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping

log = logging.getLogger("picobot.llm")

TIMEOUT = 2.0
"""Seconds for the whole question. A local server answers in milliseconds; one that does
not answer in 2 s gets its chance with the real call (requestTimeout) instead."""

_LOCK = threading.Lock()
_SERVED: dict[str, tuple[str, ...] | None] = {}


def served_models(
    api_base: str, api_key: str | None = None, headers: Mapping[str, str] | None = None
) -> tuple[str, ...] | None:
    """The model ids the server at `api_base` lists, or None when it gave no list. Asked
    once per base URL per process (later calls get the same answer)."""
    with _LOCK:
        if api_base in _SERVED:
            return _SERVED[api_base]
    import httpx

    sent = dict(headers or {})
    if api_key:
        sent.setdefault("Authorization", f"Bearer {api_key}")
    ids: tuple[str, ...] | None = None
    try:
        # The proxy settings of the environment apply, as they do to the call LiteLLM makes.
        response = httpx.get(f"{api_base.rstrip('/')}/models", headers=sent, timeout=TIMEOUT)
        if response.status_code == 200:
            data = response.json().get("data")
            if isinstance(data, list):
                ids = tuple(str(m["id"]) for m in data if isinstance(m, dict) and m.get("id"))
        else:
            log.info(
                "%s/models answered HTTP %d: names not checked", api_base, response.status_code
            )
    except (httpx.HTTPError, ValueError, AttributeError, TypeError) as e:
        log.info("%s/models gave no list (%s): names not checked", api_base, e)
    if not ids:
        ids = None
    with _LOCK:
        _SERVED[api_base] = ids
    return ids


def served_name(model: str) -> str:
    """The name LiteLLM sends for `model`: without its routing prefix (`openai/x` -> `x`)."""
    prefix, sep, rest = model.partition("/")
    if sep and prefix in ("openai", "hosted_vllm", "custom"):
        return rest
    return model


def serves(ids: tuple[str, ...], name: str) -> bool:
    """`name` is one of `ids` (Ollama's `llama3` is its `llama3:latest`)."""
    return name in ids or f"{name}:latest" in ids or name.removesuffix(":latest") in ids
