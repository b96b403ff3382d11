"""LiteLLM is imported in the background: `initialize` is answered before it has loaded,
and only the first `session/prompt` waits for it."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable

log = logging.getLogger("picobot.acp")

_after_load: list[Callable[[], None]] = []


def after_load(fn: Callable[[], None]) -> None:
    """Call `fn` once, in the loading thread, when the background import has ended (the
    entry point starts a warm server then: a cold `picobot acp` lives for hours, and its
    own import is over, so the server's does not compete with it on the CPU)."""
    _after_load.append(fn)


class Warmup:
    """Starts `load_litellm()` in a daemon thread; `wait()` awaits it (once loaded, free)."""

    def __init__(self) -> None:
        self._done = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._load, name="acp-litellm", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _load(self) -> None:
        try:
            from picobot_tui.core.llm.client import load_litellm

            load_litellm()
        except BaseException as e:  # the first model call reports it properly
            self._error = e
            log.warning("LiteLLM failed to load in the background: %s", e)
        finally:
            self._done.set()
            while _after_load:
                try:
                    _after_load.pop(0)()
                except Exception as e:  # a server that fails to start: the next call runs cold
                    log.debug("after the import: %s", e)

    @property
    def loading(self) -> bool:
        """Started and not finished yet."""
        return self._thread.is_alive()

    @property
    def ready(self) -> bool:
        return self._done.is_set()

    async def wait(self) -> None:
        if not self._done.is_set():
            await asyncio.to_thread(self._done.wait)
