"""Retries of a model call: what follows a failed attempt (a wait, or the error that ends
the call), and the count of requests a client sent again on its own."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any

from picobot_tui.core.events import ErrorEvent, Retrying
from picobot_tui.core.llm.model import LLMError, ModelClient, ModelRequest, ResentChunk
from picobot_tui.core.settings import AgentDefaults

# The loop's logger: these lines belong to the turn's log.
log = logging.getLogger("picobot.loop")


def after_failure(e: LLMError, failures: int, d: AgentDefaults) -> Retrying | ErrorEvent:
    """What follows the `failures`-th failed attempt of one call: a Retrying (wait its
    `delay_s`, then send the request again) or the ErrorEvent that ends the call."""
    delay = e.retry_after if e.retry_after is not None else d.retry_backoff * (2 ** (failures - 1))
    retry = e.transient and failures <= d.max_retries
    if retry and e.retry_after is not None and e.retry_after > d.max_retry_wait:
        log.error("%s error asks for a %.0f s wait: not retried", e.kind, delay)
        return ErrorEvent(*_wait_too_long(e, e.retry_after, d.max_retry_wait))
    if retry:
        log.warning("%s error, retrying in %.1f s: %s", e.kind, delay, e.message)
        return Retrying(failures, d.max_retries, float(delay), e.kind, e.message)
    log.error("model call failed (%s): %s", e.kind, e.message)
    message = e.message
    if e.transient and failures > 1:
        message = f"{e.message} (gave up after {failures} failed attempts)"
    return ErrorEvent(message, e.kind, e.hint)


def _wait_too_long(e: LLMError, wait: float, limit: float) -> tuple[str, str, str]:
    """The ErrorEvent fields of a call whose provider asks for a longer wait than
    maxRetryWait: it fails at once, naming the wait."""
    base = e.message.rsplit(" — ", 1)[0].rstrip(".")
    told = f"{wait:,.0f} s" + (f" (~{wait / 3600:.1f} h)" if wait >= 3600 else "")
    message = (
        f"{base} — the provider asks to wait {told} before a retry, longer than "
        f"agents.defaults.maxRetryWait ({limit:g} s), so picobot did not wait."
    )
    hint = f"Try again in {told}, or raise agents.defaults.maxRetryWait to wait for it."
    return message, e.kind, hint


class CountResent:
    """A model client passing chunks through, counting the requests it sent again."""

    def __init__(self, model: ModelClient) -> None:
        self.model = model
        self.resent = 0

    async def stream(self, request: ModelRequest) -> AsyncIterator[Any]:
        """The wrapped client's chunks, unchanged."""
        async for chunk in self.model.stream(request):
            if isinstance(chunk, ResentChunk):
                self.resent += 1
            yield chunk

    def context_window(self, model: str) -> int | None:
        """The wrapped client's answer."""
        return self.model.context_window(model)
