"""What the server imports before it forks, and the check that nothing in it runs.

The modules a cold `agent -m` and `agent --json` load, named as strings: the server sits
beside the front ends and may not import them statically (import-linter's layers), and
it needs nothing of them but their presence in sys.modules. Then LiteLLM is loaded and
configured exactly as a cold call's first model call does (`load_litellm`, which also
`gc.freeze()`s). Measured with LiteLLM 1.80 here: 3,194 modules, ~210 MB RSS, no thread,
no open fd, no event loop; LiteLLM builds two httpx clients (no connection) at import,
which is why the proxy variables are part of the server's name (place.py).
"""

from __future__ import annotations

import gc
import importlib
import threading

MODULES = (
    "picobot_tui.cli",
    "picobot_tui.config.settings",
    "picobot_tui.run.runtime",
    "picobot_tui.headless.text",
    "picobot_tui.headless.json_protocol",
    "picobot_tui.core.llm.client",
)


class ForkUnsafe(Exception):
    """Something the preload started cannot cross a fork (a thread)."""


def preload() -> int:
    """Import what a call needs; the number of modules loaded. ForkUnsafe if a thread
    was started (a fork copies only the calling thread: a lock another one held stays
    held forever in the child)."""
    for name in MODULES:
        importlib.import_module(name)
    client = importlib.import_module("picobot_tui.core.llm.client")
    client.load_litellm()
    threads = [t.name for t in threading.enumerate() if t is not threading.main_thread()]
    if threads:
        raise ForkUnsafe(f"threads running after the preload: {threads}")
    gc.collect()
    gc.freeze()  # what exists now stays out of the collector's sight: pages stay shared
    import sys

    return len(sys.modules)
