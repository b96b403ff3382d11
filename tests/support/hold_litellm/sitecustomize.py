"""On PYTHONPATH for tests/server/test_relay.py: holds `import litellm` in a `picobot agent`
process (the TUI) until the file named by HOLD_LITELLM_UNTIL exists, so the test knows,
rather than hopes, that the TUI's first call was made before its LiteLLM was imported.
A server (`picobot server run`) and anything else imports it as usual, unless
HOLD_LITELLM_IN=server says to hold the server instead.

The wait is in the module's execution, as a slow import's time is: a finder runs under
the interpreter's global import lock, and waiting there would stop every import."""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys
import time
from types import ModuleType
from typing import Any

_GATE = os.environ.get("HOLD_LITELLM_UNTIL")
_IN = os.environ.get("HOLD_LITELLM_IN", "agent")
"""The command whose process is held: `agent` (the TUI), or `server` (`server run`)."""


class _Held(importlib.abc.Loader):
    def __init__(self, real: Any) -> None:
        self.real = real

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self.real.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        while _GATE and not os.path.exists(_GATE):
            time.sleep(0.05)
        # The real loader from here on: importlib.resources asks it for the package's
        # files (LiteLLM reads its price table that way).
        module.__loader__ = self.real
        if module.__spec__ is not None:
            module.__spec__.loader = self.real
        self.real.exec_module(module)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


class _Hold(importlib.abc.MetaPathFinder):
    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != "litellm" or sys.argv[1:2] != [_IN]:
            return None
        for finder in sys.meta_path:
            if finder is self:
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                spec.loader = _Held(spec.loader)
                return spec
        return None


if _GATE:
    sys.meta_path.insert(0, _Hold())
