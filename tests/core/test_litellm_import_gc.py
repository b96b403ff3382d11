"""`load_litellm()` pauses the garbage collector for LiteLLM's import (the collections it
would trigger are wasted work) and leaves it as it found it, even when the import fails."""

from __future__ import annotations

import gc
from types import ModuleType

import pytest

from picobot_tui.core.llm import client


@pytest.mark.parametrize("enabled", [True, False])
def test_the_import_runs_with_the_collector_paused_and_leaves_it_as_it_was(
    monkeypatch: pytest.MonkeyPatch, enabled: bool
) -> None:
    seen: list[bool] = []

    def fake_import() -> ModuleType:
        seen.append(gc.isenabled())
        return ModuleType("litellm")

    monkeypatch.setattr(client, "_LITELLM", None)
    monkeypatch.setattr(client, "_import_litellm", fake_import)
    (gc.enable if enabled else gc.disable)()
    try:
        assert client.load_litellm().__name__ == "litellm"
        assert seen == [False]
        assert gc.isenabled() is enabled
    finally:
        gc.enable()


def test_a_failed_import_turns_the_collector_back_on(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken() -> ModuleType:
        raise ImportError("no litellm")

    monkeypatch.setattr(client, "_LITELLM", None)
    monkeypatch.setattr(client, "_import_litellm", broken)
    assert gc.isenabled()
    with pytest.raises(ImportError):
        client.load_litellm()
    assert gc.isenabled()
    assert client._LITELLM is None
