"""picobot: an LLM agent for the terminal. Importing this package loads nothing heavy.

The library API is `from picobot_tui import Agent, AgentError` (see picobot_tui.api); it is
loaded on first use, so `import picobot_tui` (and `picobot --help`) stays instant.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["Agent", "AgentError", "__version__"]

if TYPE_CHECKING:
    from picobot_tui.api import Agent, AgentError


def __getattr__(name: str) -> Any:
    # PEP 562: the API module (and through it settings, the core, LiteLLM) loads on demand.
    if name in ("Agent", "AgentError"):
        from picobot_tui import api

        return getattr(api, name)
    raise AttributeError(f"module 'picobot_tui' has no attribute {name!r}")
