"""What the server imports before it forks, and the check that nothing in it runs.

The modules a cold `agent -m`, `agent --json` and `acp` load, named as strings: the server sits
beside the front ends and may not import them statically (import-linter's layers), and
it needs nothing of them but their presence in sys.modules. LiteLLM is imported, not
configured: each call's own `load_litellm()` does that where a cold call does. Measured with LiteLLM 1.80 here: 3,194 modules, ~210 MB RSS, no thread,
no open fd, no event loop; LiteLLM builds two httpx clients (no connection) at import,
which is why the proxy variables are part of the server's name (place.py).
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import os
import threading
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

MODULES = (
    "picobot_tui.cli",
    "picobot_tui.config.settings",
    "picobot_tui.run.runtime",
    "picobot_tui.headless.text",
    "picobot_tui.headless.json_protocol",
    "picobot_tui.core.llm.client",
    "picobot_tui.acp.server",
    "picobot_tui.acp.sessions",
    "litellm",
)
"""Imported only: LiteLLM is *configured* by each call's own `load_litellm()`, at the
point a cold call does it (after the call set up its logging), so the order of those
effects is the cold one."""


class ForkUnsafe(Exception):
    """Something the preload started cannot cross a fork (a thread)."""


@contextlib.contextmanager
def recording_env_reads() -> Iterator[set[str]]:
    """The names of the environment variables read (os.environ[...], .get, os.getenv)
    while the block runs: what the imports saw, so what a client's environment must
    match (LiteLLM's constants.py alone reads ~40 at import)."""
    names: set[str] = set()
    original = os._Environ.__getitem__

    def getitem(self: Any, key: str) -> str:
        names.add(key)
        return original(self, key)

    os._Environ.__getitem__ = getitem  # type: ignore[method-assign,assignment]
    try:
        yield names
    finally:
        os._Environ.__getitem__ = original  # type: ignore[method-assign]


def os_threads() -> int:
    """Threads of this process as the kernel counts them: a native extension's threads
    (LiteLLM's Rust runtime, tokio) are invisible to `threading.enumerate()`."""
    return len(os.listdir("/proc/self/task"))


def check_fork_safe() -> None:
    """ForkUnsafe if another thread runs (a fork copies only the calling thread: a lock
    another one held stays held forever in the child)."""
    python = [t.name for t in threading.enumerate() if t is not threading.main_thread()]
    if python or os_threads() != 1:
        raise ForkUnsafe(f"{os_threads()} threads after the preload (Python's: {python})")


def import_all(names: Iterable[str]) -> int:
    """Import each module that imports (a learned name may have gone); how many did."""
    done = 0
    for name in names:
        try:
            importlib.import_module(name)
            done += 1
        except Exception:  # a learned name is a hint: it may be gone since
            continue
    return done


def env_effects(before: Mapping[str, str]) -> dict[str, str | None]:
    """What the imports changed in the environment since `before` (None: removed); e.g.
    LiteLLM sets TIKTOKEN_CACHE_DIR. A child applies these over its client's environment,
    as its cold import would have (a variable an import set after reading it is among
    the names read, so a client's value for it matched the server's)."""
    now = dict(os.environ)
    changed: dict[str, str | None] = {k: v for k, v in now.items() if before.get(k) != v}
    changed.update({k: None for k in before if k not in now})
    return changed


def preload(learned: Iterable[str] = ()) -> set[str]:
    """Import what a call needs (MODULES, then the names calls were seen to import lazily:
    learn.py); the names of the variables the imports read. ForkUnsafe if a thread runs."""
    # As load_litellm() does before its import: the string "True", or a network fetch.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    with recording_env_reads() as reads:
        for name in MODULES:
            importlib.import_module(name)
        import_all(learned)
    compat = importlib.import_module("picobot_tui.core.llm.litellm_compat")
    compat.reserve_for_forking("picobot's warm server")
    check_fork_safe()
    freeze()
    return reads


def freeze() -> None:
    """What exists now stays out of the collector's sight: its pages stay shared with the
    children (a collection writes to every object it visits)."""
    gc.collect()
    gc.freeze()
